// The normalized model as SQLite tables, for `tracedoc sql`: users who live in SQL query every input
// format the same way. docs/sql.md documents the tables; times are int64 ns on the trace's timebase.
//
//   kernels(start_ns, end_ns, duration_ns, rank, pid, device, stream, correlation, name, short_name,
//           grid_x, grid_y, grid_z, block_x, block_y, block_z, registers, static_smem, dynamic_smem)
//   memcpy(start_ns, end_ns, duration_ns, rank, pid, device, stream, correlation, bytes, kind,
//          src_kind, dst_kind)
//   memset(start_ns, end_ns, duration_ns, rank, pid, device, stream, correlation, bytes, value)
//   api(start_ns, end_ns, duration_ns, rank, pid, tid, correlation, name, return_value)
//   ranges(start_ns, end_ns, duration_ns, rank, pid, tid, name)            NVTX, record_function
//   ops(start_ns, end_ns, duration_ns, rank, pid, tid, name, input_dims, external_id)  PyTorch
//   steps(step, rank, pid, start_ns, end_ns, duration_ns, name, source)
//   memory(time_ns, rank, pid, device, delta_bytes, allocated_bytes)        GPU memory over time
//   findings(id, severity, confidence, scope, title, savings_ns, savings_share)
#pragma once

#include <sqlite3.h>

#include "common/status.h"
#include "diagnose/engine.h"
#include "model/trace.h"

namespace tracedoc {

// Creates and fills the tables in `db` (an empty database, usually ":memory:"). `diagnosis` fills
// the findings table (empty when null).
Status load_sql_model(const Trace& trace, const diagnose::Diagnosis* diagnosis, sqlite3* db);

}  // namespace tracedoc
