// Opens any supported input by content: an nsys SQLite export, or an nsys report (.nsys-rep),
// which is exported through the `nsys` binary when one is on PATH.
#pragma once

#include <string>

#include "common/status.h"
#include "ingest/nsys_sqlite_reader.h"
#include "model/trace.h"

namespace tracedoc {

struct OpenOptions {
  NsysReadOptions nsys;
};

Result<Trace> open_trace(const std::string& path, const OpenOptions& options = {});

}  // namespace tracedoc
