// One rank of the synthetic training loop: the Python process that loads a batch, runs the model
// forward on its main thread and backward on the autograd thread, all-reduces gradients (ranks > 1),
// steps the optimizer and reads the loss, once per ProfilerStep#N, with the plants of the plan in it.
//
// The model: a transformer encoder (fp16 autocast) over 8 sequences of 512 input vectors of 512
// features (the 8 MiB fp32 batch), projected to 1024 wide, `layers` blocks (layer norm, QKV, two
// attention matmuls with a softmax, output projection, residual add, layer norm, 4096-wide MLP with
// GELU, residual add), then layer norm, a 1000-class head and cross entropy: 12 forward kernels a
// block plus 5, and about twice as many backward.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/trace.h"
#include "synth/kernel_catalog.h"
#include "synth/synth_spec.h"
#include "synth/timeline.h"

namespace tracedoc::synth {

// What each step does: the clean loop's shape and the plants, sized in time and bytes (the plants
// from the clean loop's measured step, training_loop.cpp). Zero / false: not planted.
struct LoopPlan {
  int32_t layers = 3, steps = 12, ranks = 1;
  int64_t batch_bytes = int64_t{8} << 20;
  TimeNs dataloader_ns = 300'000;
  StepSync step_sync = StepSync::kItem;
  Precision precision = Precision::kHalf;  // kFloat: FP32 matmuls without tensor cores
  double gemm_slowdown = 1;                // matmul durations times this
  int64_t pageable_bytes = 0;              // the batch comes from pageable memory with cudaMemcpy
  std::vector<uint8_t> long_tail_steps;    // per step: 1 = its first softmax runs 10x longer
  int64_t leak_per_step = 0;               // bytes kept forever each step
  int32_t sync_stalls = 0;                 // aten::nonzero + cudaStreamSynchronize in the forward
  TimeNs extra_copy_ns = 0;                // per step: activation offload D2H + reload H2D
  int32_t tiny_ops = 0;                    // per step: launch-bound ops (kernels of launch_shape)
  LaunchShape launch_shape = LaunchShape::kTinyKernels;
  TimeNs hot_kernel_ns = 0;    // per step: the 100-thread-block extension kernel
  TimeNs layout_copy_ns = 0;   // per step: transpose + contiguous copies
  TimeNs idle_cpu_ns = 0;      // per step: CPU-only operators after the step's work
  bool exposed_comm = false;   // all-reduces after backward, not under it
  TimeNs exposed_comm_ns = 0;  // their total time per step
  double straggler = 0;        // rank 1's kernels take (1 + this) times longer
};

// An all-reduce launched in a step, waiting for the other ranks to be placed on the GPU.
struct PendingCollective {
  uint32_t kernel_row = 0;
  TimeNs earliest_start = 0;  // launched, its gradients ready and the NCCL stream free
  TimeNs transfer_ns = 0;     // the transfer itself, once every rank has arrived
};

class RankProcess {
 public:
  RankProcess(const LoopPlan& plan, const SynthSpec& spec, int32_t rank, TimeNs start);

  // The step up to the end of backward: every all-reduce is launched and left pending.
  void step_begin(int32_t step);
  std::vector<PendingCollective>& pending() { return pending_; }
  // Puts a pending all-reduce on the GPU.
  void place_collective(const PendingCollective& c, TimeNs start, TimeNs end);
  // The rest of the step: the optimizer waits for `gradients_ready` (the last all-reduce's end).
  void step_end(int32_t step, TimeNs gradients_ready);

  // Sorts the tables and returns the trace (once, at the end).
  Trace finish();

  // Per step, for sizing the plants: the step's span on the CPU and the GPU time it launched.
  const std::vector<TimeNs>& step_ns() const { return step_ns_; }
  const std::vector<TimeNs>& gpu_ns() const { return gpu_ns_; }

 private:
  struct Saved {          // a forward operator whose backward runs later
    int kind = 0;         // what it computes (rank_process.cpp, Kind)
    uint32_t op_row = 0;  // the operator carrying the sequence number
    int64_t sequence = 0;
    std::vector<int64_t> activations;  // allocator handles its backward frees
    int32_t bucket_end = -1;           // DDP: this gradient completes bucket N
  };
  TimeNs jitter(TimeNs base, int per_mille = 30) { return tl_.rng().jitter(base, per_mille); }
  TimeNs compute(TimeNs base) const;  // a compute kernel's duration on this rank (straggler)
  GpuOp kernel(CpuThread& th, KernelShape k, TimeNs not_before = 0);
  // The launch-bound plants' launches: `k` as is (no jitter), with a launch call of `launch_ns`;
  // the matmul slowdown and the rank's speed applied as kernel() applies them, counted in the step.
  GpuOp launch_costed(CpuThread& th, KernelShape k, TimeNs launch_ns);
  void python(CpuThread& th, TimeNs base) { tl_.cpu_work(th, jitter(base, 300)); }
  int64_t sequence() { return ++sequence_; }

  void data_loader();
  void batch_to_device();
  void forward(int32_t step);
  void forward_block(int32_t step, int32_t layer);
  void linear(int kind, std::string_view dims, TimeNs gemm_ns, int64_t out_bytes, int64_t n, int64_t k);
  void simple_op(int kind, std::string_view name, std::string_view inner, std::string_view dims, Precision element,
                 const KernelShape& k, int64_t out_bytes);
  void sync_stall();
  void launch_bound_ops();
  void eager_block_ops();
  void gemm_queue_ops();
  void memcpy_heavy();
  void backward();
  // A backward node's kernels, each under the operator that launches it (none: the previous one's),
  // with the shapes the profiler records for that operator.
  struct BackwardKernel {
    std::string op, dims;
    KernelShape kernel;
  };
  void backward_node(const Saved& s, std::string_view node, const std::vector<BackwardKernel>& kernels,
                     int64_t weight_grad_bytes);
  void all_reduce(CpuThread& th, int32_t bucket);
  void optimizer();
  void end_of_step_sync();
  void idle_cpu_work();

  const LoopPlan& plan_;
  int32_t rank_;
  Trace trace_;
  Timeline tl_;
  int64_t sequence_ = 0;
  std::vector<Saved> saved_;    // forward ops in order
  std::vector<int64_t> grads_;  // gradient buffers, freed by zero_grad
  int64_t batch_ = 0;
  std::vector<PendingCollective> pending_;
  TimeNs step_start_ = 0, gpu_in_step_ = 0;
  std::vector<TimeNs> step_ns_, gpu_ns_;
};

}  // namespace tracedoc::synth
