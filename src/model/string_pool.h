// Interned strings: every name in a trace is stored once and referred to by a 32-bit id.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace tracedoc {

using StrId = uint32_t;
inline constexpr StrId kNoStr = UINT32_MAX;  // SQL NULL / absent name

class StringPool {
 public:
  StringPool();
  StringPool(const StringPool&) = delete;
  StringPool& operator=(const StringPool&) = delete;
  StringPool(StringPool&&) = default;
  StringPool& operator=(StringPool&&) = default;

  // Returns the id of `s`, adding it if new.
  StrId intern(std::string_view s);
  // Adds `s` without looking for an existing copy (for sources whose strings are already unique).
  StrId add_unique(std::string_view s);
  std::string_view get(StrId id) const { return id == kNoStr ? std::string_view{} : views_[id]; }
  bool valid(StrId id) const { return id != kNoStr && id < views_.size(); }
  size_t size() const { return views_.size(); }
  // Forgets the strings from id `n` on (their bytes stay allocated): a reader that must read again.
  void truncate(size_t n);

 private:
  std::string_view store(std::string_view s);

  std::vector<std::unique_ptr<char[]>> chunks_;
  size_t chunk_used_ = 0;
  size_t chunk_size_ = 0;
  void grow_index();

  std::vector<std::string_view> views_;
  // Open addressing: each slot holds the upper 32 bits of the string's hash and id + 1 (0 = empty),
  // so a probe touches one cache line and a new string is recognised without reading any other.
  std::vector<uint64_t> slots_;
  std::vector<uint32_t> hash_low_;  // per id: the lower hash bits, to place it when the table grows
};

}  // namespace tracedoc
