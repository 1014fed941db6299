// Reads what `tracedoc capture` recorded (ingest/capture_format.h) into the trace model: one
// .tdcap file (one process), or a capture directory (every .tdcap in it, one process each, merged
// on their common clock). The model is the one nsys exports give: times in ns from the session
// start (the earliest process start), NVTX push/pop, start/end ranges and marks as nsys numbers
// them, domains as domain-create rows, CUDA API calls with their version-suffixed names, kernels,
// copies, memsets, syncs and GPU memory events; `source.tables` names the nsys tables that would
// hold them, so every report and command treats a capture like an export.
//
// Whole frames are read; a torn last frame (the process died while writing it) and frames after a
// damaged one are counted in `Trace::warnings.torn_frames`, not an error. Unclosed push/pop and
// start/end ranges (the process died inside them) keep a NULL end, as nsys keeps them.
#pragma once

#include <string>
#include <string_view>

#include "common/status.h"
#include "model/trace.h"

namespace tracedoc {

// The file starts with the capture magic.
bool looks_like_capture(const std::string& path);
// The directory holds at least one .tdcap file.
bool is_capture_directory(const std::string& path);

Result<Trace> read_capture(const std::string& path);

// Once the program has ended, on the machine it ran on: names every code address the capture's
// files recorded (CPU samples' and OS calls' stacks) from the program's ELF files
// (ingest/elf_symbols.h) and appends the names to each file as a frame of kSymbol records. A capture
// then reads the same anywhere, and after the program's binaries are rebuilt; a file without them
// (the capture command did not finish) is named from the ELF files when read. Returns how many
// addresses were named.
Result<int64_t> symbolize_capture(const std::string& path);

}  // namespace tracedoc
