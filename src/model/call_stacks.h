// Call stacks, stored once: a frame (function, module, how it was resolved) is interned to a 32-bit
// id, a stack is a run of frame ids, and every event with the same stack shares it. A million CPU
// samples of a training loop have a few thousand distinct stacks, so a sample costs its 4-byte
// stack id (CpuSampleTable::stack) and the stacks a few frames each.
//
// Frames run from the leaf (index 0: the function that was executing, nsys's stackDepth 0) to the
// root (`_start`, a thread's entry), as nsys's SAMPLING_CALLCHAINS orders them.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string_view>
#include <tuple>
#include <vector>

#include "model/string_pool.h"

namespace tracedoc {

using StackId = int32_t;
inline constexpr StackId kNoStack = -1;

struct StackFrame {
  enum Flags : uint8_t { kKernelMode = 1, kUnresolved = 2 };
  StrId symbol = kNoStr;  // function name; an address ("0x7ffa0091a666") when unresolved
  StrId module = kNoStr;  // the binary or library it lives in
  uint8_t flags = 0;
  bool kernel_mode() const { return (flags & kKernelMode) != 0; }
  bool unresolved() const { return (flags & kUnresolved) != 0; }
  auto operator<=>(const StackFrame&) const = default;
};

class CallStacks {
 public:
  uint32_t intern_frame(const StackFrame& frame);
  // The id of the stack `frames` (leaf first); an empty stack is kNoStack.
  StackId intern_stack(std::span<const uint32_t> frames);

  const StackFrame& frame(uint32_t id) const { return frames_[id]; }
  std::span<const uint32_t> stack(StackId id) const {
    if (id < 0 || static_cast<size_t>(id) + 1 >= offsets_.size()) return {};
    return {frame_ids_.data() + offsets_[static_cast<size_t>(id)],
            frame_ids_.data() + offsets_[static_cast<size_t>(id) + 1]};
  }
  size_t frame_count() const { return frames_.size(); }
  size_t stack_count() const { return offsets_.size() - 1; }
  size_t bytes() const;

  // Rewrites every frame's symbol and module through `map` (a reader's raw string ids to the
  // pool's, kNoStr for an id it cannot resolve); returns how many it could not resolve.
  template <typename F>
  int64_t map_names(F&& map) {
    int64_t unknown = 0;
    frame_index_.clear();
    for (uint32_t i = 0; i < frames_.size(); ++i) {
      for (StrId* name : {&frames_[i].symbol, &frames_[i].module}) {
        if (*name == kNoStr) continue;
        *name = map(*name);
        unknown += *name == kNoStr;
      }
      frame_index_.try_emplace(frames_[i], i);
    }
    return unknown;
  }

 private:
  std::vector<StackFrame> frames_;
  std::map<StackFrame, uint32_t> frame_index_;
  std::vector<uint32_t> frame_ids_;   // every stack's frames, one after another
  std::vector<uint32_t> offsets_{0};  // stack i is frame_ids_[offsets_[i], offsets_[i + 1])
  std::map<std::vector<uint32_t>, StackId, std::less<>> stack_index_;
};

// Assembles stacks from rows of (event id, depth, frame) as nsys stores them (SAMPLING_CALLCHAINS,
// OSRT_CALLCHAINS, CUDA_CALLCHAINS: one row per frame), in any order.
class StackRows {
 public:
  explicit StackRows(CallStacks& stacks) : stacks_(stacks) {}
  void add(int64_t event, int64_t depth, const StackFrame& frame) {
    rows_.push_back({event, depth, stacks_.intern_frame(frame)});
  }
  // Each event's stack, by event id ascending (frames by depth, leaf first).
  std::vector<std::pair<int64_t, StackId>> build();

 private:
  struct Row {
    int64_t event, depth;
    uint32_t frame;
  };
  CallStacks& stacks_;
  std::vector<Row> rows_;
};

// The stack of `event` in `built` (StackRows::build), kNoStack when it has none.
StackId stack_of(const std::vector<std::pair<int64_t, StackId>>& built, int64_t event);

}  // namespace tracedoc
