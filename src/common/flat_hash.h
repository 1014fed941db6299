// Small open-addressing hash tables for the hot paths (interning millions of strings, grouping
// millions of rows), where std::unordered_map's node allocations dominate the run time.
#pragma once

#include <cstdint>
#include <vector>

namespace tracedoc {

inline uint64_t mix64(uint64_t x) {  // splitmix64 finalizer
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x;
}

// Maps uint64 keys to dense uint32 ids 0, 1, 2, ... in order of first insertion.
class DenseIdMap {
 public:
  static constexpr uint32_t kEmpty = UINT32_MAX;

  // Returns the id of `key`, assigning the next id if it is new.
  uint32_t id(uint64_t key) {
    if ((keys_.size() + 1) * 2 > slots_.size()) grow();
    size_t mask = slots_.size() - 1;
    for (size_t i = mix64(key) & mask;; i = (i + 1) & mask) {
      uint32_t s = slots_[i];
      if (s == kEmpty) {
        slots_[i] = static_cast<uint32_t>(keys_.size());
        keys_.push_back(key);
        return slots_[i];
      }
      if (keys_[s] == key) return s;
    }
  }
  // The id of `key`, or kEmpty when it was never added.
  uint32_t find(uint64_t key) const {
    if (slots_.empty()) return kEmpty;
    const size_t mask = slots_.size() - 1;
    for (size_t i = mix64(key) & mask;; i = (i + 1) & mask) {
      const uint32_t s = slots_[i];
      if (s == kEmpty || keys_[s] == key) return s;
    }
  }
  size_t size() const { return keys_.size(); }
  uint64_t key(uint32_t id) const { return keys_[id]; }
  // Makes room for `n` keys without rehashing on the way.
  void reserve(size_t n) {
    keys_.reserve(n);
    size_t want = 64;
    while (want < n * 2) want *= 2;
    if (want > slots_.size()) grow(want);
  }

 private:
  void grow(size_t capacity = 0) {
    if (capacity == 0) capacity = slots_.empty() ? 64 : slots_.size() * 2;
    std::vector<uint32_t> fresh(capacity, kEmpty);
    size_t mask = fresh.size() - 1;
    for (uint32_t id = 0; id < keys_.size(); ++id) {
      size_t i = mix64(keys_[id]) & mask;
      while (fresh[i] != kEmpty) i = (i + 1) & mask;
      fresh[i] = id;
    }
    slots_.swap(fresh);
  }
  std::vector<uint32_t> slots_;
  std::vector<uint64_t> keys_;
};

}  // namespace tracedoc
