#include "model/string_pool.h"

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

StrId StringPool::intern(std::string_view s) {
  auto it = index_.find(s);
  if (it != index_.end()) return it->second;
  StrId id = add_unique(s);
  return id;
}

StrId StringPool::add_unique(std::string_view s) {
  std::string_view v = store(s);
  StrId id = static_cast<StrId>(views_.size());
  views_.push_back(v);
  index_.emplace(v, id);
  return id;
}

}  // namespace tracedoc
