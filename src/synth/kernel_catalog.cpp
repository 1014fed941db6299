#include "synth/kernel_catalog.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace tracedoc::synth {

namespace {

// sm_80 limits (A100); the occupancy estimate uses them for every GPU, as the loop's launch
// configurations are Ampere ones.
constexpr int64_t kThreadsPerSm = 2048, kBlocksPerSm = 32, kRegistersPerSm = 65536, kSharedPerSm = 167936;
constexpr int64_t kSharedReservedPerBlock = 1024;

std::string_view type_name(Precision p) { return p == Precision::kHalf ? "c10::Half" : "float"; }

// Replaces each "{T}" by the element type.
std::string typed(std::string_view pattern, Precision p) {
  std::string out;
  const std::string_view t = type_name(p);
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern.compare(i, 3, "{T}") == 0) {
      out += t;
      i += 2;
    } else {
      out += pattern[i];
    }
  }
  return out;
}

KernelShape shape(std::string name, int32_t gx, int32_t gy, int32_t bx, int32_t by, int32_t regs, int32_t smem,
                  TimeNs d) {
  KernelShape k;
  k.name = std::move(name);
  k.grid_x = gx;
  k.grid_y = gy;
  k.block_x = bx;
  k.block_y = by;
  k.registers = regs;
  k.shared_memory = smem;
  k.duration = d;
  return k;
}

// A vectorized elementwise kernel over `elements` values: 128 threads, 4 values per thread.
KernelShape elementwise(std::string name, int64_t elements, int32_t regs, TimeNs d) {
  return shape(std::move(name), static_cast<int32_t>((elements + 511) / 512), 1, 128, 1, regs, 0, d);
}

// A memory-bound kernel's time over fp16 activations (the durations the loop gives), over the
// element type it runs on: float moves twice the bytes, so it takes twice as long.
TimeNs moving(Precision p, TimeNs d) { return p == Precision::kFloat ? 2 * d : d; }

constexpr int64_t kTokens = 4096;  // 8 sequences of 512
constexpr int64_t kHidden = 1024;

}  // namespace

double estimated_occupancy(const KernelShape& k, int32_t sm_count) {
  if (k.communication || sm_count <= 0) return 0;
  const int64_t threads = int64_t{k.block_x} * k.block_y * k.block_z;
  if (threads <= 0) return 0;
  const int64_t warps = (threads + 31) / 32;
  const int64_t regs_per_warp = ((std::max(k.registers, 1) + 7) / 8) * 8 * 32;  // allocated per warp, 8 at a time
  int64_t fit = std::min<int64_t>(kBlocksPerSm, kThreadsPerSm / (warps * 32));
  fit = std::min(fit, kRegistersPerSm / (regs_per_warp * warps));
  if (k.shared_memory > 0) fit = std::min(fit, kSharedPerSm / (k.shared_memory + kSharedReservedPerBlock));
  const double grid = static_cast<double>(int64_t{k.grid_x} * k.grid_y * k.grid_z);
  const double per_sm = std::min(grid / sm_count, static_cast<double>(fit));
  return std::floor(std::min(100.0, per_sm * static_cast<double>(threads) * 100.0 / kThreadsPerSm));
}

