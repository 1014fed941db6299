// Reads Nsight Compute reports (`ncu -o`): `.ncu-rep`, and `.ncu-repz` (the same stream in zstd),
// natively, with the wire-format decoder of ingest/protobuf_wire.h and the message layouts of the
// format's documentation (docs/ncu.md says which fields; nothing of NVIDIA's is copied).
//
// The container ("Version 7"): the magic "NVR\0", a length-prefixed FileHeader, then blocks, each a
// length-prefixed BlockHeader and a payload of length-prefixed messages: the kernels' sources
// (skipped), the profile results (one per profiled launch) and range results (counted, not read).
// Every length is checked against the bytes left; a cut or corrupt report is one BadInput line
// naming the file and the byte offset, an unknown FileHeader version is refused, and fields this
// reader does not know are skipped and counted (NcuReport::skipped_fields).
#pragma once

#include <string>
#include <string_view>

#include "common/status.h"
#include "model/ncu_report.h"

namespace tracedoc {

// Whether the bytes start as an Nsight Compute report does (the NVR magic, or a zstd frame).
bool is_ncu_report_bytes(std::string_view bytes);

Result<NcuReport> read_ncu_report(const std::string& path);
// The same over the report's bytes (zstd-compressed or not); `name` is used in errors and as the
// report's path. For the fuzzer and the tests.
Result<NcuReport> read_ncu_report_bytes(std::string_view bytes, const std::string& name);

}  // namespace tracedoc
