#include "analysis/nsys_stats/nvtx_kernel_names.h"

#include <algorithm>
#include <string>

#include "common/flat_hash.h"
#include "model/table_set.h"

namespace tracedoc::nsys_stats {

namespace {

// The calls of one process and correlation id, as a chain of API rows in ascending order.
class CallChains {
 public:
  explicit CallChains(const ApiTable& api) : api_(api), next_(api.size(), kNone) {
    size_t slots = 64;
    while (slots < 2 * api.size()) slots *= 2;
    head_.assign(slots, kNone);
    tail_.assign(slots, kNone);
    for (uint32_t row = 0; row < api.size(); ++row) {
      if (api.correlation[row] == kNoValue) continue;  // NULL never joins
      const size_t slot = find(global_pid_of(api.global_tid[row]), api.correlation[row]);
      if (head_[slot] == kNone)
        head_[slot] = row;
      else
        next_[tail_[slot]] = row;
      tail_[slot] = row;
    }
  }
  // First API row of (global_pid, correlation), kNone when there is none; next(row) walks on.
  uint32_t first(int64_t global_pid, int64_t correlation) const { return head_[find(global_pid, correlation)]; }
  uint32_t next(uint32_t row) const { return next_[row]; }
  static constexpr uint32_t kNone = UINT32_MAX;

 private:
  // The slot holding the chain of the key, or the empty slot where it would go (open addressing,
  // keys compared exactly through the chain's first row).
  size_t find(int64_t global_pid, int64_t correlation) const {
    const size_t mask = head_.size() - 1;
    size_t i =
        mix64(static_cast<uint64_t>(global_pid) * 0x9E3779B97F4A7C15ULL ^ static_cast<uint64_t>(correlation)) & mask;
    for (;; i = (i + 1) & mask) {
      const uint32_t h = head_[i];
      if (h == kNone) return i;
      if (api_.correlation[h] == correlation && global_pid_of(api_.global_tid[h]) == global_pid) return i;
    }
  }

