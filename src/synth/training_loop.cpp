#include "synth/training_loop.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <memory>

#include "model/step_names.h"
#include "synth/rank_process.h"

namespace tracedoc::synth {

namespace {

// The profiler's clock: Kineto writes times relative to the start of the quarter (2025-10-01T00:00Z);
// the recording starts 43.5 days into it.
constexpr int64_t kBaseTimeNs = 1759276800000000000;
constexpr TimeNs kRecordingStart = (int64_t{43} * 86400 + 12 * 3600) * 1000000000;
constexpr TimeNs kTinyOpCpuNs = 12'500;        // one launch-bound op on the CPU: dispatch, 7 µs launch, return
constexpr TimeNs kEagerOpCpuNs = 46'000;       // one op of the eager block: 38 µs of Python, dispatch and launch
constexpr TimeNs kQueuedMatmulCpuNs = 40'000;  // one small matmul of the GEMM queue: Python, dispatch, launch

struct Run {
  std::vector<Trace> traces;
  CleanLoopFigures figures;
};

// Runs every rank step by step; the all-reduces of a step are placed once every rank has launched
// them: each starts on its rank when launched, its gradients ready and the previous one done, and
// all end together once the last rank has arrived and the data has moved.
Run simulate(const SynthSpec& spec, const LoopPlan& plan) {
  std::vector<std::unique_ptr<RankProcess>> ranks;
  const TimeNs start = kRecordingStart + static_cast<TimeNs>(spec.seed % 1000) * 1'000'000 + 123'456'789;
  for (int32_t r = 0; r < plan.ranks; ++r)
    ranks.push_back(std::make_unique<RankProcess>(plan, spec, r, start + r * 41'000));
  TimeNs nccl_free = 0;
  for (int32_t step = 0; step < plan.steps; ++step) {
    for (auto& rank : ranks) rank->step_begin(step);
    const size_t buckets = ranks[0]->pending().size();
    for (size_t b = 0; b < buckets; ++b) {
      TimeNs arrive = 0, transfer = 0;
      std::vector<TimeNs> starts;
      for (auto& rank : ranks) {
        const PendingCollective& c = rank->pending()[b];
        starts.push_back(std::max(c.earliest_start, nccl_free));
        arrive = std::max(arrive, starts.back());
        transfer = std::max(transfer, c.transfer_ns);
      }
      nccl_free = arrive + transfer;
      for (size_t r = 0; r < ranks.size(); ++r)
        ranks[r]->place_collective(ranks[r]->pending()[b], starts[r], nccl_free);
    }
    for (auto& rank : ranks) rank->step_end(step, nccl_free);
  }
  Run run;
  const auto mean = [](const std::vector<TimeNs>& v) {
    int64_t sum = 0;
    for (TimeNs x : v) sum += x;
    return v.empty() ? 0 : sum / static_cast<int64_t>(v.size());
  };
  run.figures.step_ns = mean(ranks[0]->step_ns());
  run.figures.gpu_ns = mean(ranks[0]->gpu_ns());
  for (auto& rank : ranks) run.traces.push_back(rank->finish());
  return run;
}

LoopPlan clean_plan(const SynthSpec& spec) {
  LoopPlan p;
  p.layers = spec.layers;
  p.steps = spec.steps;
  p.ranks = spec.ranks;
  p.batch_bytes = spec.batch_bytes;
  p.dataloader_ns = spec.dataloader_ns;
  p.step_sync = spec.step_sync;
  return p;
}

// The plants of the spec, sized from the clean loop (docs/synth.md, "Plants").
LoopPlan planted_plan(const SynthSpec& spec, const CleanLoopFigures& clean) {
  LoopPlan p = clean_plan(spec);
  const auto share = [](double s, TimeNs of) { return static_cast<TimeNs>(std::llround(s * static_cast<double>(of))); };
  const double loader = std::max(spec.of(Plant::kCombPattern), spec.of(Plant::kDataLoaderBound));
  if (loader > 0) p.dataloader_ns = std::max(p.dataloader_ns, share(loader, clean.gpu_ns));
  if (spec.planted(Plant::kLongTail)) {
    // ceil(strength x steps) steps, chosen by the seed alone (not by the jitter the plants change).
    const int32_t n =
        std::min(spec.steps, static_cast<int32_t>(std::ceil(spec.of(Plant::kLongTail) * spec.steps - 1e-9)));
    std::vector<int32_t> order(static_cast<size_t>(spec.steps));
    for (int32_t i = 0; i < spec.steps; ++i) order[static_cast<size_t>(i)] = i;
    Rng rng(spec.seed ^ 0x6C6F6E675F7461ull);
    for (size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[rng.below(i)]);
    p.long_tail_steps.assign(static_cast<size_t>(spec.steps), 0);
    for (int32_t i = 0; i < n; ++i) p.long_tail_steps[static_cast<size_t>(order[static_cast<size_t>(i)])] = 1;
  }
  if (spec.planted(Plant::kStaircaseMemory)) {
    const double per_step = spec.of(Plant::kStaircaseMemory) * 1073741824.0 / spec.steps;
    p.leak_per_step = static_cast<int64_t>(per_step / 512) * 512;
  }
  if (spec.planted(Plant::kSyncStall))
    p.sync_stalls = static_cast<int32_t>(std::ceil(spec.of(Plant::kSyncStall) * 8 - 1e-9));
  if (spec.planted(Plant::kMemcpyHeavy)) p.extra_copy_ns = share(spec.of(Plant::kMemcpyHeavy), clean.gpu_ns);
  if (spec.planted(Plant::kPageableMemcpy)) {
    // The batch copy takes strength x the clean GPU step at pageable speed (at least the batch).
    const int64_t bytes = share(spec.of(Plant::kPageableMemcpy), clean.gpu_ns) * 6;
    p.pageable_bytes = std::max(spec.batch_bytes, (bytes + 511) / 512 * 512);
  }
  if (spec.planted(Plant::kLaunchBound)) {
    const double s = spec.of(Plant::kLaunchBound);
    p.launch_shape = spec.launch_shape;
    const TimeNs per_op = spec.launch_shape == LaunchShape::kEagerBlock  ? kEagerOpCpuNs
                          : spec.launch_shape == LaunchShape::kGemmQueue ? kQueuedMatmulCpuNs
                                                                         : kTinyOpCpuNs;
    p.tiny_ops = static_cast<int32_t>(
        std::llround(s / (1 - s) * static_cast<double>(clean.step_ns) / static_cast<double>(per_op)));
  }
  if (spec.planted(Plant::kKernelConfig)) p.hot_kernel_ns = share(spec.of(Plant::kKernelConfig), clean.gpu_ns);
  if (spec.planted(Plant::kLayoutOverhead)) p.layout_copy_ns = share(spec.of(Plant::kLayoutOverhead), clean.gpu_ns);
  if (spec.planted(Plant::kGpuIdle)) p.idle_cpu_ns = share(spec.of(Plant::kGpuIdle), clean.step_ns);
  if (spec.planted(Plant::kExposedComm)) {
    p.exposed_comm = true;
    p.exposed_comm_ns = share(spec.of(Plant::kExposedComm), clean.step_ns);
  }
  if (spec.planted(Plant::kStraggler)) p.straggler = spec.of(Plant::kStraggler);
  if (spec.planted(Plant::kTensorCoresUnused)) {
    p.precision = Precision::kFloat;
    p.gemm_slowdown = 1 + 3 * spec.of(Plant::kTensorCoresUnused);
  }
  return p;
}

void find_steps(Trace& t) {
  for (uint32_t i = 0; i < t.ranges.size(); ++i) {
    if (is_profiler_step(t.str(t.ranges.text[i]))) t.pytorch.steps.push_back(i);
  }
}

// What a reader would have recorded about the recording itself.
void describe(Trace& t, const SynthSpec& spec, int32_t rank) {
  t.source.format = "kineto-json";  // a PyTorch profile: its timebase rules apply to the nsys export too
  t.source.path = spec.source.substr(spec.source.find_last_of('/') + 1);
  t.source.session_start_utc_ns = kBaseTimeNs;
  auto& py = t.pytorch;
  py.era = 5;
  py.base_time_ns = kBaseTimeNs;
  if (spec.ranks > 1) {
    py.rank = rank;
    py.world_size = spec.ranks;
    py.backend = "nccl";
  }
  const StrId gpu = t.strings.intern(spec.gpu);
  for (int32_t d = 0; d < spec.ranks; ++d) {  // every GPU of the node is visible to every rank
    t.devices.push_back({d, gpu, spec.gpu_sms, spec.gpu_memory, spec.compute_major, spec.compute_minor});
  }
  const int64_t pid = 24601 + 113 * rank;
  t.processes.push_back({make_global_tid(0, pid, 0), pid, t.strings.intern("python3")});
  // Named as Kineto names them (the nsys export gets the same names).
  t.threads.push_back(
      {make_global_tid(0, pid, pid), t.strings.intern(fmt::format("thread {} (pt_main_thread)", pid)), 0});
  t.threads.push_back({make_global_tid(0, pid, pid + 37),
                       t.strings.intern(fmt::format("thread {} (pt_autograd_{})", pid + 37, rank)), 0});
  find_steps(t);
  auto& tables = t.source.tables;
  tables.insert("StringIds");
  if (t.kernels.size()) tables.insert("CUPTI_ACTIVITY_KIND_KERNEL");
  if (t.memcpys.size()) tables.insert("CUPTI_ACTIVITY_KIND_MEMCPY");
  if (t.api.size()) tables.insert("CUPTI_ACTIVITY_KIND_RUNTIME");
  if (t.ranges.size()) tables.insert("NVTX_EVENTS");
}

}  // namespace

Result<SynthResult> build_training_loop(const SynthSpec& spec) {
  if (spec.steps < 1 || spec.ranks < 1 || spec.layers < 1)
    return UsageError(fmt::format("{}: steps, ranks and layers must be positive", spec.source));
  Run clean = simulate(spec, clean_plan(spec));
  bool any = false;
  for (size_t p = 0; p < kPlantCount; ++p) any |= spec.planted(static_cast<Plant>(p));
  SynthResult out;
  out.clean = clean.figures;
  Run run = any ? simulate(spec, planted_plan(spec, clean.figures)) : std::move(clean);
  for (size_t r = 0; r < run.traces.size(); ++r) {
    describe(run.traces[r], spec, static_cast<int32_t>(r));
    out.ranks.push_back(std::move(run.traces[r]));
  }
  return out;
}

}  // namespace tracedoc::synth
