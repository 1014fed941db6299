#include "ingest/trace_directory.h"

#include <dirent.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string_view>

namespace tracedoc {

namespace {

enum class Named { kNone, kCapture, kKineto, kNsysExport, kNsysReport, kNcuReport };

Named named_as(std::string_view name) {
  if (name.ends_with(".tdcap")) return Named::kCapture;
  if (name.ends_with(".json") || name.ends_with(".json.gz")) return Named::kKineto;
  if (name.ends_with(".sqlite")) return Named::kNsysExport;
  if (name.ends_with(".nsys-rep") || name.ends_with(".qdrep")) return Named::kNsysReport;
  if (name.ends_with(".ncu-rep") || name.ends_with(".ncu-repz")) return Named::kNcuReport;
  return Named::kNone;
}

const char* what_it_is(Named n) {
  switch (n) {
    case Named::kCapture: return "a tracedoc capture file";
    case Named::kKineto: return "a PyTorch profiler trace";
    case Named::kNsysExport: return "an Nsight Systems export";
    case Named::kNsysReport: return "an Nsight Systems report";
    case Named::kNcuReport: return "an Nsight Compute report";
    case Named::kNone: break;
  }
  return "a file";
}

// Why an entry named as a trace cannot be read as one, or "" when it can.
std::string unreadable_because(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    struct stat link {};
    if (errno == ENOENT && ::lstat(path.c_str(), &link) == 0 && S_ISLNK(link.st_mode))
      return "a symbolic link to nothing (dangling)";
    return std::strerror(errno);
  }
  if (S_ISDIR(st.st_mode)) return "a folder, not a file";
  if (S_ISFIFO(st.st_mode)) return "a FIFO, not a file";
  if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)) return "a device, not a file";
  if (S_ISSOCK(st.st_mode)) return "a socket, not a file";
  if (!S_ISREG(st.st_mode)) return "not a regular file";
  if (::access(path.c_str(), R_OK) != 0) return fmt::format("cannot be read: {}", std::strerror(errno));
  return "";
}

}  // namespace

Result<TraceDirectory> list_trace_directory(const std::string& dir) {
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return IoError(fmt::format("{}: cannot read the folder: {}", dir, std::strerror(errno)));
  std::vector<std::string> names;
  errno = 0;
  while (const dirent* e = ::readdir(d)) {
    const std::string_view name = e->d_name;
    if (name != "." && name != ".." && named_as(name) != Named::kNone) names.emplace_back(name);
  }
  const int listing_error = errno;
  ::closedir(d);
  if (listing_error != 0)
    return IoError(fmt::format("{}: cannot read the folder: {}", dir, std::strerror(listing_error)));
  std::sort(names.begin(), names.end());

  const std::string prefix = dir.ends_with('/') ? dir : dir + "/";
  std::vector<std::pair<std::string, Named>> readable;
  TraceDirectory out;
  for (const std::string& name : names) {
    const std::string path = prefix + name;
    const Named n = named_as(name);
    if (const std::string why = unreadable_because(path); !why.empty()) {
      out.skipped.push_back(fmt::format("{}: not read: named as {}, but {}", path, what_it_is(n), why));
    } else {
      readable.emplace_back(path, n);
    }
  }
  const bool capture =
      std::any_of(readable.begin(), readable.end(), [](const auto& f) { return f.second == Named::kCapture; });
  out.kind = capture ? TraceDirectory::Kind::kCapture : TraceDirectory::Kind::kKinetoRanks;
  const Named reads = capture ? Named::kCapture : Named::kKineto;
  const char* folder = capture ? "a tracedoc capture (its .tdcap files)" : "a PyTorch job's rank traces";
  for (const auto& [path, n] : readable) {
    if (n == reads) {
      out.files.push_back(path);
    } else {
      out.skipped.push_back(
          fmt::format("{}: not read: {}, in a folder read as {}; give it on its own", path, what_it_is(n), folder));
    }
  }
  if (out.files.empty()) {
    std::string why = fmt::format(
        "{}: no PyTorch profiler traces (*.json, *.json.gz) or tracedoc capture files (*.tdcap) to read in this folder",
        dir);
    if (!out.skipped.empty())
      why += fmt::format(" ({} entr{} not read: {})", out.skipped.size(), out.skipped.size() == 1 ? "y" : "ies",
                         out.skipped.front());
    return BadInput(why);
  }
  return out;
}

}  // namespace tracedoc