KernelShape linear_gemm(GemmRole role, Precision p, int64_t m, int64_t n, int64_t k, TimeNs d) {
  const char* op = role == GemmRole::kForward ? "tn" : role == GemmRole::kInputGrad ? "nn" : "nt";
  const int depth = k <= 512 ? 0 : k <= 1024 ? 1 : k <= 3072 ? 2 : 3;
  // 64 x 64 output tiles, 256 threads (8 warps); at most 4 blocks fit an SM (registers, shared
  // memory), 50% estimated occupancy once the grid fills the GPU.
  KernelShape g =
      shape("", static_cast<int32_t>((n + 63) / 64), static_cast<int32_t>((m + 63) / 64), 256, 1, 64, 32768, d);
  if (depth == 3) g.grid_z = 2;  // split-k
  if (p == Precision::kHalf) {
    static constexpr const char* kTiles[] = {"64x64x32_stage6", "64x64x64_stage4", "64x64x64_stage5",
                                             "64x64x64_stage3"};
    g.name = fmt::format("sm80_xmma_gemm_f16f16_f16f32_f32_{}_n_tilesize{}_warpsize2x4x1_tensor16x8x16_kernel", op,
                         kTiles[depth]);
  } else {
    // cuBLAS picks Volta-generation SIMT kernels for some FP32 shapes on Ampere too.
    static constexpr const char* kTiles[] = {"64x32_sliced1x4", "128x64", "128x128", "128x32"};
    const bool volta = role == GemmRole::kWeightGrad && depth == 3;
    g.name = volta ? std::string("volta_sgemm_128x64_nt") : fmt::format("ampere_sgemm_{}_{}", kTiles[depth], op);
    g.registers = 80;  // 3 blocks an SM: 37% estimated occupancy
  }
  g.gemm = true;
  return g;
}

KernelShape batched_gemm(GemmRole role, Precision p, TimeNs d) {
  const char* op = role == GemmRole::kForward ? "tn" : role == GemmRole::kInputGrad ? "nn" : "nt";
  KernelShape k = p == Precision::kHalf
                      ? shape(fmt::format("ampere_fp16_s16816gemm_fp16_128x128_ldg8_f2f_stages_32x5_{}", op), 4, 4, 256,
                              1, 64, 32768, d)
                      : shape(fmt::format("ampere_sgemm_128x64_sliced1x2_{}", op), 8, 4, 256, 1, 80, 32768, d);
  k.grid_z = 128;  // 8 sequences x 16 heads
  k.gemm = true;
  return k;
}

KernelShape layer_norm_forward(Precision p, TimeNs d) {
  return shape(
      typed("void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<{T}, float>(int, float, {T} const*, "
            "{T} const*, {T} const*, float*, float*, {T}*)",
            p),
      kTokens, 1, 32, 4, 40, 0, moving(p, d));
}

KernelShape layer_norm_backward_input(Precision p, TimeNs d) {
  return shape(
      typed("void at::native::(anonymous namespace)::layer_norm_grad_input_kernel_vectorized<{T}, float>({T} const*, "
            "{T} const*, float const*, float const*, {T} const*, {T}*, int)",
            p),
      kTokens, 1, 128, 1, 40, 0, moving(p, d));
}

KernelShape layer_norm_backward_weights(Precision p, TimeNs d) {
  return shape(typed("void at::native::(anonymous namespace)::GammaBetaBackwardCUDAKernel_32x32<{T}, float>(long, "
                     "long, {T} const*, "
                     "{T} const*, float const*, float const*, {T}*, {T}*)",
                     p),
               kHidden / 32, 1, 32, 32, 64, 8448, moving(p, d));
}

KernelShape softmax_forward(Precision p, TimeNs d) {
  return shape(typed("void (anonymous namespace)::softmax_warp_forward<{T}, {T}, float, 9, false, false>({T}*, {T} "
                     "const*, int, int, "
                     "int, bool const*, int, bool)",
                     p),
               16384, 1, 32, 4, 40, 0, moving(p, d));
}

KernelShape softmax_backward(Precision p, TimeNs d) {
  return shape(typed("void (anonymous namespace)::softmax_warp_backward<{T}, {T}, float, 9, false, false>({T}*, {T} "
                     "const*, {T} const*, "
                     "int, int, int, bool const*)",
                     p),
               16384, 1, 32, 4, 48, 0, moving(p, d));
}

KernelShape add(Precision p, TimeNs d) {
  return elementwise(
      typed(
          "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<{T}>, std::array<char*, 3ul> "
          ">(int, at::native::CUDAFunctor_add<{T}>, std::array<char*, 3ul>)",
          p),
      kTokens * kHidden, 24, moving(p, d));
}

