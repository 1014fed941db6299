// Renders TraceSummary: a one-screen text overview for people, and a JSON document with every
// figure (exact integers, ns and bytes) for scripts and CI.
#pragma once

#include <string>
#include <vector>

#include "analysis/summary.h"

namespace tracedoc {

// Human text, one block per trace, ~20 lines each.
std::string summary_text(const TraceSummary& summary);

// {"schema_version": 1, "summaries": [ {...}, ... ]}
std::string summary_json(const std::vector<TraceSummary>& summaries);

// "96.3 ms", "27.4 µs", "812 ns", "1.25 s": three significant digits, for text output.
std::string human_duration(int64_t ns);
// "98.7 MB" (10^6 B, as nsys), "512 B".
std::string human_bytes(int64_t bytes);

}  // namespace tracedoc
