// Renders a before/after comparison (`tracedoc diff`): `column` text for a terminal or CI log,
// `csv` rows for scripts (one table, a Kind column per section), `json` (schema_version 1,
// docs/diff.md) and `markdown` for a pull-request comment.
#pragma once

#include <string>

#include "analysis/result.h"
#include "compare/trace_diff.h"

namespace tracedoc {

struct DiffTextOptions {
  size_t top = 10;   // changed items listed per kind (column, markdown)
  bool all = false;  // list every item, unchanged ones too
};

std::string diff_text(const compare::TraceDiff& diff, const DiffTextOptions& options);
std::string diff_markdown(const compare::TraceDiff& diff, const DiffTextOptions& options);
std::string diff_json(const compare::TraceDiff& diff);

// The CSV rows: kind `step` (the step time), `time` (its parts, and `total`), `kernel`, `operator`,
// `range`, `finding`; columns in docs/diff.md.
void diff_rows(const compare::TraceDiff& diff, RowSink& sink);

}  // namespace tracedoc
