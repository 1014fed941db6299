#include "analysis/pytorch/forward_backward.h"

#include <algorithm>
#include <numeric>
#include <tuple>
#include <unordered_map>

namespace tracedoc::pytorch {

namespace {

// Operators sorted by (thread, start, end): the one a flow end points at is the innermost operator
// starting exactly at the flow's time on its thread, i.e. the first of the equal starts with the
// smallest end.
class OpsByStart {
 public:
  explicit OpsByStart(const OpTable& ops) : ops_(ops), order_(ops.size()) {
    std::iota(order_.begin(), order_.end(), 0u);
    std::sort(order_.begin(), order_.end(), [&](uint32_t a, uint32_t b) {
      return std::tie(ops.global_tid[a], ops.start[a], ops.end[a], a) <
             std::tie(ops.global_tid[b], ops.start[b], ops.end[b], b);
    });
  }
  int32_t at(int64_t global_tid, TimeNs time) const {
    auto it =
        std::lower_bound(order_.begin(), order_.end(), std::make_pair(global_tid, time),
                         [&](uint32_t row, const std::pair<int64_t, TimeNs>& key) {
                           return std::tie(ops_.global_tid[row], ops_.start[row]) < std::tie(key.first, key.second);
                         });
    if (it == order_.end() || ops_.global_tid[*it] != global_tid || ops_.start[*it] != time) return kNoRow;
    return static_cast<int32_t>(*it);
  }

 private:
  const OpTable& ops_;
  std::vector<uint32_t> order_;
};

}  // namespace

ForwardBackwardLinks link_by_flows(const Trace& trace) {
  const OpTable& ops = trace.pytorch.ops;
  const FlowTable& flows = trace.pytorch.forward_backward;
  ForwardBackwardLinks out;
  out.forward_of.assign(ops.size(), kNoRow);
  if (flows.size() == 0) return out;
  const OpsByStart index(ops);
  // Flow ids are unique per trace file; a merged rank directory repeats them, so the thread's rank
  // tag (its upper bits) is part of the key.
  std::unordered_map<uint64_t, int32_t> sources;
  auto key = [&](size_t i) {
    return static_cast<uint64_t>(flows.id[i]) * 0x9E3779B97F4A7C15ull ^
           static_cast<uint64_t>(flows.global_tid[i] >> 48);
  };
  for (size_t i = 0; i < flows.size(); ++i) {
    if (flows.phase[i] == 's') sources[key(i)] = index.at(flows.global_tid[i], flows.time[i]);
  }
  for (size_t i = 0; i < flows.size(); ++i) {
    if (flows.phase[i] != 'f') continue;
    auto it = sources.find(key(i));
    const int32_t backward = index.at(flows.global_tid[i], flows.time[i]);
    if (it == sources.end() || it->second == kNoRow || backward == kNoRow) continue;
    if (out.forward_of[backward] == kNoRow) out.linked++;
    out.forward_of[backward] = it->second;
  }
  return out;
}

ForwardBackwardLinks link_by_sequence_number(const Trace& trace) {
  const OpTable& ops = trace.pytorch.ops;
  ForwardBackwardLinks out;
  out.forward_of.assign(ops.size(), kNoRow);
  // (process, sequence number) -> the forward op that started last (ties: the later row).
  std::unordered_map<uint64_t, int32_t> forward;
  auto key = [&](size_t i) {
    return static_cast<uint64_t>(ops.sequence_number[i]) * 0x9E3779B97F4A7C15ull ^
           static_cast<uint64_t>(global_pid_of(ops.global_tid[i]));
  };
  for (size_t i = 0; i < ops.size(); ++i) {
    // Forward ops carry "Fwd thread id": 0 (or none, before 2022); backward ops the forward thread.
    if (ops.sequence_number[i] == kNoValue || ops.sequence_number[i] < 0 || ops.fwd_thread_id[i] > 0) continue;
    auto [it, inserted] = forward.try_emplace(key(i), static_cast<int32_t>(i));
    if (!inserted && ops.start[i] >= ops.start[it->second]) it->second = static_cast<int32_t>(i);
  }
  // A gradient runs as "autograd::engine::evaluate_function: XBackward0" around "XBackward0", both
  // with the number; the arrow points at the inner one, the one that starts last.
  std::unordered_map<uint64_t, int32_t> backward;
  for (size_t i = 0; i < ops.size(); ++i) {
    if (ops.sequence_number[i] == kNoValue || ops.fwd_thread_id[i] == kNoValue || ops.fwd_thread_id[i] <= 0) continue;
    if (forward.find(key(i)) == forward.end()) continue;
    const uint64_t k = key(i) ^ static_cast<uint64_t>(ops.fwd_thread_id[i]) << 40;
    auto [it, inserted] = backward.try_emplace(k, static_cast<int32_t>(i));
    if (!inserted && ops.start[i] >= ops.start[it->second]) it->second = static_cast<int32_t>(i);
  }
  for (const auto& [k, row] : backward) {
    out.forward_of[row] = forward.at(key(row));
    out.linked++;
  }
  return out;
}

ForwardBackwardLinks link_forward_backward(const Trace& trace) {
  return trace.pytorch.forward_backward.size() ? link_by_flows(trace) : link_by_sequence_number(trace);
}

}  // namespace tracedoc::pytorch
