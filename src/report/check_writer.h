// Renders a budget check (`tracedoc check`): `column` text for a CI log (one line per check:
// PASS/FAIL, check, actual, limit, what was measured), `json` for scripts (schema_version 1,
// documented in docs/check.md), `markdown` for a pull-request comment.
#pragma once

#include <string>

#include "budget/evaluate.h"

namespace tracedoc {

std::string check_text(const budget::CheckReport& report);
std::string check_json(const budget::CheckReport& report);
std::string check_markdown(const budget::CheckReport& report);

}  // namespace tracedoc
