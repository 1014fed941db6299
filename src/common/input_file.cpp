#include "common/input_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "common/memory_budget.h"

namespace tracedoc {

namespace {

constexpr size_t kChunkBytes = size_t{1} << 20;

// Closes the descriptor when the read ends, however it ends.
struct Descriptor {
  int fd = -1;
  ~Descriptor() {
    if (fd >= 0) ::close(fd);
  }
};

// One read(2), retried when a signal interrupts it: the bytes read, 0 at the end, -1 on an error.
ssize_t read_some(int fd, char* into, size_t bytes) {
  for (;;) {
    const ssize_t n = ::read(fd, into, bytes);
    if (n >= 0 || errno != EINTR) return n;
  }
}

Status read_error(const std::string& path) {
  return IoError(fmt::format("{}: read error: {}", path, std::strerror(errno)));
}

}  // namespace

Result<int> open_input(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return IoError(fmt::format("{}: cannot open: {}", path, std::strerror(errno)));
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
    ::close(fd);
    return BadInput(fmt::format("{}: is a directory, not a file", path));
  }
  return fd;
}

Result<std::string> read_file(const std::string& path, const FileReadLimits& limits) {
  Descriptor file;
  TRACEDOC_ASSIGN_OR_RETURN(file.fd, open_input(path));
  std::string bytes;
  struct stat st {};
  if (::fstat(file.fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
    const uint64_t size = static_cast<uint64_t>(st.st_size);
    if (limits.max_bytes == 0 || size <= limits.max_bytes) {
      TRACEDOC_RETURN_IF_ERROR(MemoryBudget::check(path, size));
      bytes.reserve(size);
    }
  }
  char probe[1 << 16];
  for (;;) {
    if (limits.max_bytes > 0 && bytes.size() > limits.max_bytes) {
      return BadInput(
          fmt::format("{}: larger than {}: not a {}", path, format_memory_size(limits.max_bytes), limits.what));
    }
    if (bytes.size() == bytes.capacity()) {
      // Full (or a size not known ahead): a small read tells the end from more to come before
      // the buffer grows.
      const ssize_t n = read_some(file.fd, probe, sizeof(probe));
      if (n < 0) return read_error(path);
      if (n == 0) break;
      const size_t grown = std::max(bytes.size() * 2, bytes.size() + kChunkBytes);
      TRACEDOC_RETURN_IF_ERROR(MemoryBudget::check(path, grown));
      bytes.reserve(grown);
      bytes.append(probe, static_cast<size_t>(n));
      continue;
    }
    const size_t at = bytes.size();
    bytes.resize(bytes.capacity());
    const ssize_t n = read_some(file.fd, bytes.data() + at, bytes.size() - at);
    if (n < 0) return read_error(path);
    bytes.resize(at + static_cast<size_t>(n));
    if (n == 0) break;
  }
  return bytes;
}

Status read_file_chunks(const std::string& path, const std::function<bool(std::string_view)>& consume) {
  Descriptor file;
  TRACEDOC_ASSIGN_OR_RETURN(file.fd, open_input(path));
  std::string chunk(kChunkBytes, '\0');
  for (;;) {
    const ssize_t n = read_some(file.fd, chunk.data(), chunk.size());
    if (n < 0) return read_error(path);
    if (n == 0 || !consume(std::string_view(chunk.data(), static_cast<size_t>(n)))) return Status::Ok();
  }
}

Result<std::string> read_file_head(const std::string& path, size_t bytes) {
  Descriptor file;
  TRACEDOC_ASSIGN_OR_RETURN(file.fd, open_input(path));
  std::string head(bytes, '\0');
  size_t have = 0;
  while (have < bytes) {
    const ssize_t n = read_some(file.fd, head.data() + have, bytes - have);
    if (n < 0) return read_error(path);
    if (n == 0) break;
    have += static_cast<size_t>(n);
  }
  head.resize(have);
  return head;
}

}  // namespace tracedoc
