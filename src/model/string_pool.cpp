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

void StringPool::grow_index() {
  std::vector<StrId> fresh(slots_.empty() ? 1024 : slots_.size() * 2, kNoStr);
  const size_t mask = fresh.size() - 1;
  for (StrId id = 0; id < views_.size(); ++id) {
    size_t i = hashes_[id] & mask;
    while (fresh[i] != kNoStr) i = (i + 1) & mask;
    fresh[i] = id;
  }
  slots_.swap(fresh);
}

StrId StringPool::intern(std::string_view s) {
  if ((views_.size() + 1) * 2 > slots_.size()) grow_index();
  const uint64_t h = std::hash<std::string_view>{}(s);
  const size_t mask = slots_.size() - 1;
  size_t i = h & mask;
  for (; slots_[i] != kNoStr; i = (i + 1) & mask) {
    const StrId id = slots_[i];
    if (hashes_[id] == h && views_[id] == s) return id;
  }
  const StrId id = static_cast<StrId>(views_.size());
  views_.push_back(store(s));
  hashes_.push_back(h);
  slots_[i] = id;
  return id;
}

StrId StringPool::add_unique(std::string_view s) {
  if ((views_.size() + 1) * 2 > slots_.size()) grow_index();
  const uint64_t h = std::hash<std::string_view>{}(s);
  const size_t mask = slots_.size() - 1;
  size_t i = h & mask;
  while (slots_[i] != kNoStr) i = (i + 1) & mask;
  const StrId id = static_cast<StrId>(views_.size());
  views_.push_back(store(s));
  hashes_.push_back(h);
  slots_[i] = id;
  return id;
}

}  // namespace tracedoc
