// Attribution of GPU work to NVTX ranges, as nsys's nvtx_gpu_proj_* and nvtx_kern_sum reports do it.
//
// A GPU operation (kernel, memcpy, memset) belongs to every NVTX range that contains the CUDA API call
// which launched it: same thread, range.start <= call.start and range.end >= call.end. The call is
// found by correlation id within the operation's process. Only ranges that start and end on the same
// thread count (NVTX_EVENTS.endGlobalTid IS NULL); ranges never closed end at the latest timestamp
// of any NVTX range.
//
// nsys also builds a range tree: the parent of a range is the shortest *other* range of the same
// thread that contains it (the smallest "tightness"), ties going to the first one a scan of nsys's
// SQLite rtree meets (see sqlite_rtree.h). Identical ranges are therefore each other's parents; such
// cycles are not reachable from a root, and nsys reports no level, no parent and no stack for them
// and everything below them.
#pragma once

#include <cstdint>
#include <deque>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "model/trace.h"

namespace tracedoc::nsys_stats {

// The NVTX ranges nsys's projection reports consider (its NVTX_EVENTS_RIDX table), with a
// containment index per thread and the parent tree.
class ProjectionRanges {
 public:
  static constexpr uint32_t kNone = UINT32_MAX;
  static constexpr int32_t kUnreachable = -1;  // level of ranges in (or below) a parent cycle

  // `with_tree`: also compute parents and levels (nvtx_kern_sum does without them).
  explicit ProjectionRanges(const Trace& trace, bool with_tree = true);

  // Slots are numbered in NVTX_EVENTS row order, which is also nsys's RangeId order.
  uint32_t size() const { return static_cast<uint32_t>(row_.size()); }
  uint32_t row(uint32_t slot) const { return row_[slot]; }  // row in trace.ranges
  TimeNs start(uint32_t slot) const { return start_[slot]; }
  TimeNs end(uint32_t slot) const { return end_[slot]; }
  int64_t global_tid(uint32_t slot) const { return global_tid_[slot]; }
  bool is_pushpop(uint32_t slot) const { return pushpop_[slot] != 0; }
  // nsys's RangeId, the NVTX_EVENTS rowid. nsys exports number that table's rows 1..n without gaps
  // and the reader loads them in rowid order, so the row index gives it.
  int64_t range_id(uint32_t slot) const { return row_id_[slot]; }
  // Range names, "<domain>:<text>" or the text, as ids 0..name_count()-1: ranges with the same
  // domain and text share an id (different ids may still spell the same name). kNone where nsys's
  // name expression is NULL (no text).
  uint32_t name_id(uint32_t slot) const { return name_id_[slot]; }
  uint32_t name_count() const { return static_cast<uint32_t>(names_.size()); }
  std::string_view name_text(uint32_t id) const { return names_[id]; }
  bool name_is_null(uint32_t slot) const { return name_id_[slot] == kNone; }
  std::string_view name(uint32_t slot) const {
    return name_is_null(slot) ? std::string_view{} : names_[name_id_[slot]];
  }

  uint32_t parent(uint32_t slot) const { return parent_[slot]; }
  // Depth below a root (0 for roots), kUnreachable when the parent chain runs into a cycle.
  // parent() and level() need the tree (see the constructor).
  int32_t level(uint32_t slot) const { return level_[slot]; }

  // Position of each range (by slot) in a full scan of nsys's rtree over the ranges.
  std::vector<uint32_t> rtree_scan_positions() const;

  // Appends to `out` every range of thread `global_tid` with start <= call_start and
  // end >= call_end (in start order). `out` is not cleared.
  void containers(int64_t global_tid, TimeNs call_start, TimeNs call_end, std::vector<uint32_t>& out) const;

 private:
  void build_names(const Trace& trace);
  void build_thread_index();
  void build_parents();
  // Returns whether equal durations decided some parent.
  bool assign_parents(const std::vector<uint32_t>& tie_rank);
  void build_levels();
  void report(size_t node, size_t node_lo, size_t node_hi, size_t lo, size_t hi, TimeNs min_end,
              std::vector<uint32_t>& out) const;

  TimeNs span_min_ = kNoTime, span_max_ = kNoTime;  // nsys's NVTX_EVENTS_MINMAXTS
  std::vector<uint32_t> row_;
  std::vector<int64_t> row_id_;
  std::vector<TimeNs> start_, end_;
  std::vector<int64_t> global_tid_;
  std::vector<uint8_t> pushpop_;
  std::vector<uint32_t> name_id_;
  std::vector<std::string_view> names_;
  std::deque<std::string> composed_names_;  // "<domain>:<text>" strings names_ points into
  std::vector<uint32_t> parent_;
  std::vector<int32_t> level_;

  // Containment index: slots ordered by (thread, start, slot); per thread its [begin, end) in that
  // order; a max-segment-tree over the ends so that a query visits only ranges still open.
  std::vector<uint32_t> by_thread_;
  std::vector<TimeNs> sorted_start_;
  std::vector<std::pair<int64_t, uint32_t>> thread_begin_;  // (global tid, first position), sorted
  std::vector<TimeNs> max_end_;  // segment tree, 1-based, leaves at [leaf_base_, 2 * leaf_base_)
  size_t leaf_base_ = 1;
};

// CUDA API calls by (process, correlation id): how nsys joins a GPU operation to its launch,
// `op.globalPid == (r.globalTid & 0xFFFFFFFFFF000000) AND op.correlationId == r.correlationId`.
class LaunchIndex {
 public:
  explicit LaunchIndex(const ApiTable& api);
  // API rows that launched work with this correlation id in process `global_pid`, in the order
  // SQLite's join meets them.
  std::span<const uint32_t> find(int64_t global_pid, int64_t correlation) const;

 private:
  struct Key {
    int64_t global_pid, correlation;
    uint32_t row;
  };
  std::vector<Key> keys_;
  std::vector<uint32_t> rows_;  // rows_[i] == keys_[i].row, for the returned spans
};

// One GPU operation table row, in nsys's UNION ALL order: kernels, then memcpys, then memsets.
struct GpuOpRef {
  uint8_t table;  // 0 kernel, 1 memcpy, 2 memset
  uint32_t row;
};

// What nsys's `projection` CTE computes for one range (or for the operations outside every range).
struct RangeProjection {
  TimeNs first_start = kNoTime;  // min(op.start)
  TimeNs last_end = kNoTime;     // max(op.end)
  int64_t op_count = 0;          // count(DISTINCT correlationId)
  bool has_ops() const { return op_count > 0; }
};

struct GpuProjection {
  std::vector<RangeProjection> per_range;  // by slot
  // Operations whose launching call lies in no range: nsys's GROUP BY rangeId also makes a row for
  // them (the NULL group). `thread` is the thread SQLite reports there: that of the first row,
  // in operation order, that reached max(op.end).
  RangeProjection outside;
  int64_t outside_thread = 0;
};

// Projects every kernel, memcpy and memset onto the ranges containing its launching API call.
GpuProjection project_gpu_ops(const Trace& trace, const ProjectionRanges& ranges, const LaunchIndex& launches);

}  // namespace tracedoc::nsys_stats