  const ApiTable& api_;
  std::vector<uint32_t> head_, tail_, next_;
};

}  // namespace

KernelLaunchJoin::KernelLaunchJoin(const Trace& trace, const ApiTable& calls) {
  const auto& k = trace.kernels;
  const CallChains chains(calls);
  first_.reserve(k.size() + 1);
  calls_.reserve(k.size());
  for (size_t i = 0; i < k.size(); ++i) {
    first_.push_back(calls_.size());
    if (k.correlation[i] == kNoValue) continue;
    for (uint32_t row = chains.first(k.global_pid[i], k.correlation[i]); row != CallChains::kNone;
         row = chains.next(row)) {
      calls_.push_back(row);
    }
  }
  first_.push_back(calls_.size());
}

namespace {

// nsys's NVTX_EVENTS_MINMAXTS.max: max(max(start), max(end)) over all NVTX ranges, whatever thread
// ended them. SQL NULL (kNoTime) when there is no range or no range has an end; never-closed
// ranges then have a NULL end and contain nothing.
TimeNs latest_range_timestamp(const RangeTable& r) {
  TimeNs max_start = kNoTime, max_end = kNoTime;
  for (size_t i = 0; i < r.size(); ++i) {
    if (!is_nvtx_range(r.kind[i])) continue;
    if (r.start[i] != kNoTime) max_start = std::max(max_start, r.start[i]);
    if (r.end[i] != kNoTime) max_end = std::max(max_end, r.end[i]);
  }
  if (max_start == kNoTime || max_end == kNoTime) return kNoTime;
  return std::max(max_start, max_end);
}

// The candidate ranges grouped by thread and ordered by (start, row descending) within each
// thread, with a max-segment-tree over their ends. For a call, the ranges of its thread that start
// no later than the call form a prefix of the thread's slice; the innermost container is the last
// position in that prefix whose end reaches the call's end. Equal starts put the lowest row last,
// so it wins: nsys's max() keeps the first row it meets among equal maxima, and its R-tree hands
// out rows in insertion (row) order (checked with nsys on the edge-case golden export).
class ContainerIndex {
 public:
  explicit ContainerIndex(const RangeTable& r) {
    const TimeNs open_end = latest_range_timestamp(r);
    // Bucket by thread first (a counting sort: threads are few, ranges are millions), then sort
    // each thread's ranges, which exports mostly write in start order already.
    DenseIdMap thread_ids;
    std::vector<uint32_t> thread_of(r.size(), kSkip);
    std::vector<size_t> thread_count;
    int64_t last_tid = 0;
    uint32_t last_thread = kSkip;
    for (uint32_t i = 0; i < r.size(); ++i) {
      if (!is_nvtx_range(r.kind[i]) || r.end_global_tid[i] != kNoValue) continue;
      const TimeNs end = r.end[i] == kNoTime ? open_end : r.end[i];
      if (r.start[i] == kNoTime || end == kNoTime) continue;  // every comparison with NULL fails
      if (last_thread == kSkip || r.global_tid[i] != last_tid) {
        last_tid = r.global_tid[i];
        last_thread = thread_ids.id(static_cast<uint64_t>(last_tid));
        if (last_thread == thread_count.size()) thread_count.push_back(0);
      }
      thread_of[i] = last_thread;
      ++thread_count[last_thread];
    }
    // Threads in global-tid order, each with its slice [begin, begin + count).
    std::vector<uint32_t> by_tid(thread_count.size());
    for (uint32_t t = 0; t < by_tid.size(); ++t) by_tid[t] = t;
    std::sort(by_tid.begin(), by_tid.end(), [&](uint32_t x, uint32_t y) {
      return static_cast<int64_t>(thread_ids.key(x)) < static_cast<int64_t>(thread_ids.key(y));
    });
    std::vector<size_t> cursor(thread_count.size());
    size_t n = 0;
    for (uint32_t t : by_tid) {
      threads_.push_back({static_cast<int64_t>(thread_ids.key(t)), n, n + thread_count[t]});
      cursor[t] = n;
      n += thread_count[t];
    }
    row_.resize(n);
    for (uint32_t i = 0; i < r.size(); ++i) {
      if (thread_of[i] != kSkip) row_[cursor[thread_of[i]]++] = i;
    }
    auto before = [&](uint32_t x, uint32_t y) { return r.start[x] != r.start[y] ? r.start[x] < r.start[y] : x > y; };
    for (const Slice& t : threads_) {
      auto first = row_.begin() + static_cast<std::ptrdiff_t>(t.begin);
      auto last = row_.begin() + static_cast<std::ptrdiff_t>(t.end);
      if (!std::is_sorted(first, last, before)) std::sort(first, last, before);
    }
    start_.resize(n);
    while (leaf_base_ < n) leaf_base_ *= 2;
    max_end_.assign(2 * leaf_base_, kNoTime);
    for (size_t p = 0; p < n; ++p) {
      const uint32_t i = row_[p];
      start_[p] = r.start[i];
      max_end_[leaf_base_ + p] = r.end[i] == kNoTime ? open_end : r.end[i];
    }
    for (size_t node = leaf_base_ - 1; node >= 1; --node) {
      max_end_[node] = std::max(max_end_[2 * node], max_end_[2 * node + 1]);
    }
  }

  // Row (in trace.ranges) of the innermost range of thread `tid` containing [start, end], or -1.
  int64_t innermost(int64_t tid, TimeNs start, TimeNs end) const {
    if (start == kNoTime || end == kNoTime) return -1;
    auto t =
        std::lower_bound(threads_.begin(), threads_.end(), tid, [](const Slice& s, int64_t v) { return s.tid < v; });
    if (t == threads_.end() || t->tid != tid) return -1;
    const auto first = start_.begin() + static_cast<std::ptrdiff_t>(t->begin);
    const auto past = static_cast<size_t>(
        std::upper_bound(first, start_.begin() + static_cast<std::ptrdiff_t>(t->end), start) - start_.begin());
    if (past == t->begin) return -1;
    const int64_t p = last_reaching(1, 0, leaf_base_ - 1, t->begin, past - 1, end);
    return p < 0 ? int64_t{-1} : int64_t{row_[static_cast<size_t>(p)]};
  }

 private:
  static constexpr uint32_t kSkip = UINT32_MAX;
  struct Slice {
    int64_t tid;
    size_t begin, end;
  };