KernelShape gelu_forward(Precision p, TimeNs d) {
  const std::string f = typed(
      "at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::operator()() "
      "const::{lambda()#4}::operator()() const::{lambda({T})#1}",
      p);
  return elementwise(
      fmt::format("void at::native::vectorized_elementwise_kernel<4, {0}, std::array<char*, 2ul> >(int, {0}, "
                  "std::array<char*, 2ul>)",
                  f),
      kTokens * kHidden * 4, 28, moving(p, d));
}

KernelShape gelu_backward(Precision p, TimeNs d) {
  const std::string f = typed(
      "at::native::GeluBackwardCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::"
      "operator()() const::{lambda()#4}::operator()() const::{lambda({T}, {T})#1}",
      p);
  return elementwise(
      fmt::format("void at::native::vectorized_elementwise_kernel<4, {0}, std::array<char*, 3ul> >(int, {0}, "
                  "std::array<char*, 3ul>)",
                  f),
      kTokens * kHidden * 4, 30, moving(p, d));
}

KernelShape bias_grad_sum(Precision p, TimeNs d) {
  const std::string op = typed(
      "at::native::ReduceOp<{T}, at::native::func_wrapper_t<{T}, at::native::sum_functor<{T}, float, {T}>::"
      "operator()(at::TensorIterator&)::{lambda(float, float)#1}>, unsigned int, {T}, 4, 4>",
      p);
  return shape(fmt::format("void at::native::reduce_kernel<512, 1, {0} >({0})", op), 8, 64, 32, 16, 32, 0,
               moving(p, d));
}

KernelShape log_softmax_forward(TimeNs d) {
  return shape(
      "void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float, float, float, "
      "at::native::(anonymous namespace)::LogSoftMaxForwardEpilogue>(float*, float const*, int)",
      kTokens, 1, 256, 1, 32, 64, d);
}

KernelShape log_softmax_backward(TimeNs d) {
  return shape(
      "void at::native::(anonymous namespace)::cunn_SoftMaxBackward<4, float, float, float, "
      "at::native::(anonymous namespace)::LogSoftMaxBackwardEpilogue>(float*, float const*, float const*, long)",
      kTokens, 1, 256, 1, 32, 64, d);
}

KernelShape nll_loss_forward(TimeNs d) {
  return shape(
      "void at::native::(anonymous namespace)::nll_loss_forward_reduce_cuda_kernel_2d<float, float, long>(float*, "
      "float*, "
      "float const*, long const*, float const*, bool, long, long, long, long)",
      1, 1, 1024, 1, 28, 8192, d);
}

KernelShape nll_loss_backward(TimeNs d) {
  return shape(
      "void at::native::(anonymous namespace)::nll_loss_backward_reduce_cuda_kernel_2d<float, long>(float*, float "
      "const*, "
      "long const*, float const*, float const*, bool, int, int, long, long)",
      1, 1, 1024, 1, 24, 0, d);
}

KernelShape fill(TimeNs d) {
  return elementwise(
      "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, std::array<char*, 1ul> >(int, "
      "at::native::FillFunctor<float>, std::array<char*, 1ul>)",
      kTokens * 1000, 16, d);
}

KernelShape multi_tensor_apply(int which, TimeNs d) {
  static constexpr const char* kFunctors[] = {
      "at::native::(anonymous namespace)::TensorListMetadata<1>, at::native::(anonymous "
      "namespace)::BinaryOpScalarFunctor<float, 1, 1, 0>, "
      "std::plus<float>, float",
      "at::native::(anonymous namespace)::TensorListMetadata<2>, at::native::(anonymous "
      "namespace)::BinaryOpScalarFunctor<float, 2, 1, 1>, "
      "std::multiplies<float>, float",
      "at::native::(anonymous namespace)::TensorListMetadata<3>, at::native::(anonymous "
      "namespace)::TernaryOpScalarFunctor<float, 3, 2, 2>, "
      "at::native::LerpFunctor<float>, float",
      "at::native::(anonymous namespace)::TensorListMetadata<3>, at::native::(anonymous "
      "namespace)::PointwiseOpScalarFunctor<float, 3, 3, 0>, "
      "std::multiplies<float>, float",
      "at::native::(anonymous namespace)::TensorListMetadata<2>, at::native::(anonymous "
      "namespace)::UnaryOpFunctor<float, 2, 1, 1>, "
      "at::native::Sqrt<float>",
      "at::native::(anonymous namespace)::TensorListMetadata<4>, at::native::(anonymous "
      "namespace)::PointwiseOpScalarListFunctor<float, 4, 3, "
      "0>, std::divides<float>, c10::ArrayRef<c10::Scalar>",
  };
  const char* f = kFunctors[static_cast<size_t>(which) % std::size(kFunctors)];
  return shape(fmt::format("void at::native::(anonymous namespace)::multi_tensor_apply_kernel<{0}>({0})", f), 320, 1,
               512, 1, 40, 0, d);
}

