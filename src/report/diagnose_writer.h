// Renders diagnoses: `column` text for a terminal, `json` for scripts and CI (schema_version 1,
// documented in docs/diagnose.md), `markdown` for a pull-request comment.
#pragma once

#include <string>
#include <vector>

#include "diagnose/engine.h"

namespace tracedoc {

std::string diagnose_text(const std::vector<diagnose::Diagnosis>& diagnoses);
std::string diagnose_json(const std::vector<diagnose::Diagnosis>& diagnoses);
std::string diagnose_markdown(const std::vector<diagnose::Diagnosis>& diagnoses);

// The rules with their parameters and defaults (`tracedoc diagnose --list-rules`).
std::string rules_text();

}  // namespace tracedoc
