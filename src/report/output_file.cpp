#include "report/output_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <climits>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string_view>

#include "common/pending_files.h"

namespace tracedoc {

namespace {

std::string error_text(int err) { return std::strerror(err); }

// The descriptor a path names by itself: /dev/stdout, /dev/stderr, /dev/fd/N, /proc/self/fd/N
// (and /proc/thread-self/fd/N, /proc/<this process>/fd/N).
std::optional<int> descriptor_of(std::string_view path) {
  if (path == "/dev/stdout") return STDOUT_FILENO;
  if (path == "/dev/stderr") return STDERR_FILENO;
  std::string_view rest;
  const std::string own = fmt::format("/proc/{}/fd/", ::getpid());
  for (std::string_view prefix : {std::string_view("/dev/fd/"), std::string_view("/proc/self/fd/"),
                                  std::string_view("/proc/thread-self/fd/"), std::string_view(own)}) {
    if (path.starts_with(prefix)) {
      rest = path.substr(prefix.size());
      break;
    }
  }
  if (rest.empty()) return std::nullopt;
  int fd = -1;
  const auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), fd);
  if (ec != std::errc() || end != rest.data() + rest.size() || fd < 0) return std::nullopt;
  return fd;
}

std::string folder_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

// The mode a new output gets, as `>` would make it: 0666 less the umask.
mode_t new_file_mode() {
  const mode_t mask = ::umask(0);
  ::umask(mask);
  return 0666 & ~mask;
}

}  // namespace

Result<OutputTarget> resolve_output(const std::string& path) {
  if (path.empty()) return UsageError("the output path is empty");
  std::string current = path;
  for (int links = 0; links <= 40; ++links) {
    if (const auto fd = descriptor_of(current)) {
      if (::fcntl(*fd, F_GETFD) < 0) return IoError(fmt::format("{}: descriptor {} is not open", path, *fd));
      return OutputTarget{OutputTarget::Kind::kDescriptor, current, *fd};
    }
    struct stat st {};
    if (::lstat(current.c_str(), &st) != 0) {
      if (errno != ENOENT) return IoError(fmt::format("{}: cannot write: {}", path, error_text(errno)));
      struct stat folder {};
      const std::string dir = folder_of(current);
      if (::stat(dir.c_str(), &folder) != 0 || !S_ISDIR(folder.st_mode)) {
        return IoError(fmt::format("{}: cannot create: {} is not a folder that exists", path, dir));
      }
      return OutputTarget{OutputTarget::Kind::kReplace, current, -1};
    }
    if (S_ISLNK(st.st_mode)) {
      // One link at a time, so that a link to /dev/stdout is seen as such and a dangling link is
      // followed to the file it names, as `>` follows it.
      char target[PATH_MAX];
      const ssize_t n = ::readlink(current.c_str(), target, sizeof(target) - 1);
      if (n < 0) return IoError(fmt::format("{}: cannot read the link: {}", path, error_text(errno)));
      const std::string link(target, static_cast<size_t>(n));
      current = link.starts_with('/') ? link : folder_of(current) + "/" + link;
      continue;
    }
    if (S_ISDIR(st.st_mode)) return UsageError(fmt::format("{}: is a directory; give a file name", path));
    if (S_ISREG(st.st_mode)) return OutputTarget{OutputTarget::Kind::kReplace, current, -1};
    return OutputTarget{OutputTarget::Kind::kInPlace, current, -1};
  }
  return IoError(fmt::format("{}: too many levels of symbolic links", path));
}

OutputFile::~OutputFile() { discard(); }

Status OutputFile::create_temp(const std::string& beside) {
  std::string templ = beside + ".tmp-XXXXXX";
  const int fd = ::mkstemp(templ.data());
  if (fd < 0) return IoError(fmt::format("{}: cannot create output file: {}", path_, error_text(errno)));
  temp_path_ = templ;
  PendingFiles::add(temp_path_);
  // mkstemp makes the file private (0600). A regular file replaced keeps its mode, as `sort -o`
  // keeps it; a new one is an ordinary file.
  struct stat old {};
  const bool replacing = target_.kind == OutputTarget::Kind::kReplace && ::stat(target_.path.c_str(), &old) == 0;
  (void)::fchmod(fd, replacing ? (old.st_mode & 07777) : new_file_mode());
  if (staged_) {
    ::close(fd);
    return Status::Ok();
  }
  file_ = ::fdopen(fd, "wb");
  if (!file_) {
    const int err = errno;
    ::close(fd);
    discard();
    return IoError(fmt::format("{}: cannot open output file: {}", path_, error_text(err)));
  }
  return Status::Ok();
}

