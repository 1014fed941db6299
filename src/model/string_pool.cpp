#include "model/string_pool.h"

#include <algorithm>
#include <cstring>

namespace tracedoc {

namespace {
constexpr size_t kChunkBytes = 1 << 20;
}

StringPool::StringPool() = default;

std::string_view StringPool::store(std::string_view s) {
  if (s.size() > kChunkBytes / 4) {  // large strings get a chunk of their own
    auto buf = std::make_unique<char[]>(s.size());
    std::memcpy(buf.get(), s.data(), s.size());
    std::string_view v(buf.get(), s.size());
    chunks_.insert(chunks_.begin(), std::move(buf));  // keep the current chunk last
    return v;
  }
  if (chunks_.empty() || chunk_used_ + s.size() > chunk_size_) {
    chunks_.push_back(std::make_unique<char[]>(kChunkBytes));
    chunk_used_ = 0;
    chunk_size_ = kChunkBytes;
  }
  char* dst = chunks_.back().get() + chunk_used_;
  if (!s.empty()) std::memcpy(dst, s.data(), s.size());
  chunk_used_ += s.size();
  return {dst, s.size()};
}

namespace {
// The strings' hash: 16 bytes per step through a 64x64->128-bit multiply (a trace interns a few
// million names, most of them 20-60 bytes long; this took half the CPU time std::hash did when
// reading a tiled export's NVTX texts). Ids do not depend on it: they are given in the order strings
// are first seen.
inline uint64_t load64(const char* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}
inline uint64_t load32(const char* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
inline uint64_t fold_multiply(uint64_t a, uint64_t b) {
  const unsigned __int128 product = static_cast<unsigned __int128>(a) * b;
  return static_cast<uint64_t>(product) ^ static_cast<uint64_t>(product >> 64);
}
uint64_t hash_text(std::string_view s) {
  constexpr uint64_t k0 = 0xa0761d6478bd642fULL, k1 = 0xe7037ed1a0b428dbULL, k2 = 0x8ebc6af09c88c6e3ULL;
  const char* p = s.data();
  size_t n = s.size();
  uint64_t h = fold_multiply(n ^ k0, k1);
  for (; n > 16; p += 16, n -= 16) h = fold_multiply(load64(p) ^ k1, load64(p + 8) ^ h);
  // The last 1-16 bytes (the last 16 of a longer string, overlapping what was hashed: still a
  // function of the string alone).
  uint64_t a = 0, b = 0;
  if (s.size() >= 16) {
    a = load64(s.data() + s.size() - 16), b = load64(s.data() + s.size() - 8);
  } else if (n >= 8) {
    a = load64(p), b = load64(p + n - 8);
  } else if (n >= 4) {
    a = load32(p), b = load32(p + n - 4);
  } else if (n > 0) {
    a = (uint64_t{static_cast<uint8_t>(p[0])} << 16) | (uint64_t{static_cast<uint8_t>(p[n / 2])} << 8) |
        static_cast<uint8_t>(p[n - 1]);
  }
  return fold_multiply(a ^ k2 ^ h, b ^ k1);
}

inline uint64_t slot_value(uint64_t hash, StrId id) { return (hash & 0xFFFFFFFF00000000ULL) | (uint64_t{id} + 1); }
inline StrId slot_id(uint64_t slot) { return static_cast<StrId>((slot & 0xFFFFFFFFu) - 1); }
inline uint64_t slot_hash_high(uint64_t slot) { return slot & 0xFFFFFFFF00000000ULL; }
}  // namespace

void StringPool::grow_index() {
  std::vector<uint64_t> fresh(slots_.empty() ? 1024 : slots_.size() * 2, 0);
  const size_t mask = fresh.size() - 1;
  for (const uint64_t slot : slots_) {
    if (!slot) continue;
    const uint64_t hash = slot_hash_high(slot) | hash_low_[slot_id(slot)];
    size_t i = hash & mask;
    while (fresh[i]) i = (i + 1) & mask;
    fresh[i] = slot;
  }
  slots_.swap(fresh);
}

StrId StringPool::intern(std::string_view s) {
  if ((views_.size() + 1) * 2 > slots_.size()) grow_index();
  const uint64_t h = hash_text(s);
  const size_t mask = slots_.size() - 1;
  size_t i = h & mask;
  for (; slots_[i]; i = (i + 1) & mask) {
    if (slot_hash_high(slots_[i]) == slot_hash_high(h)) {
      const StrId id = slot_id(slots_[i]);
      if (hash_low_[id] == static_cast<uint32_t>(h) && views_[id] == s) return id;
    }
  }
  const StrId id = static_cast<StrId>(views_.size());
  views_.push_back(store(s));
  hash_low_.push_back(static_cast<uint32_t>(h));
  slots_[i] = slot_value(h, id);
  return id;
}

void StringPool::truncate(size_t n) {
  if (n >= views_.size()) return;
  views_.resize(n);
  hash_low_.resize(n);
  std::fill(slots_.begin(), slots_.end(), 0);
  const size_t mask = slots_.size() - 1;
  for (StrId id = 0; id < n; ++id) {
    const uint64_t h = hash_text(views_[id]);
    size_t i = h & mask;
    while (slots_[i]) i = (i + 1) & mask;
    slots_[i] = slot_value(h, id);
  }
}

StrId StringPool::add_unique(std::string_view s) {
  if ((views_.size() + 1) * 2 > slots_.size()) grow_index();
  const uint64_t h = hash_text(s);
  const size_t mask = slots_.size() - 1;
  size_t i = h & mask;
  while (slots_[i]) i = (i + 1) & mask;
  const StrId id = static_cast<StrId>(views_.size());
  views_.push_back(store(s));
  hash_low_.push_back(static_cast<uint32_t>(h));
  slots_[i] = slot_value(h, id);
  return id;
}

}  // namespace tracedoc
