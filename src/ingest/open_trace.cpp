#include "ingest/open_trace.h"

#include <fmt/format.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "common/input_file.h"
#include "common/memory_budget.h"
#include "ingest/capture_reader.h"
#include "ingest/kineto_reader.h"
#include "ingest/ncu_timeline.h"
#include "ingest/trace_directory.h"

namespace tracedoc {

namespace {

std::string find_on_path(const std::string& program) {
  const char* path = std::getenv("PATH");
  if (!path) return {};
  std::string p(path);
  size_t pos = 0;
  while (pos <= p.size()) {
    size_t next = p.find(':', pos);
    const std::string dir = p.substr(pos, next == std::string::npos ? std::string::npos : next - pos);
    // An empty PATH entry means the current directory.
    const std::string candidate =
        fmt::format("{}/{}", dir.empty() ? std::string_view(".") : std::string_view(dir), program);
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    if (next == std::string::npos) break;
    pos = next + 1;
  }
  return {};
}

// Runs `nsys export` into a private temporary directory (never next to the input) and reads it.
Result<Trace> open_nsys_rep(const std::string& path, const OpenOptions& options) {
  const std::string nsys = find_on_path("nsys");
  if (nsys.empty()) {
    return BadInput(
        fmt::format("{}: an Nsight Systems report (.nsys-rep) needs exporting first and no `nsys` is on PATH; run "
                    "`nsys export --type sqlite --output report.sqlite {}` and pass the .sqlite file",
                    path, path));
  }
  std::error_code ignored;  // the temporary folder's checks and clean-up never throw
  const std::filesystem::path temp = std::filesystem::temp_directory_path(ignored);
  std::string dir_template = ((temp.empty() ? std::filesystem::path("/tmp") : temp) / "tracedoc-XXXXXX").string();
  if (!::mkdtemp(dir_template.data()))
    return IoError(fmt::format("cannot create a temporary directory: {}", std::strerror(errno)));
  const std::string out = dir_template + "/export.sqlite";
  const std::string log = dir_template + "/nsys.log";
  pid_t pid = ::fork();
  if (pid == 0) {
    int logfd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (logfd >= 0) {
      ::dup2(logfd, 1);
      ::dup2(logfd, 2);
    }
    ::execl(nsys.c_str(), "nsys", "export", "--type", "sqlite", "--force-overwrite", "true", "--output", out.c_str(),
            path.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  int status = 0;
  if (pid < 0 || ::waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0 ||
      !std::filesystem::exists(out, ignored)) {
    // nsys's own reason (e.g. "Report was created in a newer version"), without its progress bars.
    std::string reason;
    std::ifstream in(log);
    for (std::string line; std::getline(in, line);) {
      if (line.find("Processing") != std::string::npos || line.find_first_not_of(" \t\r") == std::string::npos)
        continue;
      reason = line;
      break;
    }
    std::filesystem::remove_all(dir_template, ignored);
    return BadInput(
        fmt::format("{}: `nsys export` could not export this report{}{}", path, reason.empty() ? "" : ": ", reason));
  }
  auto trace = read_nsys_sqlite(out, options.nsys);
  std::filesystem::remove_all(dir_template, ignored);
  if (trace.ok()) trace->source.path = path;
  return trace;
}

// Whether a process holds (or waits for) SQLite's locks on `path`: a write lock on the lock bytes
// of the database (rollback journal mode), or on the WAL index (-shm). F_GETLK only asks; it takes
// no lock and needs no write access.
bool sqlite_writer_alive(const std::string& path) {
  const auto locked = [](const std::string& file, off_t start, off_t length) {
    const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    struct flock probe {};
    probe.l_type = F_WRLCK;
    probe.l_whence = SEEK_SET;
    probe.l_start = start;
    probe.l_len = length;
    const bool held = ::fcntl(fd, F_GETLK, &probe) == 0 && probe.l_type != F_UNLCK;
    ::close(fd);
    return held;
  };
  constexpr off_t kPendingByte = 0x40000000;  // SQLite's lock bytes: pending, reserved, then the shared range
  return locked(path, kPendingByte, 2 + 510) || locked(path + "-shm", 120, 8);
}

// The first bytes of a file, enough to tell a format by.
std::string file_head(const std::string& path) {
  auto head = read_file_head(path, 1 << 16);
  return head.ok() ? std::move(*head) : std::string();
}

}  // namespace

Result<Trace> open_trace(const std::string& path, const OpenOptions& options) {
  MemoryBudget::set_subject(path);  // what the memory watchdog's message names
  // The opt-in tables (nsys_sqlite_reader.h) are stored only when asked for by their bit.
  KinetoReadOptions kineto;
  kineto.python_functions = (options.nsys.tables & kLoadPythonFunctions) != 0;
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return IoError(fmt::format("{}: {}", path, std::strerror(errno)));
  if (S_ISDIR(st.st_mode)) {
    TRACEDOC_ASSIGN_OR_RETURN(const TraceDirectory listed, list_trace_directory(path));
    if (listed.kind == TraceDirectory::Kind::kCapture) return read_capture(path);
    return read_kineto_directory(path, options.rank, kineto);
  }
  if (::access(path.c_str(), R_OK) != 0) return IoError(fmt::format("{}: cannot read: {}", path, std::strerror(errno)));
  if (st.st_size == 0) return BadInput(fmt::format("{}: empty file", path));
  if (looks_like_sqlite(path)) {
    // tracedoc never takes SQLite locks (the input may sit on a read-only or network file system),
    // so a file that another program is writing right now is detected by its hot journal instead;
    // whether that program is still alive, by the locks it holds.
    for (const char* suffix : {"-journal", "-wal"}) {
      struct stat js {};
      if (::stat((path + suffix).c_str(), &js) == 0 && js.st_size > 0) {
        if (sqlite_writer_alive(path)) {
          return BadInput(
              fmt::format("{}: locked: another program is writing it ({}{} exists); retry when it has finished", path,
                          path, suffix));
        }
        return BadInput(fmt::format(
            "{}: a {} file exists beside it ({}{}) but no program is writing: the export was left unfinished; open it "
            "once with the sqlite3 shell to {} it, or export it again",
            path, suffix, path, suffix, std::string(suffix) == "-wal" ? "checkpoint" : "roll back"));
      }
    }
    return read_nsys_sqlite(path, options.nsys);
  }
  if (path.ends_with(".nsys-rep") || path.ends_with(".qdrep")) return open_nsys_rep(path, options);
  if (looks_like_capture(path)) return read_capture(path);
  if (looks_like_kineto(path)) {
    auto trace = read_kineto_trace(path, kineto);
    if (trace.ok() && options.rank >= 0 && trace->pytorch.rank != options.rank) {
      return UsageError(fmt::format("{}: --rank {}: this trace is rank {}", path, options.rank, trace->pytorch.rank));
    }
    return trace;
  }
  if (path.ends_with(".ncu-rep") || path.ends_with(".ncu-repz") || looks_like_ncu_input(file_head(path)))
    return read_ncu_timeline(path);
  return BadInput(
      fmt::format("{}: unrecognized input: not an Nsight Systems export (.sqlite, .nsys-rep), a PyTorch profiler trace "
                  "(.json, .json.gz), a tracedoc capture (.tdcap) or an Nsight Compute report (.ncu-rep, ncu --csv)",
                  path));
}

}  // namespace tracedoc
