// Writes a Trace as an Nsight Systems SQLite export (schema 3.24-compatible subset: the tables and
// columns that `nsys stats` reads), so that nsys's own tools and SQL written for nsys exports work on it.
#pragma once

#include <string>

#include "common/status.h"
#include "model/trace.h"

namespace tracedoc {

// Writes atomically (temporary file + rename); an existing file at `path` is replaced.
Status write_nsys_sqlite(const Trace& trace, const std::string& path);

}  // namespace tracedoc
