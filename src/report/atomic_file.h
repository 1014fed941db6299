// Files are written to a temporary name beside the target and renamed into place on success, so
// an interrupted or failed command never leaves a half-written output file.
#pragma once

#include <cstdio>
#include <string>

#include "common/status.h"

namespace tracedoc {

class AtomicFile {
 public:
  AtomicFile() = default;
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  ~AtomicFile();  // discards the temporary file unless commit() succeeded

  Status open(const std::string& path);
  FILE* file() const { return file_; }
  Status commit();
  void discard();

 private:
  std::string path_, temp_path_;
  FILE* file_ = nullptr;
};

}  // namespace tracedoc