// The target itself, for writing as it is: a device, FIFO or socket, or a descriptor of ours.
Status OutputFile::open_target() {
  int fd = -1;
  if (target_.kind == OutputTarget::Kind::kDescriptor) {
    std::fflush(nullptr);  // what stdio holds for that descriptor goes first
    fd = ::fcntl(target_.fd, F_DUPFD_CLOEXEC, 3);
  } else {
    fd = ::open(target_.path.c_str(), O_WRONLY | O_CLOEXEC);
  }
  if (fd < 0) return IoError(fmt::format("{}: cannot open for writing: {}", path_, error_text(errno)));
  file_ = ::fdopen(fd, "wb");
  if (!file_) {
    const int err = errno;
    ::close(fd);
    return IoError(fmt::format("{}: cannot open for writing: {}", path_, error_text(err)));
  }
  return Status::Ok();
}

Status OutputFile::open(const std::string& path) {
  discard();
  path_ = path;
  staged_ = false;
  TRACEDOC_ASSIGN_OR_RETURN(target_, resolve_output(path));
  if (target_.kind == OutputTarget::Kind::kReplace) return create_temp(target_.path);
  return open_target();
}

Status OutputFile::open_staged(const std::string& path) {
  discard();
  path_ = path;
  staged_ = true;
  TRACEDOC_ASSIGN_OR_RETURN(target_, resolve_output(path));
  if (target_.kind == OutputTarget::Kind::kReplace) return create_temp(target_.path);
  std::error_code ec;
  const std::filesystem::path dir = std::filesystem::temp_directory_path(ec);
  if (ec) return IoError(fmt::format("{}: no temporary directory: {}", path_, ec.message()));
  return create_temp((dir / "tracedoc-output").string());
}

std::string OutputFile::why_writes_fail() const {
  if (temp_path_.empty()) return "";
  const int fd = ::open(temp_path_.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return error_text(errno);
  struct stat st {};
  std::string why;
  if (::fstat(fd, &st) == 0) {
    const char zero = 0;
    if (::pwrite(fd, &zero, 1, st.st_size) != 1) {
      why = error_text(errno);
    } else {
      (void)!::ftruncate(fd, st.st_size);
    }
  }
  ::close(fd);
  return why;
}

Status OutputFile::copy_staged_into_target() {
  TRACEDOC_RETURN_IF_ERROR(open_target());
  const int in = ::open(temp_path_.c_str(), O_RDONLY | O_CLOEXEC);
  if (in < 0) return IoError(fmt::format("{}: cannot read the staged output: {}", path_, error_text(errno)));
  // Straight to the descriptor, so that a failed write keeps its errno (ENOSPC on /dev/full).
  const int out = ::fileno(file_);
  char buffer[1 << 16];
  Status st;
  for (;;) {
    ssize_t n = ::read(in, buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      st = IoError(fmt::format("{}: cannot read the staged output: {}", path_, error_text(errno)));
      break;
    }
    if (n == 0) break;
    for (const char* p = buffer; n > 0;) {
      const ssize_t w = ::write(out, p, static_cast<size_t>(n));
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) {
        st = IoError(fmt::format("{}: write failed: {}", path_, error_text(w < 0 ? errno : ENOSPC)));
        break;
      }
      p += w, n -= w;
    }
    if (!st.ok()) break;
  }
  ::close(in);
  return st;
}

Status OutputFile::commit() {
  if (staged_ && !temp_path_.empty() && target_.kind != OutputTarget::Kind::kReplace) {
    if (Status st = copy_staged_into_target(); !st.ok()) {
      discard();
      return st;
    }
  }
  if (!file_ && !(staged_ && target_.kind == OutputTarget::Kind::kReplace)) {
    return IoError(fmt::format("{}: output file not open", path_));
  }
  if (file_) {
    errno = 0;
    bool failed = std::fflush(file_) != 0 || std::ferror(file_);
    int err = errno;
    if (std::fclose(file_) != 0 && !failed) failed = true, err = errno;
    file_ = nullptr;
    if (failed) {
      discard();
      // A failed fwrite leaves ferror set and its errno (ENOSPC, EFBIG) may be gone by now.
      return IoError(fmt::format("{}: write failed: {}", path_, err ? error_text(err) : "an I/O error"));
    }
  }
  if (target_.kind == OutputTarget::Kind::kReplace) {
    if (std::rename(temp_path_.c_str(), target_.path.c_str()) != 0) {
      const int err = errno;
      discard();
      return IoError(fmt::format("{}: cannot rename output into place: {}", path_, error_text(err)));
    }
    PendingFiles::forget(temp_path_);
    temp_path_.clear();
  }
  discard();  // the staged copy of an in-place target
  return Status::Ok();
}

void OutputFile::discard() {
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

Status write_output(const std::string& path, std::string_view bytes) {
  OutputFile out;
  TRACEDOC_RETURN_IF_ERROR(out.open(path));
  if (!bytes.empty() && std::fwrite(bytes.data(), 1, bytes.size(), out.file()) != bytes.size()) {
    const int err = errno;
    out.discard();
    return IoError(fmt::format("{}: write failed: {}", path, error_text(err)));
  }
  return out.commit();
}

}  // namespace tracedoc
