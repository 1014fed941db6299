#include "synth/rank_process.h"

#include <fmt/format.h>

#include <algorithm>

#include "model/table_sort.h"

namespace tracedoc::synth {

namespace {

constexpr int32_t kComputeStream = 7;  // the legacy default stream, as Kineto shows it
constexpr int32_t kNcclStream = 13;
constexpr int64_t kPinnedBytesPerUs = 20000;   // H2D/D2H from pinned memory: 20 GB/s
constexpr int64_t kPageableBytesPerUs = 6000;  // staged through the driver's buffer: 6 GB/s
constexpr int64_t kNvlinkBytesPerUs = 100000;  // all-reduce bus bandwidth: 100 GB/s
constexpr int64_t kMiB = int64_t{1} << 20;
constexpr int64_t kMaxTinyOps = 20000;

// Forward kernel durations on the reference GPU (ns) and activation sizes (bytes, fp16). The
// memory-bound kernels move the bytes their shapes give at about 85% of the A100's 2,039 GB/s, and
// the matmuls reach 45-65% of its fp16 peak: no kernel runs faster than the GPU can (the roofline
// of op_flops_sum stays under 100%).
constexpr TimeNs kInProj = 30'000, kLayerNorm = 14'000, kQkv = 140'000, kBmm = 50'000, kSoftmax = 80'000,
                 kProj = 50'000, kAdd = 15'000, kFc = 180'000, kGelu = 40'000, kHead = 50'000, kLogSoftmax = 19'000,
                 kNll = 9'000;
constexpr int64_t kBytesPerNs = 1733;  // 85% of the A100's 2,039 GB/s
constexpr int64_t kAct = 8 * kMiB, kScores = 64 * kMiB, kMlp = 32 * kMiB, kLogits = 16'384'000;

// What a saved forward operator computes, for its backward.
enum Kind : int64_t {
  kInProjOp,
  kLnOp,
  kQkvOp,
  kBmmOp,
  kSoftmaxOp,
  kProjOp,
  kAddOp,
  kFc1Op,
  kGeluOp,
  kFc2Op,
  kHeadOp,
  kLogSoftmaxOp,
  kNllOp
};

// The "Input type" list of an operator whose tensor inputs hold `element`s: one entry per entry of
// its "Input Dims", empty where that is not a tensor ([]). The FLOPs and bytes of the operator
// follow from it (analysis/pytorch/op_flops.h): fp16 under autocast, not float.
std::string input_types(std::string_view dims, Precision element) {
  const std::string type = element == Precision::kHalf ? "c10::Half" : "float";
  std::string out = "[";
  int depth = 0;
  bool tensor = false;
  for (size_t i = 0; i < dims.size(); ++i) {
    const char c = dims[i];
    if (c == '[') {
      if (++depth == 2) tensor = false;
    } else if (c == ']') {
      if (depth-- == 2) out += (out.size() > 1 ? ", " : "") + (tensor ? "\"" + type + "\"" : std::string("\"\""));
    } else if (depth == 2 && c >= '0' && c <= '9') {
      tensor = true;
    }
  }
  return out + "]";
}

}  // namespace

RankProcess::RankProcess(const LoopPlan& plan, const SynthSpec& spec, int32_t rank, TimeNs start)
    : plan_(plan),
      rank_(rank),
      tl_(trace_, 24601 + 113 * rank, rank, spec.gpu_sms,
          spec.seed * 0x9E3779B97F4A7C15ull + static_cast<uint64_t>(rank) + 1) {
  const int64_t pid = 24601 + 113 * rank;
  tl_.main.global_tid = make_global_tid(0, pid, pid);
  tl_.autograd.global_tid = make_global_tid(0, pid, pid + 37);
  tl_.main.now = start;
  tl_.autograd.now = start;
  // Weights (fp32), AdamW's two moments and the workspace cuBLAS keeps: allocated before profiling.
  const int64_t params = int64_t{12} * 1024 * 1024 * plan.layers + 512 * 1024 + 1000 * 1024;
  tl_.preallocated(params * 4 * 3 + 64 * kMiB);
}

TimeNs RankProcess::compute(TimeNs base) const {
  return rank_ == 1 && plan_.straggler > 0 ? static_cast<TimeNs>(static_cast<double>(base) * (1 + plan_.straggler))
                                           : base;
}

GpuOp RankProcess::kernel(CpuThread& th, KernelShape k, TimeNs not_before) {
  if (k.gemm) k.duration = static_cast<TimeNs>(static_cast<double>(k.duration) * plan_.gemm_slowdown);
  k.duration = compute(jitter(k.duration));
  const GpuOp op = tl_.launch(th, k, kComputeStream, not_before);
  gpu_in_step_ += op.end - op.start;
  return op;
}

GpuOp RankProcess::launch_costed(CpuThread& th, KernelShape k, TimeNs launch_ns) {
  if (k.gemm) k.duration = static_cast<TimeNs>(static_cast<double>(k.duration) * plan_.gemm_slowdown);
  k.duration = compute(k.duration);
  const GpuOp op = tl_.launch(th, k, kComputeStream, 0, "cudaLaunchKernel", launch_ns);
  gpu_in_step_ += op.end - op.start;
  return op;
}

void RankProcess::step_begin(int32_t step) {
  CpuThread& m = tl_.main;
  step_start_ = m.now;
  gpu_in_step_ = 0;
  pending_.clear();
  tl_.begin_range(m, fmt::format("ProfilerStep#{}", step));
  data_loader();
  batch_to_device();
  forward(step);
  if (plan_.extra_copy_ns > 0) memcpy_heavy();
  backward();
}

void RankProcess::data_loader() {
  CpuThread& m = tl_.main;
  const TimeNs start = m.now;
  const TimeNs d = jitter(plan_.dataloader_ns, 50);
  tl_.begin_range(m, "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__");
  tl_.begin_op(m, "aten::stack", "[[], []]");  // collate: stacking the samples on the CPU
  tl_.begin_op(m, "aten::cat", "[[], []]");
  tl_.cpu_work(m, d * 3 / 10);
  tl_.end_op(m);
  tl_.end_op(m);
  if (plan_.pageable_bytes == 0) {  // pin_memory=True: the batch is copied into page-locked memory
    tl_.begin_op(m, "aten::pin_memory", "[[8, 512, 512], []]");
    tl_.begin_op(m, "aten::_pin_memory", "[[8, 512, 512], []]");
    tl_.cpu_work(m, d * 3 / 10);
    tl_.end_op(m);
    tl_.end_op(m);
  }
  m.now = std::max(m.now, start + d);  // the rest is the loader's Python
  tl_.end_range(m);
}

void RankProcess::batch_to_device() {
  CpuThread& m = tl_.main;
  const bool pageable = plan_.pageable_bytes > 0;
  const int64_t bytes = pageable ? plan_.pageable_bytes : plan_.batch_bytes;
  tl_.begin_op(m, "aten::to", "[[8, 512, 512], [], [], [], [], []]");
  tl_.begin_op(m, "aten::_to_copy", "[[8, 512, 512], [], [], [], [], [], []]");
  tl_.begin_op(m, "aten::empty_strided", "[[], [], [], [], [], []]");
  batch_ = tl_.allocate(m, bytes);
  tl_.end_op(m);
  tl_.begin_op(m, "aten::copy_", "[[8, 512, 512], [8, 512, 512], []]");
  const GpuOp op = pageable ? tl_.copy(m, CopyKind::kHtoD, MemKind::kPageable, MemKind::kDevice, bytes,
                                       kPageableBytesPerUs, true, kComputeStream)
                            : tl_.copy(m, CopyKind::kHtoD, MemKind::kPinned, MemKind::kDevice, bytes, kPinnedBytesPerUs,
                                       false, kComputeStream);
  gpu_in_step_ += op.end - op.start;
  tl_.end_op(m);
  tl_.end_op(m);
  tl_.end_op(m);
}

void RankProcess::linear(int kind, std::string_view dims, TimeNs gemm_ns, int64_t out_bytes, int64_t n, int64_t k) {
  CpuThread& th = tl_.main;
  const std::string types = input_types(dims, plan_.precision);
  tl_.begin_op(th, "aten::linear", dims, kNoValue, kNoValue, types);
  tl_.begin_op(th, "aten::t", "[[]]");
  tl_.end_op(th);
  const int64_t seq = sequence();
  const uint32_t row = tl_.begin_op(th, "aten::addmm", dims, seq, 0, types);
  const int64_t out = tl_.allocate(th, out_bytes);
  kernel(th, linear_gemm(GemmRole::kForward, plan_.precision, 4096, n, k, gemm_ns));
  tl_.end_op(th);
  tl_.end_op(th);
  saved_.push_back({kind, row, seq, {out}});
}

void RankProcess::simple_op(int kind, std::string_view name, std::string_view inner, std::string_view dims,
                            Precision element, const KernelShape& k, int64_t out_bytes) {
  CpuThread& m = tl_.main;
  const int64_t seq = sequence();
  const std::string types = input_types(dims, element);
  uint32_t row = tl_.begin_op(m, name, dims, inner.empty() ? seq : kNoValue, inner.empty() ? 0 : kNoValue, types);
  if (!inner.empty()) row = tl_.begin_op(m, inner, dims, seq, 0, types);
  const int64_t out = tl_.allocate(m, out_bytes);
  kernel(m, k);
  if (!inner.empty()) tl_.end_op(m);
  tl_.end_op(m);
  saved_.push_back({kind, row, seq, {out}});
}

void RankProcess::forward(int32_t step) {
  CpuThread& m = tl_.main;
  saved_.clear();
  const Precision p = plan_.precision;
  linear(kInProjOp, "[[8, 512, 512], [1024, 512], [1024]]", kInProj, kAct, 1024, 512);
  saved_.back().bucket_end = plan_.layers - 1;  // the last bucket: the first block's and this one's
  if (plan_.tiny_ops > 0) {
    switch (plan_.launch_shape) {
      case LaunchShape::kTinyKernels: launch_bound_ops(); break;
      case LaunchShape::kEagerBlock: eager_block_ops(); break;
      case LaunchShape::kGemmQueue: gemm_queue_ops(); break;
    }
  }
  for (int32_t layer = 0; layer < plan_.layers; ++layer) forward_block(step, layer);
  python(m, 12'000);
  simple_op(kLnOp, "aten::layer_norm", "aten::native_layer_norm", "[[8, 512, 1024], [], [1024], [1024], [], []]", p,
            layer_norm_forward(p, kLayerNorm), kAct);
  linear(kHeadOp, "[[8, 512, 1024], [1000, 1024], [1000]]", kHead, kLogits, 1000, 1024);
  tl_.begin_op(m, "aten::cross_entropy_loss", "[[4096, 1000], [4096], [], [], [], []]");
  simple_op(kLogSoftmaxOp, "aten::log_softmax", "aten::_log_softmax", "[[4096, 1000], [], []]", Precision::kFloat,
            log_softmax_forward(kLogSoftmax), kLogits);
  simple_op(kNllOp, "aten::nll_loss_nd", "aten::nll_loss_forward", "[[4096, 1000], [4096], [], [], []]",
            Precision::kFloat, nll_loss_forward(kNll), 512);
  tl_.end_op(m);
  if (plan_.leak_per_step > 0) {
    // A reference kept every step (a list of detached activations): never freed.
    tl_.begin_op(m, "aten::clone", "[[8, 512, 1024], []]");
    tl_.allocate(m, plan_.leak_per_step);
    tl_.begin_op(m, "aten::copy_", "[[8, 512, 1024], [8, 512, 1024], []]");
    kernel(m, direct_copy(p, 2000 + plan_.leak_per_step / 1500));  // read + write at ~3 TB/s
    tl_.end_op(m);
    tl_.end_op(m);
  }
}

void RankProcess::forward_block(int32_t step, int32_t layer) {
  CpuThread& m = tl_.main;
  const Precision p = plan_.precision;
  const int32_t stalls_before = plan_.sync_stalls * layer / plan_.layers;
  const int32_t stalls_here = plan_.sync_stalls * (layer + 1) / plan_.layers - stalls_before;
  const auto module = [&] { python(m, 12'000); };  // nn.Module.__call__ and the model's Python
  module();
  simple_op(kLnOp, "aten::layer_norm", "aten::native_layer_norm", "[[8, 512, 1024], [], [1024], [1024], [], []]", p,
            layer_norm_forward(p, kLayerNorm), kAct);
  if (layer > 0) saved_.back().bucket_end = plan_.layers - 1 - layer;  // DDP: one bucket per block
  module();
  linear(kQkvOp, "[[8, 512, 1024], [3072, 1024], [3072]]", kQkv, 3 * kAct, 3072, 1024);
  if (plan_.layout_copy_ns > 0) {
    for (int i = 0; i < 2; ++i) {  // q and k made contiguous after a transpose
      tl_.begin_op(m, "aten::transpose", "[[8, 512, 16, 64], [], []]");
      tl_.end_op(m);
      tl_.begin_op(m, "aten::contiguous", "[[8, 16, 512, 64], []]");
      tl_.begin_op(m, "aten::clone", "[[8, 16, 512, 64], []]");
      const int64_t copy = tl_.allocate(m, kAct);
      tl_.begin_op(m, "aten::copy_", "[[8, 16, 512, 64], [8, 16, 512, 64], []]");
      kernel(m, direct_copy(p, plan_.layout_copy_ns / (2 * plan_.layers)));
      tl_.end_op(m);
      tl_.end_op(m);
      tl_.end_op(m);
      saved_.back().activations.push_back(copy);  // freed with the QKV projection's inputs in backward
    }
  }
  if (stalls_here > 0) sync_stall();
  module();
  simple_op(kBmmOp, "aten::matmul", "aten::bmm", "[[8, 16, 512, 64], [8, 16, 64, 512]]", p,
            batched_gemm(GemmRole::kForward, p, kBmm), kScores);
  const bool outlier =
      layer == 0 && step < static_cast<int32_t>(plan_.long_tail_steps.size()) && plan_.long_tail_steps[step];
  simple_op(kSoftmaxOp, "aten::softmax", "aten::_softmax", "[[8, 16, 512, 512], [], []]", p,
            softmax_forward(p, outlier ? 10 * kSoftmax : kSoftmax), kScores);
  simple_op(kBmmOp, "aten::matmul", "aten::bmm", "[[8, 16, 512, 512], [8, 16, 512, 64]]", p,
            batched_gemm(GemmRole::kInputGrad, p, kBmm), kAct);
  module();
  linear(kProjOp, "[[8, 512, 1024], [1024, 1024], [1024]]", kProj, kAct, 1024, 1024);
  simple_op(kAddOp, "aten::add", "", "[[8, 512, 1024], [8, 512, 1024], []]", p, add(p, kAdd), kAct);
  for (int32_t i = 1; i < stalls_here; ++i) sync_stall();
  module();
  simple_op(kLnOp, "aten::layer_norm", "aten::native_layer_norm", "[[8, 512, 1024], [], [1024], [1024], [], []]", p,
            layer_norm_forward(p, kLayerNorm), kAct);
  module();
  linear(kFc1Op, "[[8, 512, 1024], [4096, 1024], [4096]]", kFc, kMlp, 4096, 1024);
  simple_op(kGeluOp, "aten::gelu", "", "[[8, 512, 4096], []]", p, gelu_forward(p, kGelu), kMlp);
  if (plan_.hot_kernel_ns > 0) {
    tl_.begin_op(m, "myext::fused_bias_act", "[[8, 512, 4096], [4096]]");
    kernel(m, badly_configured(p, plan_.hot_kernel_ns / plan_.layers));
    tl_.end_op(m);
  }
  linear(kFc2Op, "[[8, 512, 4096], [1024, 4096], [1024]]", kFc, kAct, 1024, 4096);
  simple_op(kAddOp, "aten::add", "", "[[8, 512, 1024], [8, 512, 1024], []]", p, add(p, kAdd), kAct);
}

void RankProcess::sync_stall() {
  // x[mask]: aten::nonzero counts on the GPU, copies the count to pinned memory and waits for it,
  // so the host blocks until everything queued before it has run; the GPU then has nothing to do
  // while the host sizes the output and the Python around it decides what to launch next.
  CpuThread& m = tl_.main;
  tl_.begin_op(m, "aten::nonzero", "[[8, 512]]");
  kernel(m, nonzero_count(9'000));
  tl_.copy(m, CopyKind::kDtoH, MemKind::kDevice, MemKind::kPinned, 4, kPinnedBytesPerUs, false, kComputeStream);
  tl_.stream_sync(m, kComputeStream);
  python(m, 150'000);
  const int64_t indices = tl_.allocate(m, 4096 * 8);
  kernel(m, nonzero_write(11'000));
  tl_.end_op(m);
  tl_.release(m, indices);
}

void RankProcess::launch_bound_ops() {
  // Many small elementwise ops (a hand-written rotary embedding, masks, scales): each kernel runs
  // 2-3 µs, each launch takes 6-8 µs, so the GPU waits between them.
  CpuThread& m = tl_.main;
  static constexpr const char* kOps[] = {"aten::mul", "aten::add_", "aten::div"};
  for (int32_t i = 0; i < std::min(plan_.tiny_ops, static_cast<int32_t>(kMaxTinyOps)); ++i) {
    tl_.begin_op(m, kOps[i % 3], "[[8, 512], []]");
    const KernelShape k = tiny_elementwise(i % 3, plan_.precision, jitter(2500, 200));
    launch_costed(m, k, jitter(7000, 140));
    tl_.end_op(m);
  }
}

void RankProcess::eager_block_ops() {
  // An eager block of small kernels (a pooler and classifier head run op by op: layer norm, tanh,
  // cat, adds and scales) with Python between the launches: each kernel runs 2-8 µs, the CPU takes
  // ~45 µs per op, so the GPU's work is spread over ten times its length. The block ends in
  // torch.cuda.synchronize(), which finds the GPU already idle.
  CpuThread& m = tl_.main;
  const Precision p = plan_.precision;
  for (int32_t i = 0; i < std::min(plan_.tiny_ops, static_cast<int32_t>(kMaxTinyOps)); ++i) {
    python(m, 38'000);
    KernelShape k;
    switch (i % 5) {
      case 0:
        tl_.begin_op(m, "aten::layer_norm", "[[8, 1024], [], [1024], [1024], [], []]");
        k = layer_norm_forward(p, jitter(7000, 100));
        break;
      case 1:
        tl_.begin_op(m, "aten::tanh", "[[8, 1024]]");
        k = gelu_forward(p, jitter(3000, 100));
        break;
      case 2:
        tl_.begin_op(m, "aten::cat", "[[8, 512], [8, 512]]");
        k = direct_copy(p, jitter(4000, 100));
        break;
      default:
        tl_.begin_op(m, i % 5 == 3 ? "aten::add" : "aten::mul", "[[8, 1024], [8, 1024]]");
        k = tiny_elementwise(i % 5 == 3 ? 1 : 0, p, jitter(2500, 100));
        break;
    }
    launch_costed(m, k, jitter(6000, 140));
    tl_.end_op(m);
  }
  tl_.begin_op(m, "cuda::synchronize", "[]");
  tl_.device_sync(m);
  tl_.end_op(m);
}

void RankProcess::gemm_queue_ops() {
  // One large GEMM, then small matmuls (a per-head projection loop): the CPU queues them while
  // the large one runs, the GPU drains that queue faster than the CPU adds to it, and from then on
  // each small matmul (20 µs, longer than a launch) waits for its launch.
  CpuThread& m = tl_.main;
  const Precision p = plan_.precision;
  // 2 x 4096 x 2048 x 4096 FLOPs in 600 µs: 115 TFLOP/s, 37% of the fp16 peak.
  const std::string_view large = "[[4096, 2048], [2048, 4096]]", small = "[[256, 256], [256, 256]]";
  tl_.begin_op(m, "aten::mm", large, kNoValue, kNoValue, input_types(large, p));
  launch_costed(m, linear_gemm(GemmRole::kForward, p, 4096, 4096, 2048, 600'000), jitter(6000, 140));
  tl_.end_op(m);
  for (int32_t i = 0; i < std::min(plan_.tiny_ops, static_cast<int32_t>(kMaxTinyOps)); ++i) {
    python(m, 32'000);
    tl_.begin_op(m, "aten::mm", small, kNoValue, kNoValue, input_types(small, p));
    launch_costed(m, linear_gemm(GemmRole::kForward, p, 256, 256, 256, 20'000), jitter(6000, 140));
    tl_.end_op(m);
  }
}

void RankProcess::memcpy_heavy() {
  // Activations offloaded to pinned host memory and brought back (CPU offloading), half the time
  // each way.
  CpuThread& m = tl_.main;
  const int64_t bytes = std::max<int64_t>(512, plan_.extra_copy_ns / 2 * kPinnedBytesPerUs / 1000);
  for (const auto& [kind, src, dst] : {std::tuple{CopyKind::kDtoH, MemKind::kDevice, MemKind::kPinned},
                                       std::tuple{CopyKind::kHtoD, MemKind::kPinned, MemKind::kDevice}}) {
    tl_.begin_op(m, "aten::to", "[[8, 512, 1024], [], [], [], [], []]");
    tl_.begin_op(m, "aten::copy_", "[[8, 512, 1024], [8, 512, 1024], []]");
    const GpuOp op = tl_.copy(m, kind, src, dst, bytes, kPinnedBytesPerUs, false, kComputeStream);
    gpu_in_step_ += op.end - op.start;
    tl_.end_op(m);
    tl_.end_op(m);
  }
}

void RankProcess::backward() {
  CpuThread& m = tl_.main;
  CpuThread& g = tl_.autograd;
  // loss.backward(): the main thread waits while the device's autograd thread runs the graph.
  g.now = std::max(g.now, m.now) + jitter(15'000, 300);
  const Precision p = plan_.precision;
  const bool ddp = plan_.ranks > 1;
  for (auto it = saved_.rbegin(); it != saved_.rend(); ++it) {
    const Saved& s = *it;
    const auto gemm = [&](GemmRole role, int64_t rows, int64_t cols, int64_t depth, TimeNs d) {
      return linear_gemm(role, p, rows, cols, depth, d);
    };
    switch (s.kind) {
      case kInProjOp:  // no gradient for the input batch: the weight's only
        backward_node(
            s, "AddmmBackward0",
            {{"aten::mm", "[[1024, 4096], [4096, 512]]", gemm(GemmRole::kWeightGrad, 1024, 512, 4096, kInProj)},
             {"aten::sum", "[[4096, 1024], [], [], []]", bias_grad_sum(p, 10'000)}},
            (512 + 1) * 1024 * 4);
        break;
      case kQkvOp:
      case kProjOp:
      case kFc1Op:
      case kFc2Op:
      case kHeadOp: {
        const int64_t in = s.kind == kFc2Op ? 4096 : 1024;
        const int64_t out = s.kind == kQkvOp ? 3072 : s.kind == kFc1Op ? 4096 : s.kind == kHeadOp ? 1000 : 1024;
        const TimeNs d = s.kind == kQkvOp ? kQkv : s.kind == kProjOp ? kProj : s.kind == kHeadOp ? kHead : kFc;
        // dX = dY W (depth: the layer's outputs), dW = dY^T X (depth: the tokens).
        backward_node(s, "AddmmBackward0",
                      {{"aten::mm", fmt::format("[[4096, {0}], [{0}, {1}]]", out, in),
                        gemm(GemmRole::kInputGrad, 4096, in, out, d)},
                       {"aten::mm", fmt::format("[[{0}, 4096], [4096, {1}]]", out, in),
                        gemm(GemmRole::kWeightGrad, out, in, 4096, d)},
                       {"aten::sum", fmt::format("[[4096, {}], [], [], []]", out),
                        bias_grad_sum(p, std::max<TimeNs>(10'000, 4096 * out * 2 / kBytesPerNs))}},
                      (in + 1) * out * 4);
        break;
      }
      case kLnOp:
        backward_node(s, "NativeLayerNormBackward0",
                      {{"aten::native_layer_norm_backward", "", layer_norm_backward_input(p, 20'000)},
                       {"", "", layer_norm_backward_weights(p, 15'000)}},
                      2 * 1024 * 4);
        break;
      case kBmmOp:  // the gradients of both factors of a [128, 512, 512] x [128, 512, 64] product
        backward_node(
            s, "BmmBackward0",
            {{"aten::bmm", "[[128, 512, 64], [128, 64, 512]]", batched_gemm(GemmRole::kInputGrad, p, kBmm)},
             {"aten::bmm", "[[128, 512, 512], [128, 512, 64]]", batched_gemm(GemmRole::kWeightGrad, p, kBmm)}},
            0);
        break;
      case kSoftmaxOp:
        backward_node(s, "SoftmaxBackward0", {{"aten::_softmax_backward_data", "", softmax_backward(p, 65'000)}}, 0);
        break;
      case kAddOp:  // the residual's two gradients summed by the engine
        backward_node(s, "AddBackward0", {{"aten::add", "", add(p, kAdd)}}, 0);
        break;
      case kGeluOp:
        backward_node(s, "GeluBackward0", {{"aten::gelu_backward", "", gelu_backward(p, 35'000)}}, 0);
        break;
      case kLogSoftmaxOp:
        backward_node(s, "LogSoftmaxBackward0",
                      {{"aten::_log_softmax_backward_data", "", log_softmax_backward(kLogSoftmax)}}, 0);
        break;
      case kNllOp:
        backward_node(s, "NllLossBackward0",
                      {{"aten::nll_loss_backward", "", fill(kNll)}, {"", "", nll_loss_backward(kNll)}}, 0);
        break;
      default: break;
    }
    if (ddp && !plan_.exposed_comm && s.bucket_end >= 0) all_reduce(g, s.bucket_end);  // DDP's gradient hook
  }
  m.now = std::max(m.now, g.now + jitter(20'000, 300));  // backward() returns
  if (ddp && plan_.exposed_comm) {
    // No overlap: the gradients are all-reduced by the main thread once backward is done.
    for (int32_t b = 0; b < plan_.layers; ++b) all_reduce(m, b);
  }
}

void RankProcess::backward_node(const Saved& s, std::string_view node, const std::vector<BackwardKernel>& kernels,
                                int64_t weight_grad_bytes) {
  CpuThread& g = tl_.autograd;
  python(g, 3'000);  // the engine picks the next ready node
  tl_.begin_op(g, fmt::format("autograd::engine::evaluate_function: {}", node), "", s.sequence, 1);
  const uint32_t inner = tl_.begin_op(g, node, "", s.sequence, 1);
  tl_.link_backward(s.op_row, inner);
  const int64_t grad_in = tl_.allocate(g, kAct);  // the gradient this node hands on
  bool open = false;
  for (const BackwardKernel& k : kernels) {
    if (!k.op.empty()) {
      if (open) tl_.end_op(g);
      // Operators whose shapes the loop models carry them (and their element types); the others
      // record two unsized arguments, as the profiler does for tensors it cannot size.
      if (k.dims.empty())
        tl_.begin_op(g, k.op, "[[], []]");
      else
        tl_.begin_op(g, k.op, k.dims, kNoValue, kNoValue, input_types(k.dims, plan_.precision));
      open = true;
    }
    kernel(g, k.kernel);
  }
  if (open) tl_.end_op(g);
  tl_.end_op(g);
  for (int64_t a : s.activations) tl_.release(g, a);
  tl_.release(g, grad_in);
  tl_.end_op(g);
  if (weight_grad_bytes > 0) {  // set_to_none: the new gradient is stored, no kernel
    tl_.begin_op(g, "autograd::engine::evaluate_function: torch::autograd::AccumulateGrad", "");
    tl_.begin_op(g, "torch::autograd::AccumulateGrad", "");
    grads_.push_back(tl_.allocate(g, weight_grad_bytes));
    tl_.end_op(g);
    tl_.end_op(g);
  }
}

void RankProcess::all_reduce(CpuThread& th, int32_t bucket) {
  // One DDP bucket: a block's fp32 gradients (plus the head's in the first, the input projection's
  // in the last), summed over the ranks by NCCL on its own stream once the compute stream has
  // produced them.
  int64_t bytes = 48 * kMiB;
  if (bucket == 0) bytes += 1001 * 1000 * 4;
  if (bucket == plan_.layers - 1) bytes += 513 * 1024 * 4;
  tl_.begin_op(th, "c10d::allreduce_", "[[], [], [], [], []]");
  tl_.begin_op(th, "record_param_comms", "[[], [], [], [], [], [], [], [], [], [], [], []]");
  tl_.begin_range(th, "nccl:all_reduce");
  const TimeNs ready = tl_.stream_free(kComputeStream);
  tl_.api_call(th, "cudaEventRecord", jitter(1500, 300));
  tl_.api_call(th, "cudaStreamWaitEvent", jitter(1500, 300));
  const GpuOp op = tl_.launch(th, nccl_all_reduce(1), kNcclStream, ready, "cudaLaunchKernelExC", jitter(9000, 200));
  tl_.api_call(th, "cudaEventRecord", jitter(1500, 300));
  tl_.end_range(th);
  tl_.end_op(th);
  tl_.end_op(th);
  auto& c = trace_.pytorch.collectives;
  c.kernel.push_back(op.row);
  c.collective.push_back(trace_.strings.intern("allreduce"));
  c.dtype.push_back(trace_.strings.intern("Float"));
  c.group_name.push_back(trace_.strings.intern("0"));
  c.in_nelems.push_back(bytes / 4);
  c.out_nelems.push_back(bytes / 4);
  c.group_size.push_back(plan_.ranks);
  // Ring all-reduce: each rank sends and receives 2 (n - 1) / n of the buffer.
  const TimeNs transfer = plan_.exposed_comm ? plan_.exposed_comm_ns / plan_.layers
                                             : bytes * 2 * (plan_.ranks - 1) / plan_.ranks * 1000 / kNvlinkBytesPerUs;
  pending_.push_back({op.row, op.start, transfer});
}

void RankProcess::place_collective(const PendingCollective& c, TimeNs start, TimeNs end) {
  tl_.place_kernel(c.kernel_row, start, end, kNcclStream);
}

void RankProcess::step_end(int32_t step, TimeNs gradients_ready) {
  CpuThread& m = tl_.main;
  if (plan_.ranks > 1) {  // DDP makes the compute stream wait for the last all-reduce
    tl_.api_call(m, "cudaStreamWaitEvent", jitter(1500, 300));
    tl_.stream_wait(kComputeStream, gradients_ready);
  }
  optimizer();
  tl_.begin_range(m, "Optimizer.zero_grad#AdamW.zero_grad");  // set_to_none=True: frees the gradients
  for (int64_t g : grads_) tl_.release(m, g);
  grads_.clear();
  python(m, 20'000);
  tl_.end_range(m);
  tl_.release(m, batch_);
  end_of_step_sync();
  if (plan_.idle_cpu_ns > 0) idle_cpu_work();
  tl_.end_range(m);  // ProfilerStep#N
  step_ns_.push_back(m.now - step_start_);
  gpu_ns_.push_back(gpu_in_step_);
  python(m, 30'000);  // profiler.step() and the loop's own Python
}

void RankProcess::optimizer() {
  CpuThread& m = tl_.main;
  tl_.begin_range(m, "Optimizer.step#AdamW.step");
  python(m, 40'000);
  struct Foreach {
    const char* op;
    int functor;
    TimeNs ns;  // for 3 blocks' parameters; scales with the model
  };
  static constexpr Foreach kSteps[] = {
      {"aten::_foreach_mul_", 1, 200'000},     {"aten::_foreach_lerp_", 2, 300'000},
      {"aten::_foreach_mul_", 1, 200'000},     {"aten::_foreach_addcmul_", 3, 300'000},
      {"aten::_foreach_sqrt", 4, 200'000},     {"aten::_foreach_add_", 0, 200'000},
      {"aten::_foreach_addcdiv_", 5, 400'000},
  };
  int64_t temp = 0;
  for (const Foreach& f : kSteps) {
    tl_.begin_op(m, f.op, "[[], [], []]");
    if (f.functor == 4) temp = tl_.allocate(m, int64_t{12} * 1024 * 1024 * plan_.layers * 4);  // sqrt(v): a new list
    kernel(m, multi_tensor_apply(f.functor, f.ns * plan_.layers / 3));
    tl_.end_op(m);
    python(m, 8'000);
  }
  tl_.release(m, temp);
  tl_.end_range(m);
}

void RankProcess::end_of_step_sync() {
  CpuThread& m = tl_.main;
  switch (plan_.step_sync) {
    case StepSync::kItem: {
      // loss.item(): 4 bytes to a pageable host variable, so the copy call itself waits for the
      // queue to drain; the stream sync after it finds the stream idle.
      tl_.begin_op(m, "aten::item", "[[]]");
      tl_.begin_op(m, "aten::_local_scalar_dense", "[[]]");
      const GpuOp op = tl_.copy(m, CopyKind::kDtoH, MemKind::kDevice, MemKind::kPageable, 4, kPinnedBytesPerUs, false,
                                kComputeStream);
      gpu_in_step_ += op.end - op.start;
      tl_.stream_sync(m, kComputeStream);
      tl_.end_op(m);
      tl_.end_op(m);
      break;
    }
    case StepSync::kDevice: tl_.device_sync(m); break;
    case StepSync::kNone: break;
  }
}

void RankProcess::idle_cpu_work() {
  // Metrics on the CPU between iterations (accuracy, logging): operators with no GPU work.
  CpuThread& m = tl_.main;
  static constexpr const char* kOps[] = {"aten::mean",   "aten::add_", "aten::cat",
                                         "aten::argmax", "aten::eq",   "aten::sum"};
  const TimeNs end = m.now + plan_.idle_cpu_ns;
  for (int i = 0; m.now < end; ++i) {
    tl_.begin_op(m, kOps[i % 6], "[[4096, 1000], []]");
    tl_.cpu_work(m, std::min(jitter(45'000, 300), std::max<TimeNs>(end - m.now, 1000)));
    tl_.end_op(m);
    python(m, 10'000);
  }
}

Trace RankProcess::finish() {
  sort_by_time(trace_);  // as the readers leave their tables
  return std::move(trace_);
}

}  // namespace tracedoc::synth
