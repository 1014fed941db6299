// Opens any supported input by content: an nsys SQLite export, an nsys report (.nsys-rep), which is
// exported through the `nsys` binary when one is on PATH, a PyTorch profiler trace (.json,
// .json.gz), a directory of per-rank PyTorch profiler traces, or an Nsight Compute report or CSV
// export read as a timeline of its own (ingest/ncu_timeline.h).
#pragma once

#include <string>

#include "common/status.h"
#include "ingest/nsys_sqlite_reader.h"
#include "model/trace.h"

namespace tracedoc {

struct OpenOptions {
  NsysReadOptions nsys;  // its `tables` also picks the opt-in tables of PyTorch traces (kLoadPythonFunctions)
  int64_t rank = -1;     // PyTorch traces: keep only this rank (-1: all ranks)
};

Result<Trace> open_trace(const std::string& path, const OpenOptions& options = {});

}  // namespace tracedoc
