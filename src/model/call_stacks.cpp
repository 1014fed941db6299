#include "model/call_stacks.h"

#include <algorithm>

namespace tracedoc {

uint32_t CallStacks::intern_frame(const StackFrame& frame) {
  auto [it, fresh] = frame_index_.try_emplace(frame, static_cast<uint32_t>(frames_.size()));
  if (fresh) frames_.push_back(frame);
  return it->second;
}

StackId CallStacks::intern_stack(std::span<const uint32_t> frames) {
  if (frames.empty()) return kNoStack;
  auto [it, fresh] = stack_index_.try_emplace(std::vector<uint32_t>(frames.begin(), frames.end()),
                                              static_cast<StackId>(stack_count()));
  if (fresh) {
    frame_ids_.insert(frame_ids_.end(), frames.begin(), frames.end());
    offsets_.push_back(static_cast<uint32_t>(frame_ids_.size()));
  }
  return it->second;
}

size_t CallStacks::bytes() const {
  // The tables, and about what each index entry costs besides its key.
  return frames_.size() * sizeof(StackFrame) + frame_ids_.size() * sizeof(uint32_t) * 2 +
         offsets_.size() * sizeof(uint32_t) + frame_index_.size() * (sizeof(StackFrame) + 40) +
         stack_index_.size() * 64;
}

std::vector<std::pair<int64_t, StackId>> StackRows::build() {
  // nsys writes each event's frames together, by depth; sort only when a file does not.
  const auto before = [](const Row& a, const Row& b) {
    return a.event != b.event ? a.event < b.event : a.depth < b.depth;
  };
  if (!std::is_sorted(rows_.begin(), rows_.end(), before)) std::stable_sort(rows_.begin(), rows_.end(), before);
  std::vector<std::pair<int64_t, StackId>> out;
  std::vector<uint32_t> frames;
  for (size_t i = 0; i < rows_.size();) {
    size_t end = i;
    frames.clear();
    while (end < rows_.size() && rows_[end].event == rows_[i].event) frames.push_back(rows_[end++].frame);
    out.emplace_back(rows_[i].event, stacks_.intern_stack(frames));
    i = end;
  }
  rows_.clear();
  rows_.shrink_to_fit();
  return out;
}

StackId stack_of(const std::vector<std::pair<int64_t, StackId>>& built, int64_t event) {
  const auto it = std::lower_bound(built.begin(), built.end(), event,
                                   [](const std::pair<int64_t, StackId>& p, int64_t e) { return p.first < e; });
  return it != built.end() && it->first == event ? it->second : kNoStack;
}

}  // namespace tracedoc