  // Last position in [lo, hi] (within the node covering [node_lo, node_hi]) whose end >= `end`.
  int64_t last_reaching(size_t node, size_t node_lo, size_t node_hi, size_t lo, size_t hi, TimeNs end) const {
    if (node_hi < lo || node_lo > hi || max_end_[node] < end) return -1;
    if (node_lo == node_hi) return static_cast<int64_t>(node_lo);
    const size_t mid = node_lo + (node_hi - node_lo) / 2;
    const int64_t right = last_reaching(2 * node + 1, mid + 1, node_hi, lo, hi, end);
    return right >= 0 ? right : last_reaching(2 * node, node_lo, mid, lo, hi, end);
  }

  std::vector<Slice> threads_;   // ascending global tid
  std::vector<uint32_t> row_;    // per position: row in trace.ranges
  std::vector<TimeNs> start_;    // per position
  std::vector<TimeNs> max_end_;  // 1-based segment tree, leaves at [leaf_base_, 2 * leaf_base_)
  size_t leaf_base_ = 1;
};

}  // namespace

std::vector<StrId> innermost_launch_range_names(const Trace& trace, const KernelLaunchJoin& launches) {
  // nsys names kernels from every API call and NVTX range (main.<table>), past any filter.
  const auto& r = trace.ranges_before_filter();
  const auto& a = trace.api_before_filter();
  const ContainerIndex containers(r);
  std::vector<StrId> names(trace.kernels.size(), kNoStr);
  for (size_t k = 0; k < names.size(); ++k) {
    // Several calls can share a kernel's correlation id: the latest-starting range over all of
    // them wins, the first call (in row order) on ties, as max() keeps its first maximum.
    int64_t best = -1;
    for (uint32_t call : launches.calls_of(k)) {
      const int64_t row = containers.innermost(a.global_tid[call], a.start[call], a.end[call]);
      if (row >= 0 && (best < 0 || r.start[static_cast<size_t>(row)] > r.start[static_cast<size_t>(best)])) best = row;
    }
    if (best >= 0) names[k] = r.text[static_cast<size_t>(best)];
  }
  return names;
}

uint32_t kernel_name_tables(const ReportArgs& args) { return args.has("nvtx-name") ? kLoadRanges | kLoadApi : 0u; }

Result<KernelNames> KernelNames::make(const Trace& trace, const ReportArgs& args, const KernelLaunchJoin* launches) {
  KernelNames names(trace, args);
  if (args.has("nvtx-name")) {
    if (!trace.source.has_table("NVTX_EVENTS"))
      return no_data(trace, "does not contain NV Tools Extension (NVTX) data.");
    if (!trace.source.has_table("CUPTI_ACTIVITY_KIND_RUNTIME"))
      return no_data(trace, "does not contain CUDA API data.");
    // A join the caller built on the filtered API table cannot name kernels past a filter.
    if (launches && !trace.unfiltered_api)
      names.compose_prefixed_names(*launches);
    else
      names.compose_prefixed_names(KernelLaunchJoin(trace, trace.api_before_filter()));
  }
  return names;
}

void KernelNames::compose_prefixed_names(const KernelLaunchJoin& launches) {
  prefixed_ = true;
  const Trace& trace = *trace_;
  const std::vector<StrId> ranges = innermost_launch_range_names(trace, launches);
  // Plain names are interned once per trace string, composed ones once per (range, kernel) pair.
  std::vector<StrId> plain(trace.strings.size(), kNoStr);
  DenseIdMap pair_ids;
  std::vector<StrId> pair_names;
  std::string composed;
  ids_.resize(trace.kernels.size());
  for (size_t k = 0; k < ids_.size(); ++k) {
    const StrId kernel = kernel_name(trace, k, *args_);
    if (kernel == kNoStr) {
      ids_[k] = kNoStr;  // NULL || ... is NULL, and so is the COALESCE fallback
    } else if (ranges[k] == kNoStr) {
      StrId& id = plain[kernel];
      if (id == kNoStr) id = pool_.intern(trace.str(kernel));
      ids_[k] = id;
    } else {
      const uint32_t pair = pair_ids.id((uint64_t{ranges[k]} << 32) | kernel);
      if (pair == pair_names.size()) {
        composed.assign(trace.str(ranges[k]));
        composed += '/';
        composed += trace.str(kernel);
        pair_names.push_back(pool_.intern(composed));
      }
      ids_[k] = pair_names[pair];
    }
  }
}

}  // namespace tracedoc::nsys_stats
