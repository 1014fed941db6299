#include "report/atomic_file.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "common/pending_files.h"

namespace tracedoc {

AtomicFile::~AtomicFile() { discard(); }

Status AtomicFile::open(const std::string& path) {
  path_ = path;
  std::string templ = path + ".tmp-XXXXXX";
  int fd = mkstemp(templ.data());
  if (fd < 0) return IoError(fmt::format("{}: cannot create output file: {}", path, std::strerror(errno)));
  temp_path_ = templ;
  PendingFiles::add(temp_path_);
  // mkstemp makes the file private (0600); an output is an ordinary file, as `>` would make it:
  // 0666 less the umask.
  const mode_t mask = ::umask(0);
  ::umask(mask);
  (void)::fchmod(fd, 0666 & ~mask);
  file_ = fdopen(fd, "wb");
  if (!file_) {
    ::close(fd);
    discard();
    return IoError(fmt::format("{}: cannot open output file: {}", path, std::strerror(errno)));
  }
  return Status::Ok();
}

Status AtomicFile::commit() {
  if (!file_) return IoError(fmt::format("{}: output file not open", path_));
  bool failed = std::fflush(file_) != 0 || std::ferror(file_);
  failed |= std::fclose(file_) != 0;
  file_ = nullptr;
  if (failed) {
    discard();
    return IoError(fmt::format("{}: write failed: {}", path_, std::strerror(errno)));
  }
  if (std::rename(temp_path_.c_str(), path_.c_str()) != 0) {
    std::string err = std::strerror(errno);
    discard();
    return IoError(fmt::format("{}: cannot rename output into place: {}", path_, err));
  }
  PendingFiles::forget(temp_path_);
  temp_path_.clear();
  return Status::Ok();
}

void AtomicFile::discard() {
  if (file_) {
    std::fclose(file_);
    file_ = nullptr;
  }
  if (!temp_path_.empty()) {
    ::unlink(temp_path_.c_str());
    PendingFiles::forget(temp_path_);
    temp_path_.clear();
  }
}

}  // namespace tracedoc
