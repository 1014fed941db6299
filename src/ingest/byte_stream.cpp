#include "ingest/byte_stream.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>
#include <isa-l/igzip_lib.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <string_view>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace tracedoc {

namespace {

class FileHandle {
 public:
  explicit FileHandle(int fd) : fd_(fd) {}
  ~FileHandle() {
    if (fd_ >= 0) ::close(fd_);
  }
  FileHandle(const FileHandle&) = delete;
  FileHandle& operator=(const FileHandle&) = delete;
  int fd() const { return fd_; }

 private:
  int fd_;
};

// read(2) until `capacity` bytes or the end of the file.
ssize_t read_fully(int fd, char* dst, size_t capacity) {
  size_t got = 0;
  while (got < capacity) {
    ssize_t n = ::read(fd, dst + got, capacity - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return -1;
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  return static_cast<ssize_t>(got);
}

class PlainFileStream final : public ByteStream {
 public:
  PlainFileStream(std::string path, int fd) : path_(std::move(path)), file_(fd) {
    ::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
  }
  Result<size_t> read(char* dst, size_t capacity) override {
    ssize_t n = read_fully(file_.fd(), dst, capacity);
    if (n < 0) return IoError(fmt::format("{}: read failed: {}", path_, std::strerror(errno)));
    offset_ += static_cast<uint64_t>(n);
    return static_cast<size_t>(n);
  }
  uint64_t file_bytes_read() const override { return offset_; }
  bool compressed() const override { return false; }

 private:
  std::string path_;
  FileHandle file_;
  uint64_t offset_ = 0;
};

// Inflates on its own thread into a small queue of blocks; read() hands them out in order.
class MemoryStream final : public ByteStream {
 public:
  explicit MemoryStream(std::string_view bytes) : bytes_(bytes) {}
  Result<size_t> read(char* dst, size_t capacity) override {
    const size_t n = std::min(capacity, bytes_.size() - offset_);
    std::memcpy(dst, bytes_.data() + offset_, n);
    offset_ += n;
    return n;
  }
  uint64_t file_bytes_read() const override { return offset_; }
  bool compressed() const override { return false; }

 private:
  std::string_view bytes_;
  size_t offset_ = 0;
};

class GzipStream final : public ByteStream {
 public:
  static constexpr size_t kBlock = 4u << 20;
  static constexpr size_t kQueueDepth = 3;

  GzipStream(std::string name, std::unique_ptr<ByteStream> compressed)
      : path_(std::move(name)), source_(std::move(compressed)) {
    worker_ = std::thread([this] { inflate_all(); });
  }
  ~GzipStream() override {
    {
      std::lock_guard lock(mu_);
      cancelled_ = true;
    }
    cv_.notify_all();
    worker_.join();
  }

  Result<size_t> read(char* dst, size_t capacity) override {
    size_t copied = 0;
    while (copied < capacity) {
      if (current_pos_ == current_.size()) {
        std::unique_lock lock(mu_);
        cv_.wait(lock, [&] { return !ready_.empty() || finished_; });
        if (ready_.empty()) {
          if (!error_.ok()) return error_;
          break;
        }
        current_ = std::move(ready_.front());
        ready_.pop_front();
        current_pos_ = 0;
        lock.unlock();
        cv_.notify_all();
      }
      size_t n = std::min(capacity - copied, current_.size() - current_pos_);
      std::memcpy(dst + copied, current_.data() + current_pos_, n);
      current_pos_ += n;
      copied += n;
    }
    return copied;
  }
  uint64_t file_bytes_read() const override { return compressed_read_.load(); }
  bool compressed() const override { return true; }

 private:
  void finish(Status error) {
    std::lock_guard lock(mu_);
    error_ = std::move(error);
    finished_ = true;
    cv_.notify_all();
  }
  // False when the consumer went away.
  bool publish(std::vector<char>&& block) {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return ready_.size() < kQueueDepth || cancelled_; });
    if (cancelled_) return false;
    ready_.push_back(std::move(block));
    cv_.notify_all();
    return true;
  }

  static const char* isal_error(int rc) {
    switch (rc) {
      case ISAL_INVALID_BLOCK: return "invalid deflate block";
      case ISAL_INVALID_SYMBOL: return "invalid deflate symbol";
      case ISAL_INVALID_LOOKBACK: return "invalid back-reference distance";
      case ISAL_INVALID_WRAPPER: return "invalid gzip header";
      case ISAL_UNSUPPORTED_METHOD: return "not deflate-compressed";
      case ISAL_INCORRECT_CHECKSUM: return "CRC mismatch";
      default: return "inflate failed";
    }
  }

  // ISA-L's inflate (igzip) runs about 3x faster than zlib's here, so the parser, not the inflater,
  // sets the pace of a .json.gz.
  void inflate_all() {
    auto state = std::make_unique<inflate_state>();
    isal_inflate_init(state.get());
    state->crc_flag = ISAL_GZIP;  // parse the gzip header and trailer, verify the CRC
    std::vector<uint8_t> in(1u << 20);
    std::vector<char> out(kBlock);
    size_t fill = 0;           // bytes of `out` already inflated
    bool member_done = false;  // the last call finished a gzip member (trailer included)
    uint64_t consumed = 0;     // compressed bytes handed to the inflater
    Status status;
    for (;;) {
      if (state->avail_in == 0) {
        auto got = source_->read(reinterpret_cast<char*>(in.data()), in.size());
        if (!got.ok()) {
          status = got.status();
          break;
        }
        const size_t n = *got;
        compressed_read_ += n;
        if (n == 0) {
          if (!member_done) {
            status =
                BadInput(fmt::format("{}: truncated gzip data: the compressed stream ends after {} bytes, "
                                     "in the middle of a member (was the file cut short?)",
                                     path_, consumed));
          }
          break;
        }
        state->next_in = in.data();
        state->avail_in = static_cast<uint32_t>(n);
      }
      if (member_done) {
        // Another member follows (concatenated gzip files are one stream), unless it is zero padding.
        if (*state->next_in == 0) {
          state->next_in++;
          state->avail_in--;
          consumed++;
          continue;
        }
        uint8_t* next = state->next_in;
        const uint32_t avail = state->avail_in;
        isal_inflate_reset(state.get());
        state->crc_flag = ISAL_GZIP;
        state->next_in = next;
        state->avail_in = avail;
        member_done = false;
      }
      state->next_out = reinterpret_cast<uint8_t*>(out.data() + fill);
      state->avail_out = static_cast<uint32_t>(kBlock - fill);
      const uint32_t before_in = state->avail_in;
      const int rc = isal_inflate(state.get());
      consumed += before_in - state->avail_in;
      fill = kBlock - state->avail_out;
      if (rc < 0) {
        status =
            BadInput(fmt::format("{}: corrupt gzip data near compressed byte {}: {}", path_, consumed, isal_error(rc)));
        break;
      }
      if (state->block_state == ISAL_BLOCK_FINISH) member_done = true;
      if (fill == kBlock) {
        if (!publish(std::move(out))) return;
        out = std::vector<char>(kBlock);
        fill = 0;
      }
    }
    if (fill > 0) {
      out.resize(fill);
      if (!publish(std::move(out))) return;
    }
    finish(std::move(status));
  }

  std::string path_;
  std::unique_ptr<ByteStream> source_;
  std::thread worker_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::vector<char>> ready_;
  bool finished_ = false, cancelled_ = false;
  Status error_;
  std::vector<char> current_;
  size_t current_pos_ = 0;
  std::atomic<uint64_t> compressed_read_{0};
};

}  // namespace

bool is_gzip_file(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  FileHandle f(fd);
  unsigned char magic[2] = {0, 0};
  return read_fully(fd, reinterpret_cast<char*>(magic), 2) == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
}

Result<std::unique_ptr<ByteStream>> open_byte_stream(const std::string& path) {
  const bool gz = is_gzip_file(path);
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return IoError(fmt::format("{}: {}", path, std::strerror(errno)));
  std::unique_ptr<ByteStream> file = std::make_unique<PlainFileStream>(path, fd);
  if (gz) return std::unique_ptr<ByteStream>(std::make_unique<GzipStream>(path, std::move(file)));
  return file;
}

std::unique_ptr<ByteStream> open_memory_stream(std::string_view bytes, const std::string& name) {
  std::unique_ptr<ByteStream> plain = std::make_unique<MemoryStream>(bytes);
  const bool gz =
      bytes.size() >= 2 && static_cast<unsigned char>(bytes[0]) == 0x1f && static_cast<unsigned char>(bytes[1]) == 0x8b;
  if (gz) return std::make_unique<GzipStream>(name, std::move(plain));
  return plain;
}

}  // namespace tracedoc
