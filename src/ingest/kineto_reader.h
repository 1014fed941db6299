// Reads PyTorch profiler traces (Kineto Chrome-trace JSON, `.json` or `.json.gz`, every format era
// from 2021 on, and PyTorch's legacy bare-array exporter) into the trace model.
//
// The file is streamed: it is read (and inflated) in blocks and parsed one event at a time, so memory
// stays bounded by the model plus the largest single event, whatever the file size (and, with more
// than one thread, three windows of at most 32 MB: ingest/kineto_event_pipeline.h).
//
// Mapping onto the model (the same tables nsys exports fill, so every nsys report runs on them):
//   kernel / Kernel                        -> Trace::kernels
//   gpu_memcpy / Memcpy                    -> Trace::memcpys (direction and memory kinds from the name)
//   gpu_memset / Memset                    -> Trace::memsets
//   cuda_runtime / cuda_driver / Runtime   -> Trace::api (runtime and driver classes)
//   cuda_sync                              -> Trace::syncs
//   user_annotation (record_function)      -> Trace::ranges as NVTX push/pop ranges on the CPU thread
//   cpu_op / Operator / legacy events      -> Trace::pytorch.ops; in the eras without a
//                                             user_annotation category, names with a '#'
//                                             (ProfilerStep#N, Optimizer.step#...) go to Trace::ranges
//   gpu_user_annotation                    -> Trace::pytorch.gpu_annotations
//   [memory] instants                      -> Trace::pytorch.allocator
//   python_function                        -> counted; stored in Trace::pytorch.python_functions
//                                             only with KinetoReadOptions::python_functions
// Times: int64 ns, exactly ts*1000 of the file (decimal fixed point, never through double); for
// traces with baseTimeNanoseconds the values stay relative to that base (Trace::pytorch.base_time_ns).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "model/trace.h"

namespace tracedoc {

// What a read stores beyond the tables every report may read. The defaults keep a read as cheap as
// it was before these existed: existing callers, benchmarks and `summary` pay nothing for them.
struct KinetoReadOptions {
  bool python_functions = false;  // store python_function events (else only counted)
  // One event (or top-level member) larger than this is skipped without being buffered and
  // counted in ReadWarnings::oversized_events: real events are under a megabyte, while one string
  // or args value of gigabytes (a damaged or hostile file) would otherwise have to fit in memory.
  size_t max_unit_bytes = size_t{256} << 20;
  // With more than one thread in the task pool (common/task_pool.h), the traceEvents array is
  // tokenized in runs of about this many bytes at once while one thread builds the model from them
  // in document order (ingest/kineto_event_pipeline.h); the trace read is the same on any number
  // of threads. 0 reads on one thread. Tests make runs small to put small traces through it.
  size_t parallel_run_bytes = size_t{1} << 18;
};

// True when the first bytes look like a Kineto/Chrome trace: gzip magic, or JSON text starting
// with '{' or '['.
bool looks_like_kineto(const std::string& path);

// One trace file. The rank comes from distributedInfo, else from a `rank-N`/`rank_N`/`rankN` in
// the file name, else stays -1.
Result<Trace> read_kineto_trace(const std::string& path, const KinetoReadOptions& options = {});

// The same from a stream (plain or already inflating), or from bytes in memory (plain or gzip);
// `name` stands for the file in error messages.
class ByteStream;
Result<Trace> read_kineto_stream(ByteStream& in, const std::string& name, const KinetoReadOptions& options = {});
Result<Trace> read_kineto_bytes(std::string_view bytes, const std::string& name, const KinetoReadOptions& options = {});

// A directory of per-rank files (tensorboard_trace_handler layout): every *.json / *.json.gz that
// is a trace, read as many at once as the task pool has threads (common/task_pool.h) and merged
// into one Trace whose CPU thread ids carry the rank (global_tid's upper bits), with each rank's
// clock aligned by its baseTimeNanoseconds. `only_rank` >= 0 keeps just that rank.
Result<Trace> read_kineto_directory(const std::string& dir, int64_t only_rank = -1,
                                    const KinetoReadOptions& options = {});

// The trace files of a rank directory, sorted by name (for tests and listings).
std::vector<std::string> kineto_files_in(const std::string& dir);

// About the memory the model of one trace file takes: a fifth of its JSON (the 1 GB tiled trace's
// model is 90 MB), a gzip file's JSON being the size its trailer records, at least 8x the file.
uint64_t kineto_model_estimate(const std::string& path);
// How many of `files` read_kineto_directory reads at once: all of them (the pool runs as many as it
// has threads), unless the --max-memory limit less the memory in use holds fewer of the largest's
// estimate; at least 1.
size_t kineto_files_at_once(const std::vector<std::string>& files);

}  // namespace tracedoc
