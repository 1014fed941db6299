// Writes a Trace as a PyTorch profiler (Kineto) Chrome trace in the current layout (era 5: Kineto
// 2024-05 on, PyTorch >= 2.4), so that HTA, the TensorBoard plugin, TraceLens, Perfetto and
// tracedoc's own reader open what tracedoc generates or converts.
//
// What goes where (the reverse of the reader's mapping, ingest/kineto_reader.h):
//   Trace::pytorch.ops            -> cpu_op (External id, Sequence number, Fwd thread id, Input Dims)
//   Trace::ranges                 -> user_annotation (ProfilerStep#N, enumerate(DataLoader)#..., ...)
//   Trace::pytorch.gpu_annotations-> gpu_user_annotation
//   Trace::api                    -> cuda_runtime / cuda_driver (correlation, External id of the
//                                    innermost enclosing cpu_op of the same thread, as Kineto links them)
//   Trace::kernels                -> kernel (launch configuration, blocks/warps per SM when the device's
//                                    SM count is known, est. achieved occupancy %, collective args)
//   Trace::memcpys / memsets      -> gpu_memcpy / gpu_memset, the memory kinds in the name as Kineto
//                                    writes them ("Memcpy HtoD (Pageable -> Device)", "Memset (Device)")
//   Trace::syncs                  -> cuda_sync ("Stream Sync", "Event Sync", ...)
//   Trace::pytorch.allocator      -> [memory] instants
//   Trace::pytorch.forward_backward -> fwdbwd flows; every launch with GPU work gets its ac2g pair
//   Trace::pytorch.python_functions -> python_function (when the trace was read with them)
//   threads, processes, devices   -> process_name / thread_name metadata, deviceProperties;
//                                    pytorch.rank / world_size / backend -> distributedInfo
//
// Times. Kineto writes `ts`/`dur` as exact decimal µs with three decimals ("1234.567"), relative to
// baseTimeNanoseconds. The trace's own times are written as they are (integer arithmetic, never
// through double) with its base (0 for a trace whose times are absolute epoch ns), so reading the
// file back gives the same int64 ns. The file says era 5, whatever era it was read from: an
// integer-µs trace (eras 1-3) read back is handled as an ns-exact one (no 1 µs nesting slack).
//
// Findings. Given the diagnosis of the trace (`tracedoc export --to chrome` runs it), each finding
// gets a row of its own in a "tracedoc findings" process shown first: its evidence time ranges as
// complete events of category `tracedoc_finding` (named "<rule id>: <what happens there>", args: the
// title, severity, savings, confidence, where on the timeline, the remedy), or, for a finding
// without time ranges, one instant event at the trace's start. Perfetto and chrome://tracing show
// them above the timeline; readers that do not know the category (tracedoc's, HTA's) skip them.
//
// Not written: nsys-only tables (OS runtime calls, scheduling, samples, NVTX domains, unified memory,
// OpenMP, CUDA_GPU_MEMORY_USAGE_EVENTS), which Kineto has no category for. CPU ids are written
// as pid/tid numbers from global ids: a merged rank directory written as one file loses its rank tags.
#pragma once

#include <string>

#include <vector>

#include "common/status.h"
#include "diagnose/finding.h"
#include "model/trace.h"

namespace tracedoc {

// Writes atomically (temporary file + rename); an existing file at `path` is replaced.
Status write_kineto_json(const Trace& trace, const std::string& path,
                         const std::vector<diagnose::Finding>& findings = {});

// The document as text (tests, small traces).
std::string kineto_json(const Trace& trace, const std::vector<diagnose::Finding>& findings = {});

// "1234.567": `ns` as decimal µs with three decimals, exact for every int64.
std::string kineto_time(int64_t ns);

}  // namespace tracedoc
