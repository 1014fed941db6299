// A folder given as an input holds one of two things: a tracedoc capture (`tracedoc capture -o DIR`:
// one .tdcap file per process) or a PyTorch job's rank traces (tensorboard_trace_handler: one
// *.json or *.json.gz per rank). This lists which files of a folder are read, and which entries are
// not and why, so that nothing is passed over in silence:
// - a folder with .tdcap files is a capture: its .tdcap files are read, and its PyTorch traces,
//   Nsight Systems exports and reports and Nsight Compute reports are each named as not read (give
//   such a file on its own);
// - otherwise its PyTorch traces are read, and the other trace files are named as not read;
// - an entry named as a trace that is not a readable regular file (a folder, a FIFO, a device a
//   link points to, a dangling link, a file without read permission) is named as not read, why;
// - files of other names (logs, scripts, READMEs) are no trace and are not mentioned.
// A folder that cannot be listed, or holds nothing to read, is an error that says what it holds.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"

namespace tracedoc {

struct TraceDirectory {
  enum class Kind { kCapture, kKinetoRanks };
  Kind kind = Kind::kKinetoRanks;
  std::vector<std::string> files;    // to read, sorted by name
  std::vector<std::string> skipped;  // one line per entry not read: "PATH: not read: why"
};

Result<TraceDirectory> list_trace_directory(const std::string& dir);

}  // namespace tracedoc
