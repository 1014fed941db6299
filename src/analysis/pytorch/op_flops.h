// FLOPs and bytes of PyTorch operators, from the shapes a trace recorded with `record_shapes=True`
// ("Input Dims", "Input type", "Concrete Inputs"), with the conventions of PyTorch's own
// torch.utils.flop_counter where it has a formula (docs/flops.md gives every formula):
//
//   matrix multiplies  mm, addmm, bmm, baddbmm, matmul, linear, _scaled_mm: 2 FLOPs per multiply-add
//                      (a bias or an added matrix is not counted);
//   convolutions       conv1d/2d/3d, convolution, _convolution, cudnn/miopen_convolution (the output
//                      size from stride, padding and dilation in "Concrete Inputs"), and their
//                      backward (grad_input and grad_weight each as many as the forward);
//   attention          scaled_dot_product_attention and its flash / efficient / cudnn kernels,
//                      forward 2·b·h·s_q·s_k·(d_q + d_v), backward 2·b·h·s_q·s_k·(3·d_q + 2·d_v);
//                      causal masking is not discounted, as flop_counter counts it;
//   memory-bound ops   layer/RMS/batch/group norm, softmax, elementwise arithmetic and activations,
//                      reductions, embedding: a fixed number of FLOPs per element (docs/flops.md),
//                      counted for the roofline, not in the model FLOPs of MFU.
//
// Bytes are the minimal traffic: every tensor input read once and every output written once, at
// the element size of its dtype. An operator counts once: in each chain of operators nested in one
// another the outermost one whose shapes give its cost (aten::linear over its aten::addmm, an
// autograd node's aten::mm when the node itself has no formula), so nothing is counted twice.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "analysis/pytorch/op_links.h"
#include "model/trace.h"

namespace tracedoc::pytorch {

enum class FlopKind : uint8_t {
  kNone,
  kMatmul,
  kConvolution,
  kAttention,
  kNorm,
  kSoftmax,
  kElementwise,
  kReduction,
  kEmbedding
};
const char* flop_kind_name(FlopKind k);  // "matmul", "convolution", ...
// Matrix multiplies, convolutions and attention: the model FLOPs MFU counts (the tensor-core work).
inline bool is_model_flops(FlopKind k) {
  return k == FlopKind::kMatmul || k == FlopKind::kConvolution || k == FlopKind::kAttention;
}

// The element types peaks are given for (analysis/gpu_peaks.h).
enum class Dtype : uint8_t { kUnknown, kFp64, kFp32, kTf32, kFp16, kBf16, kFp8, kFp4, kInt8 };
inline constexpr size_t kDtypeCount = 9;
const char* dtype_name(Dtype d);  // "fp32", "bf16", ...
// "float" -> kFp32, "c10::BFloat16" -> kBf16, "c10::Float8_e4m3fn" -> kFp8, ... as Kineto writes them.
Dtype dtype_of(std::string_view type);
// Bytes per element of a type name as Kineto writes it; 0 when not a tensor element type.
int64_t element_bytes(std::string_view type);

struct OpCost {
  FlopKind kind = FlopKind::kNone;
  bool known = false;  // the shapes gave the cost
  int64_t flops = 0;
  int64_t bytes = 0;
  Dtype dtype = Dtype::kUnknown;  // of the first tensor input (float when the trace records no types)
  // The shapes give 2^63 FLOPs or bytes or more (dims of 2^40 in a damaged trace): no real operator
  // does, so the cost is not known, rather than a count pinned at INT64_MAX.
  bool overflow = false;
  // Matrix multiplies: the GEMM's dimensions, batch × (m × k) · (k × n); a linear's rows (every
  // leading dim of its input) are m. 0 for the other kinds.
  int64_t batch = 0, m = 0, n = 0, k = 0;
};

// The cost of one operator call from its name and its recorded args (compact JSON text, empty when
// absent). kind is kNone for an operator without a formula; known is false when its shapes do not
// say enough (a convolution without its stride, an attention without 4-D inputs).
OpCost op_cost(std::string_view name, std::string_view input_dims, std::string_view input_types,
               std::string_view concrete_inputs);

// Per operator of Trace::pytorch.ops: its cost when it is the one counted (see above), else kind
// kNone; `counted_by[i]` is the counted operator that holds op i (itself included), kNoRow when none.
struct OpCosts {
  std::vector<OpCost> cost;
  std::vector<int32_t> counted_by;
  int64_t unknown = 0;      // operators with a formula whose shapes said too little (and no counted descendant)
  int64_t overflowing = 0;  // of those, operators whose shapes give 2^63 FLOPs or bytes or more
};
OpCosts op_costs(const Trace& trace, const OpLinks& links);

}  // namespace tracedoc::pytorch
