// `--filter-time`, `--filter-nvtx` and `--all-ranks` of `tracedoc stats`, with the semantics of
// `nsys stats` 2023.4.4 (the CLI's time parser plus nsysstats.py's filter_time_range):
//
//  * An event is kept when it overlaps the window [start, end): it starts inside it, ends inside it,
//    or spans it. Kept events are whole, never clipped. A NULL end (a never-closed NVTX range, a
//    mark, a domain creation) only counts through its start.
//  * Only tables whose events have both a start and an end are filtered (nsys shadows exactly those
//    with TEMP VIEWs); CUDA memory usage events and UM CPU page faults (a single timestamp) stay
//    complete.
//  * Reports read the filtered tables, joins included (cuda_kern_exec_*, nvtx_kern_sum, ...): nsys's
//    report scripts join the views. The one exception is the `nvtx-name` kernel naming
//    (kernel_helper.py), which reads main.CUPTI_ACTIVITY_KIND_RUNTIME and main.NVTX_EVENTS, i.e.
//    every CUDA API call and NVTX range, filter or not: apply_filter keeps those two tables as they
//    were (Trace::unfiltered_api / unfiltered_ranges) for it. NVTX rows also keep their export row
//    number (RangeTable::row_id), which nsys_gpu_proj_trace prints as RangeId.
//  * The NVTX filter takes its window from one instance of a range and overrides --filter-time. It
//    also keeps only the range's own thread (when the range's thread is not the process's main
//    thread, i.e. tid != pid, as nsys decides it) or else its whole process, in the tables that carry
//    a thread id; tables that carry only a process id (kernels, copies, memsets, syncs) keep the
//    range's process. `--all-ranks`, a tracedoc extension, keeps the window but every process.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>

#include "common/status.h"
#include "model/trace.h"

namespace tracedoc {

// Half-open [start, end). The defaults are what nsys uses for an omitted side (about +/-290 years).
struct TimeWindow {
  TimeNs start = std::numeric_limits<int64_t>::min();
  TimeNs end = std::numeric_limits<int64_t>::max();
};

// Parses "[START]/[END]" exactly as nsys 2023.4.4 does: each side is a sum of terms, a number
// (integer, decimal, exponent or hexadecimal form, optional sign) with an optional unit ns/nsec,
// us/usec, ms/msec, s/sec, m/min, h/hour ("1s2ms3us4ns", "2ns5us2" = 5004 ns); no unit means ns.
// A fractional term is truncated toward zero after scaling; integer terms wrap on int64 overflow
// as nsys's do. At least one side is required; START must not exceed END.
Result<TimeWindow> parse_time_window(const std::string& text);

struct NvtxFilterSpec {
  // What the range's name must equal: its text, followed by "@<domain name>" when the range
  // belongs to a named domain (nsys compares the concatenation, so names may contain '@').
  std::string name;
  int64_t index = 0;     // which instance, counted from 0 in start-time order
  std::string argument;  // the option as given, for messages
};
// "RANGE[@DOMAIN][/INDEX]". As in nsys, the text after the last '/' is an index only when it reads
// as a non-negative integer (Python int() syntax); otherwise it is part of the name.
Result<NvtxFilterSpec> parse_nvtx_filter(const std::string& text);

struct TraceFilter {
  std::optional<TimeWindow> window;
  std::optional<NvtxFilterSpec> nvtx;  // overrides `window`
  bool all_ranks = false;              // with nvtx: do not restrict to the range's process/thread
};

// The filter of --filter-time TIME, --filter-nvtx NVTX and --all-ranks (empty strings: not given).
Result<TraceFilter> parse_filter(const std::string& time, const std::string& nvtx, bool all_ranks);

// Applies the filter in place. Fails (UsageError) when the NVTX range is not found, or when the
// instance found was never closed and so defines no window.
Status apply_filter(Trace& trace, const TraceFilter& filter);

}  // namespace tracedoc
