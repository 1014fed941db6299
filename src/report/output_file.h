// Output files (`-o`, exports, Python's View.save and to_parquet), written the way users expect of
// `cp`, `tar -f` and `sort -o`:
// - a new path, or one that is a regular file, is written to a temporary name beside it and renamed
//   into place when complete, so that a failed or interrupted command never leaves half a file; a
//   symlink is followed and its target replaced, the link kept;
// - a path that exists and is not a regular file (a character device such as /dev/null, a FIFO, a
//   socket) is opened and written in place, with no temporary file: renaming over it would turn the
//   machine's /dev/null into a regular file, or remove the FIFO a reader waits on;
// - /dev/stdout, /dev/stderr, /dev/fd/N and /proc/self/fd/N write to that descriptor of this
//   process, as `-o -` writes to standard output (appending where the shell opened it with `>>`);
// - a directory is an error, as is a path under a folder that does not exist.
#pragma once

#include <cstdio>
#include <string>

#include "common/status.h"

namespace tracedoc {

// How a path is written.
struct OutputTarget {
  enum class Kind {
    kReplace,     // a new or regular file: a temporary file renamed onto `path`
    kInPlace,     // a device, FIFO or socket: opened for writing as it is
    kDescriptor,  // one of this process's descriptors (`fd`)
  };
  Kind kind = Kind::kReplace;
  std::string path;  // the file written: the given path with its symlinks followed
  int fd = -1;
};

// Where `path` goes, or why it cannot be written (a directory; a missing folder).
Result<OutputTarget> resolve_output(const std::string& path);

class OutputFile {
 public:
  OutputFile() = default;
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;
  ~OutputFile();  // discards a temporary file unless commit() succeeded

  // Opens `path` for writing through file().
  Status open(const std::string& path);
  // For a writer that needs a file name of its own (SQLite): staging_path() names a new, empty file
  // for it to write and close; commit() renames it into place, or copies it into a target that is
  // written in place (that copy staged in the temporary directory, not beside a device).
  Status open_staged(const std::string& path);
  const std::string& staging_path() const { return temp_path_; }
  // Why a write to the staged file fails now ("No space left on device", "File too large"), found
  // by trying one byte past its end; empty when writes succeed. For writers that report a failure
  // without the system's reason (SQLite's "disk I/O error").
  std::string why_writes_fail() const;

  FILE* file() const { return file_; }
  const std::string& path() const { return path_; }
  // Completes the output: flushes and renames or copies. The error names the path given.
  Status commit();
  void discard();

 private:
  Status create_temp(const std::string& beside);
  Status open_target();
  Status copy_staged_into_target();

  std::string path_;  // as given, for messages
  OutputTarget target_;
  std::string temp_path_;
  FILE* file_ = nullptr;
  bool staged_ = false;
};

// `bytes` written whole to `path` as OutputFile writes (Python's View.save and to_parquet).
Status write_output(const std::string& path, std::string_view bytes);

}  // namespace tracedoc
