// How nsys names things in its reports: kernel name variants, API names without the CUPTI
// version suffix, NVTX range tags with their domain.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>

#include "analysis/nsys_stats/time_summary.h"

namespace tracedoc::nsys_stats {

// Demangled name by default; `base` selects the short name, `mangled` the mangled name when the
// export has one (falling back to the demangled name, as nsys's kernel view does).
StrId kernel_name(const Trace& trace, size_t i, const ReportArgs& args);
// The kernel columns kernel_name reads for these arguments.
ColumnSelection kernel_name_columns(const ReportArgs& args);

// `cudaLaunchKernel_v7000` -> `cudaLaunchKernel`; only a 6-character `_vNNNN` suffix is removed,
// so `cudaGraphLaunch_v10000` stays as nsys prints it.
std::string_view strip_api_version(std::string_view name);

bool is_nvtx_range(uint16_t kind);
bool is_pushpop(uint16_t kind);
bool is_startend(uint16_t kind);

// Range tags: "<domain>:<text>" when the range belongs to a named domain of its process, else text.
class NvtxNamer {
 public:
  explicit NvtxNamer(const Trace& trace);
  // Domain name id for range i, kNoStr when none.
  StrId domain(size_t i) const;
  // The tag; `null` is set when nsys's expression would be NULL (no text at all).
  std::string tag(size_t i, bool* null = nullptr) const;
  // Latest timestamp of any NVTX event: where never-closed ranges end.
  TimeNs max_timestamp() const { return max_ts_; }
  TimeNs duration(size_t i) const;

 private:
  const Trace& trace_;
  std::map<std::pair<int64_t, int64_t>, StrId> domains_;  // (pid bits, domain id) -> name
  TimeNs max_ts_ = 0;
};

}  // namespace tracedoc::nsys_stats
