// `--filter-time` and `--filter-nvtx` of nsys stats: keep the events that overlap a time window
// (events are kept whole, not clipped), optionally restricted to the process / thread of an NVTX range.
#pragma once

#include <optional>
#include <string>

#include "common/status.h"
#include "model/trace.h"

namespace tracedoc {

struct TimeWindow {
  TimeNs start = 0;
  TimeNs end = INT64_MAX;
};

// Parses "[START]/[END]" with units ns, us, ms, s, m, h, summable ("1s200ms"); a bare number is ns.
Result<TimeWindow> parse_time_window(const std::string& text);

struct NvtxFilterSpec {
  std::string range;   // range text
  std::string domain;  // empty: no domain
  int64_t index = 0;   // which instance, by start time
};
// "RANGE[@DOMAIN][/INDEX]".
Result<NvtxFilterSpec> parse_nvtx_filter(const std::string& text);

struct TraceFilter {
  std::optional<TimeWindow> window;
  std::optional<NvtxFilterSpec> nvtx;
  bool all_ranks = false;  // with nvtx: do not restrict to the range's process/thread
};

// Applies the filter in place. Fails when the NVTX range is not found.
Status apply_filter(Trace& trace, const TraceFilter& filter);

}  // namespace tracedoc
