// Forward-only byte sources for the streaming readers: a plain file read in large blocks, or a
// gzip file (one or more members, as Python's gzip writes them) inflated with ISA-L on a background
// thread, so that inflating and parsing use two cores.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "common/status.h"

namespace tracedoc {

class ByteStream {
 public:
  virtual ~ByteStream() = default;
  // Copies up to `capacity` bytes of the (uncompressed) content into `dst`; returns how many, 0 at
  // the end. A gzip stream cut short or corrupt is an error naming the file and compressed offset.
  virtual Result<size_t> read(char* dst, size_t capacity) = 0;
  // Bytes taken from the file so far (compressed bytes for gzip).
  virtual uint64_t file_bytes_read() const = 0;
  virtual bool compressed() const = 0;
};

// True when the file starts with the gzip magic bytes.
bool is_gzip_file(const std::string& path);

// Opens `path`, inflating it when it starts with the gzip magic bytes.
Result<std::unique_ptr<ByteStream>> open_byte_stream(const std::string& path);
// The same over bytes in memory (they must outlive the stream); `name` is used in errors. For the
// fuzzers and tests: every reader path without a file.
std::unique_ptr<ByteStream> open_memory_stream(std::string_view bytes, const std::string& name);

}  // namespace tracedoc
