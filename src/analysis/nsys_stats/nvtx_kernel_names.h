// Kernel names as nsys's kernel view shows them (kernel_helper.create_kernel_view, the
// CUPTI_ACTIVITY_KIND_KERNEL_NAMED view behind every kernel report), including the `nvtx-name`
// report argument, which prefixes the name with "<innermost NVTX range>/".
//
// The NVTX range of a kernel is found from the CUDA API call that launched it (same process, same
// correlation id). Candidates are the NVTX push/pop and start/end ranges that started and ended on
// the call's thread (NVTX_EVENTS.endGlobalTid IS NULL) and contain the call: range.start <=
// call.start and range.end >= call.end, where a never-closed range ends at the latest NVTX range
// timestamp. The innermost is the one that started last. Its name is the registered string or the
// inline text, without the domain. A kernel whose call lies in no range, or whose innermost range
// has no name, keeps its plain name (nsys's COALESCE(nvtxName || '/' || kernelName, kernelName)).
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "analysis/nsys_stats/naming.h"
#include "analysis/nsys_stats/time_summary.h"
#include "analysis/result.h"
#include "model/string_pool.h"
#include "model/trace.h"

namespace tracedoc::nsys_stats {

// Which CUDA API call(s) launched each kernel, joined as nsys joins them:
// kernel.globalPid == (call.globalTid & 0xFFFFFFFFFF000000) AND kernel.correlationId == call.correlationId.
// Built once in O(kernels + calls) with a hash table on (process, correlation id).
class KernelLaunchJoin {
 public:
  // `calls`: trace.api, or for nvtx-name the API table as it was before any filter.
  KernelLaunchJoin(const Trace& trace, const ApiTable& calls);
  explicit KernelLaunchJoin(const Trace& trace) : KernelLaunchJoin(trace, trace.api) {}
  // API rows that launched kernel `kernel`, ascending: the order in which SQLite's automatic index
  // on correlationId hands them out. Usually one row, none for kernels without a recorded call.
  std::span<const uint32_t> calls_of(size_t kernel) const {
    return {calls_.data() + first_[kernel], first_[kernel + 1] - first_[kernel]};
  }

 private:
  std::vector<size_t> first_;  // per kernel, its calls are calls_[first_[k], first_[k + 1])
  std::vector<uint32_t> calls_;
};

// Per kernel: the trace string id of the name of the innermost NVTX range around its launch,
// kNoStr when there is none or it has no name.
std::vector<StrId> innermost_launch_range_names(const Trace& trace, const KernelLaunchJoin& launches);

// NsysTables bits a kernel report needs beyond its own ReportDef::tables for these arguments:
// nvtx-name also reads the NVTX ranges and the CUDA API calls. Whoever loads a trace for a report
// must add them, or nvtx-name finds no range and leaves every name plain.
uint32_t kernel_name_tables(const ReportArgs& args);

// The name every kernel report shows for each kernel, for one report run.
class KernelNames {
 public:
  // Honors `base`, `mangled` and `nvtx-name`. With `nvtx-name`, fails with NoData (nsys's SKIPPED
  // message) when the trace has no NVTX_EVENTS or no CUDA API table, as nsys does. `launches`: a
  // join the caller has built anyway (else nvtx-name builds its own).
  static Result<KernelNames> make(const Trace& trace, const ReportArgs& args,
                                  const KernelLaunchJoin* launches = nullptr);

  // Name id of kernel `kernel`: equal ids <=> equal texts; kNoStr for SQL NULL.
  StrId id(size_t kernel) const { return prefixed_ ? ids_[kernel] : kernel_name(*trace_, kernel, *args_); }
  std::string_view text(StrId id) const { return prefixed_ ? pool_.get(id) : trace_->str(id); }
  // Every id is below this bound: size per-name caches with it (plus one slot for kNoStr).
  size_t id_bound() const { return prefixed_ ? pool_.size() : trace_->strings.size(); }
  // The name as a report cell. Only the trace's own strings are `stable`: composed names live as
  // long as this object, so sinks copy them.
  Cell cell(StrId id) const {
    if (id == kNoStr) return Cell::null();
    return prefixed_ ? Cell::text(pool_.get(id)) : Cell::pooled(trace_->str(id));
  }

 private:
  KernelNames(const Trace& trace, const ReportArgs& args) : trace_(&trace), args_(&args) {}
  void compose_prefixed_names(const KernelLaunchJoin& launches);

  const Trace* trace_;
  const ReportArgs* args_;
  bool prefixed_ = false;
  // With nvtx-name every name (prefixed or not) is interned here, so that a plain name and a
  // composed one with the same text share an id.
  StringPool pool_;
  std::vector<StrId> ids_;  // per kernel, into pool_
};

}  // namespace tracedoc::nsys_stats
