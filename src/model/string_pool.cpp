#include "model/string_pool.h"

#include <cstring>
#include <functional>

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
  const uint64_t h = std::hash<std::string_view>{}(s);
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

StrId StringPool::add_unique(std::string_view s) {
  if ((views_.size() + 1) * 2 > slots_.size()) grow_index();
  const uint64_t h = std::hash<std::string_view>{}(s);
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
