// Nsight Compute launches matched to the kernels of a timeline (an nsys export or PyTorch trace of the
// same program). ncu replays each kernel in a run of its own, so nothing but the kernel itself ties
// the two: ids (ncu's API call id, the timeline's correlation id) come from different runs. A launch
// matches by kernel identity, the mangled name where both sides have it, else the demangled name
// with its spacing normalised, and by grid and block; then in order: the k-th ncu launch of an
// identity is the k-th kernel of that identity on the timeline, by start time. Launches that find
// no kernel stay unmatched and are reported, never dropped.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "model/ncu_report.h"
#include "model/trace.h"

namespace tracedoc {

struct NcuLaunchRef {
  int32_t report = -1;  // index into Trace::ncu_reports; -1: none
  int32_t result = -1;  // index into that report's results
  explicit operator bool() const { return report >= 0; }
};

struct NcuJoin {
  // Per report, per result: the kernel row it matched, -1 when none.
  std::vector<std::vector<int64_t>> kernel_of;
  // Per kernel row: the launch that matched it (empty without reports).
  std::vector<NcuLaunchRef> launch_of;
  // Per kernel row: the launch whose answers stand for it: the one that matched it, else the first
  // launch matched to an instance of the same identity (ncu profiles a few launches of a kernel that
  // runs thousands of times; one result speaks for them all). Empty without reports.
  std::vector<NcuLaunchRef> answered_by;
  size_t launches = 0, matched = 0;
};

NcuJoin join_ncu(const Trace& trace);

// Each kernel name's launch, from `per_row` (launch_of or answered_by): that of its first row (in row
// order) that has one. One launch stands for every instance of a name in the name-level tables.
std::map<std::string_view, NcuLaunchRef> launch_by_name(const Trace& trace, const std::vector<NcuLaunchRef>& per_row);

// A demangled name without its spacing ("f(double const *)" and "f(double const*)" agree).
std::string normalised_kernel_name(std::string_view demangled);

}  // namespace tracedoc
