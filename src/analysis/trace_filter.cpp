#include "analysis/trace_filter.h"

#include <fmt/format.h>

namespace tracedoc {

Result<TimeWindow> parse_time_window(const std::string& text) {
  return UsageError(fmt::format("--filter-time is not implemented yet ('{}')", text));
}

Result<NvtxFilterSpec> parse_nvtx_filter(const std::string& text) {
  return UsageError(fmt::format("--filter-nvtx is not implemented yet ('{}')", text));
}

Status apply_filter(Trace& trace, const TraceFilter& filter) { return Status::Ok(); }

}  // namespace tracedoc
