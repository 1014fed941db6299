// The GPU kernels the synthetic training loop launches: their names as PyTorch, cuBLAS and NCCL
// name them (demangled, as CUPTI reports them), their launch configurations, and how long each
// runs on the reference GPU (an A100 with fp16 autocast, the clean loop's model), before jitter.
//
// Names carry the element type (c10::Half under autocast, float for the FP32 matmuls of the
// tensor_cores_unused plant). Durations are the loop's own choice of model size; what matters to
// the tests is that they are fixed, realistic in proportion, that every kernel of the clean loop
// runs longer than its launch call (no "short kernels" in HTA's sense), and that none runs faster
// than the reference GPU can for the shapes its operator records: the memory-bound kernels'
// durations are given for fp16 and doubled for float, which moves twice the bytes.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace tracedoc::synth {

using TimeNs = int64_t;

struct KernelShape {
  std::string name;
  int32_t grid_x = 1, grid_y = 1, grid_z = 1;
  int32_t block_x = 1, block_y = 1, block_z = 1;
  int32_t registers = 32;
  int32_t shared_memory = 0;   // static + dynamic, bytes
  TimeNs duration = 0;         // on the reference GPU
  bool gemm = false;           // a matmul (slowed down by tensor_cores_unused)
  bool communication = false;  // NCCL: Kineto reports no occupancy for these
};

// Kineto's "est. achieved occupancy %" (CudaDeviceProperties.cpp kernelOccupancy): blocks per SM
// (grid / SMs, at most what fits on an SM by threads, registers, shared memory and the 32-block
// limit of sm_80) times threads per block over 2048 threads per SM, as a whole percent.
double estimated_occupancy(const KernelShape& k, int32_t sm_count);

// Element types as they appear in kernel names.
enum class Precision : uint8_t { kHalf, kFloat };

// Matmuls: forward (tn), input gradient (nn), weight gradient (nt), for linear layers (cuBLAS
// xmma) and batched attention matmuls; with tensor cores, or FP32 SIMT (ampere/volta_sgemm).
// An m x n output over a depth of k: the kernel (its tile shape and pipeline) depends on k, as
// cuBLAS's heuristics choose it, and deep products split k over two blocks; so one name and grid
// always means one problem shape, and one duration (no accidental "long tail").
enum class GemmRole : uint8_t { kForward, kInputGrad, kWeightGrad };
KernelShape linear_gemm(GemmRole role, Precision p, int64_t m, int64_t n, int64_t k, TimeNs duration);
KernelShape batched_gemm(GemmRole role, Precision p, TimeNs duration);

// PyTorch's own kernels.
KernelShape layer_norm_forward(Precision p, TimeNs duration);
KernelShape layer_norm_backward_input(Precision p, TimeNs duration);
KernelShape layer_norm_backward_weights(Precision p, TimeNs duration);
KernelShape softmax_forward(Precision p, TimeNs duration);
KernelShape softmax_backward(Precision p, TimeNs duration);
KernelShape add(Precision p, TimeNs duration);
KernelShape gelu_forward(Precision p, TimeNs duration);
KernelShape gelu_backward(Precision p, TimeNs duration);
KernelShape bias_grad_sum(Precision p, TimeNs duration);
KernelShape log_softmax_forward(TimeNs duration);
KernelShape log_softmax_backward(TimeNs duration);
KernelShape nll_loss_forward(TimeNs duration);
KernelShape nll_loss_backward(TimeNs duration);
KernelShape fill(TimeNs duration);
// AdamW's foreach steps; `which` picks one of the functor variants.
KernelShape multi_tensor_apply(int which, TimeNs duration);
KernelShape direct_copy(Precision p, TimeNs duration);                  // aten::copy_ / contiguous
KernelShape tiny_elementwise(int which, Precision p, TimeNs duration);  // launch_bound plant
KernelShape nonzero_count(TimeNs duration);                             // aten::nonzero, before its sync
KernelShape nonzero_write(TimeNs duration);                             // aten::nonzero, after it
// kernel_config plant: a user extension's kernel with 100 threads per block, 12% occupancy.
KernelShape badly_configured(Precision p, TimeNs duration);
KernelShape nccl_all_reduce(TimeNs duration);

}  // namespace tracedoc::synth
