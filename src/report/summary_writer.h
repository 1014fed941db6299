// Renders TraceSummary: a one-screen text overview for people, and a JSON document with every
// figure (exact integers, ns and bytes) for scripts and CI.
#pragma once

#include <string>
#include <vector>

#include "analysis/summary.h"
#include "common/human_units.h"  // human_duration, human_bytes

namespace tracedoc {

// Human text, one block per trace, ~20 lines each.
std::string summary_text(const TraceSummary& summary);

// {"schema_version": 1, "summaries": [ {...}, ... ]}
std::string summary_json(const std::vector<TraceSummary>& summaries);

}  // namespace tracedoc
