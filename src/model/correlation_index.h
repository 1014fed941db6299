// CUDA API calls by correlation id: the call that launched a kernel, copy or memset, recorded a
// CUDA event or launched a graph. Correlation ids are unique per process, not across the processes
// (ranks) of one trace, so a lookup names the process.
#pragma once

#include <cstdint>
#include <vector>

#include "common/flat_hash.h"
#include "model/trace.h"

namespace tracedoc {

// A flat hash from id to the first call with it, calls sharing an id chained in table order: one or
// two array reads per lookup, where a binary search over millions of calls missed the cache twenty
// times.
class CorrelationIndex {
 public:
  static constexpr int32_t kNoCall = -1;

  explicit CorrelationIndex(const ApiTable& api) : api_(api) {
    ids_.reserve(api.size());
    next_.assign(api.size(), kNoCall);
    std::vector<int32_t> tail;
    for (size_t a = 0; a < api.size(); ++a) {
      const int64_t c = api.correlation[a];
      if (c == kNoValue) continue;
      const uint32_t id = ids_.id(static_cast<uint64_t>(c));
      if (id == head_.size()) {
        head_.push_back(static_cast<int32_t>(a));
        tail.push_back(static_cast<int32_t>(a));
      } else {
        next_[static_cast<size_t>(tail[id])] = static_cast<int32_t>(a);
        tail[id] = static_cast<int32_t>(a);
      }
    }
  }

  // The row of the call with this id in this process (global pid); kNoCall when there is none.
  int32_t find_in_process(int64_t correlation, int64_t global_pid) const {
    const int32_t first = first_with(correlation);
    for (int32_t a = first; a != kNoCall; a = next_[static_cast<size_t>(a)]) {
      if (global_pid_of(api_.global_tid[static_cast<size_t>(a)]) == global_pid) return a;
    }
    return kNoCall;
  }
  // The call with this id in this process; else the first call with this id (traces whose GPU
  // records name no process, or another one); else kNoCall.
  int32_t find(int64_t correlation, int64_t global_pid) const {
    const int32_t own = find_in_process(correlation, global_pid);
    return own != kNoCall ? own : first_with(correlation);
  }

 private:
  int32_t first_with(int64_t correlation) const {
    if (correlation == kNoValue) return kNoCall;
    const uint32_t id = ids_.find(static_cast<uint64_t>(correlation));
    return id == DenseIdMap::kEmpty ? kNoCall : head_[id];
  }

  const ApiTable& api_;
  DenseIdMap ids_;
  std::vector<int32_t> head_, next_;
};

}  // namespace tracedoc
