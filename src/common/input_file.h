// Input files read whole or by their first bytes, every failure a Status naming the file: a
// directory, a file that cannot be opened or read, one larger than its kind of file can be, or
// more than the memory limit holds.
//
// Why not std::ifstream: on a directory, libstdc++'s stream buffer throws std::ios_base::failure
// from inside the read ("Is a directory") even with the stream's exceptions off, which ends the
// process; and a stream read whole grows without a bound, so `/dev/zero` given as a report filled
// the memory. Files are read with read(2) in chunks; the memory budget (common/memory_budget.h) is
// checked before each chunk, naming the file.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "common/status.h"

namespace tracedoc {

struct FileReadLimits {
  // More bytes than this is not a file of the kind expected: "PATH: larger than 64 MiB: not a
  // <what>". 0: no bound but the memory limit.
  uint64_t max_bytes = 0;
  std::string_view what = "file";
};

// Opens `path` for reading: a file descriptor, or an error naming the file ("is a directory",
// "No such file or directory", "Permission denied").
Result<int> open_input(const std::string& path);

// The whole file.
Result<std::string> read_file(const std::string& path, const FileReadLimits& limits = {});

// The file read in chunks, each handed to `consume` as it arrives (false from `consume` stops the
// read; the Status it left is returned by the caller's own means). For readers that check a
// header before the body is read, or inflate as they go.
Status read_file_chunks(const std::string& path, const std::function<bool(std::string_view)>& consume);

// Up to `bytes` from the start of the file (fewer when it is shorter), for telling formats apart.
Result<std::string> read_file_head(const std::string& path, size_t bytes);

}  // namespace tracedoc
