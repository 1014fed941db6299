// The physics of one synthetic PyTorch process: CPU threads that run operators and make CUDA calls,
// GPU streams that run what was launched in order, and the caching allocator. Everything it records
// goes into a Trace as the readers would have filled it, so every report runs on it, and it writes
// out as both an nsys export and a Kineto trace.
//
// Rules kept, whatever the caller does:
//  - a thread's clock only moves forward; operators and ranges nest (begin/end pairs);
//  - a GPU operation starts after its launch call returns and after the previous operation on its
//    stream ends (and after any cross-stream wait), so launches always precede their work;
//  - a blocking call (cudaMemcpy from pageable memory, cudaStreamSynchronize, ...) returns only
//    after the GPU work it waits for has finished;
//  - correlation ids are unique in the process; External ids number operators in order.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "model/trace.h"
#include "synth/kernel_catalog.h"

namespace tracedoc::synth {

// Deterministic jitter (SplitMix64): the same seed gives the same trace on every machine.
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t next();
  // base ± per_mille/1000 of it, uniform (integer arithmetic).
  TimeNs jitter(TimeNs base, int per_mille);
  // 0 .. n-1.
  uint64_t below(uint64_t n) { return n ? next() % n : 0; }

 private:
  uint64_t state_;
};

struct CpuThread {
  int64_t global_tid = 0;
  TimeNs now = 0;
  std::vector<uint32_t> open_ops, open_ranges;
};

struct GpuOp {
  TimeNs start = 0, end = 0;
  int64_t correlation = 0;
  uint32_t row = 0;  // row in its table
};

class Timeline {
 public:
  // `trace` receives the events; pid, device and seed make each rank's process its own.
  Timeline(Trace& trace, int64_t pid, int32_t device, int32_t sm_count, uint64_t seed);

  Trace& trace() { return t_; }
  Rng& rng() { return rng_; }
  int32_t device() const { return device_; }
  CpuThread main, autograd;

  // CPU structure. begin_op/end_op add the dispatcher's own time around the body.
  void begin_range(CpuThread& th, std::string_view name);
  void end_range(CpuThread& th);
  // `input_types`: the "Input type" list the profiler records with the shapes (element types).
  uint32_t begin_op(CpuThread& th, std::string_view name, std::string_view input_dims = {},
                    int64_t sequence_number = kNoValue, int64_t fwd_thread_id = kNoValue,
                    std::string_view input_types = {});
  void end_op(CpuThread& th);
  void cpu_work(CpuThread& th, TimeNs duration) { th.now += duration; }
  // A forward -> backward arrow between two operators (Kineto's fwdbwd flow).
  void link_backward(uint32_t forward_op, uint32_t backward_op);

  // GPU work. `not_before`: a cross-stream dependency (cudaStreamWaitEvent) the work must wait for.
  GpuOp launch(CpuThread& th, const KernelShape& k, int32_t stream, TimeNs not_before = 0,
               std::string_view api = "cudaLaunchKernel", TimeNs api_ns = 0);
  // A copy: async (cudaMemcpyAsync) or blocking (cudaMemcpy, which returns when the copy is done).
  // `bytes_per_us`: the link speed (20000 = 20 GB/s).
  GpuOp copy(CpuThread& th, CopyKind kind, MemKind src, MemKind dst, int64_t bytes, int64_t bytes_per_us, bool blocking,
             int32_t stream);
  // A runtime call with no GPU work of its own (cudaEventRecord, cudaStreamWaitEvent, ...).
  void api_call(CpuThread& th, std::string_view name, TimeNs duration);
  // cudaStreamSynchronize / cudaDeviceSynchronize: the thread waits for the stream(s) to drain.
  void stream_sync(CpuThread& th, int32_t stream);
  void device_sync(CpuThread& th);
  TimeNs stream_free(int32_t stream) const;
  void stream_wait(int32_t stream, TimeNs until);  // the stream starts nothing before `until`
  // Moves a kernel recorded by launch() (NCCL kernels, whose times depend on the other ranks).
  void place_kernel(uint32_t row, TimeNs start, TimeNs end, int32_t stream);

  // The caching allocator: [memory] events with its totals. Sizes round up to 512 bytes.
  int64_t allocate(CpuThread& th, int64_t bytes);  // returns a handle for release()
  void release(CpuThread& th, int64_t handle);
  // Memory held before the profiler started (weights, optimizer state): in the totals, no event.
  void preallocated(int64_t bytes);

  int64_t next_correlation() { return ++correlation_; }

 private:
  void memory_event(CpuThread& th, int64_t address, int64_t bytes);
  int64_t api(CpuThread& th, std::string_view name, TimeNs start, TimeNs end);

  Trace& t_;
  Rng rng_;
  int64_t pid_;
  int32_t device_, sm_count_;
  int64_t correlation_ = 0, external_id_ = 0;
  std::map<int32_t, TimeNs> stream_free_;
  // Allocator state.
  int64_t allocated_ = 0, reserved_ = 0, next_address_ = 0;
  std::map<int64_t, std::vector<int64_t>> free_blocks_;  // size -> cached addresses
  std::map<int64_t, std::pair<int64_t, int64_t>> live_;  // handle -> (address, size)
  int64_t next_handle_ = 0;
};

}  // namespace tracedoc::synth
