// Dense ids of string texts, for grouping rows by name: readers may intern a name more than once
// (a merged rank directory keeps per-rank pools until the merge), so equal texts can carry different
// StrIds. Each StrId is looked up once, then cached.
#pragma once

#include <cstdint>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "model/trace.h"

namespace tracedoc {

class TextIds {
 public:
  static constexpr uint32_t kNoText = UINT32_MAX;

  explicit TextIds(const Trace& trace) : trace_(trace), cache_(trace.strings.size(), kNoText) {}
  // The text's dense id (0, 1, ... in order of first appearance); kNoText for kNoStr.
  uint32_t of(StrId id) {
    if (id == kNoStr || id >= cache_.size()) return kNoText;
    uint32_t& slot = cache_[id];
    if (slot == kNoText) slot = ids_.try_emplace(trace_.str(id), static_cast<uint32_t>(ids_.size())).first->second;
    return slot;
  }
  size_t size() const { return ids_.size(); }

 private:
  const Trace& trace_;
  std::vector<uint32_t> cache_;
  std::unordered_map<std::string_view, uint32_t> ids_;
};

}  // namespace tracedoc