KernelShape direct_copy(Precision p, TimeNs d) {
  const std::string f = typed(
      "at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::"
      "{lambda()#7}::operator()() const::{lambda({T})#1}",
      p);
  const std::string impl =
      fmt::format("at::native::gpu_kernel_impl_nocast<{0}>(at::TensorIteratorBase&, {0} const&)::{{lambda(int)#1}}", f);
  return shape(fmt::format("void at::native::elementwise_kernel<128, 4, {0}>(int, {0})", impl), 8192, 1, 128, 1, 30, 0,
               d);
}

KernelShape tiny_elementwise(int which, Precision p, TimeNs d) {
  static constexpr const char* kFunctors[] = {
      "at::native::AUnaryFunctor<{T}, {T}, {T}, at::native::binary_internal::MulFunctor<float> >",
      "at::native::CUDAFunctorOnSelf_add<{T}>",
      "at::native::BUnaryFunctor<{T}, {T}, {T}, at::native::binary_internal::DivFunctor<float> >",
  };
  const std::string f = typed(kFunctors[static_cast<size_t>(which) % std::size(kFunctors)], p);
  return elementwise(
      fmt::format("void at::native::vectorized_elementwise_kernel<4, {0}, std::array<char*, 2ul> >(int, {0}, "
                  "std::array<char*, 2ul>)",
                  f),
      4096, 20, d);
}

KernelShape nonzero_count(TimeNs d) {
  return shape(
      "void at_cuda_detail::cub::DeviceReduceSingleTileKernel<at_cuda_detail::cub::DeviceReducePolicy<long, int, "
      "at_cuda_detail::cub::Sum>::Policy600, at_cuda_detail::cub::TransformInputIterator<bool, at::native::(anonymous "
      "namespace)::NonZeroOp<bool>, bool const*, long>, long*, int, at_cuda_detail::cub::Sum, long>(bool const*, "
      "long*, int, "
      "at_cuda_detail::cub::Sum, long)",
      1, 1, 256, 1, 38, 64, d);
}

KernelShape nonzero_write(TimeNs d) {
  return shape(
      "void at_cuda_detail::cub::DeviceSelectSweepKernel<at_cuda_detail::cub::DispatchSelectIf<at_cuda_detail::cub::"
      "CountingInputIterator<long, long>, at_cuda_detail::cub::TransformInputIterator<bool, at::native::(anonymous "
      "namespace)::NonZeroOp<bool>, bool const*, long>, long*, int*, at_cuda_detail::cub::NullType, "
      "at_cuda_detail::cub::NullType, int, false>::PtxSelectIfPolicyT>(long*, int*, int)",
      64, 1, 128, 1, 46, 7696, d);
}

KernelShape badly_configured(Precision p, TimeNs d) {
  // 100 threads per block, not a whole number of warps (the fourth warp runs 4 of its 32 lanes), and
  // 270 blocks: 2.5 blocks per SM on 108 SMs, 250 of 2048 threads, 12% estimated occupancy.
  return shape(typed("void fused_bias_act_kernel<{T}, 100>({T}*, {T} const*, {T} const*, long, long)", p), 270, 1, 100,
               1, 64, 0, d);
}

KernelShape nccl_all_reduce(TimeNs d) {
  KernelShape k = shape("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)", 8, 1, 544, 1,
                        96, 87568, d);
  k.communication = true;
  return k;
}

}  // namespace tracedoc::synth
