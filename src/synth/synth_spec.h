// The description `tracedoc synth` builds a trace from (docs/synth.md): the machine, the length of
// the run, the shape of a clean PyTorch-like training loop, and the fingerprints (plants) to put
// into it, each at a strength. Read from TOML; anything unknown or out of range is an error that
// names the file and the key, so a typo never silently yields a clean trace.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"

namespace tracedoc::synth {

// The fingerprints, named by the `tracedoc diagnose` rule each one is meant to trigger.
// comb_pattern and dataloader_bound are one plant (the same physical change shows as both).
enum class Plant : uint8_t {
  kCombPattern,
  kDataLoaderBound,
  kLongTail,
  kStaircaseMemory,
  kSyncStall,
  kMemcpyHeavy,
  kPageableMemcpy,
  kLaunchBound,
  kKernelConfig,
  kExposedComm,
  kStraggler,
  kLayoutOverhead,
  kTensorCoresUnused,
  kGpuIdle,
};
inline constexpr size_t kPlantCount = 14;
const char* plant_id(Plant p);
// The largest strength a plant takes (most: 1; staircase_memory: GiB; straggler: extra slowdown).
double max_strength(Plant p);
// True for the plants that need ranks >= 2.
bool needs_ranks(Plant p);

// What the loop does at the end of each step to read the loss (docs/synth.md, "Pacing").
enum class StepSync : uint8_t {
  kItem,    // loss.item(): a 4-byte copy to pageable memory and cudaStreamSynchronize
  kDevice,  // torch.cuda.synchronize(): cudaDeviceSynchronize
  kNone,    // nothing: the CPU runs ahead of the GPU across steps
};

// How the launch_bound plant spends its share of the step (docs/synth.md, the plants).
enum class LaunchShape : uint8_t {
  kTinyKernels,  // many 2-3 µs elementwise kernels, each launched in 6-8 µs
  kEagerBlock,   // an eager block of ~35 small kernels (layer norm, tanh, cat, ...) with Python
                 // between the launches, ending in torch.cuda.synchronize() on an idle GPU
  kGemmQueue,    // one large GEMM, then small matmuls queued behind it that drain faster than the
                 // CPU launches them, exposing the launch latency between them
};

struct SynthSpec {
  std::string source = "<spec>";  // the file, for messages
  // The GPU: SM count, memory and compute capability from a built-in table, or given.
  std::string gpu = "NVIDIA A100-SXM4-80GB";
  int32_t gpu_sms = 108;
  int64_t gpu_memory = int64_t{80} << 30;
  int32_t compute_major = 8, compute_minor = 0;
  int32_t steps = 12;
  int32_t ranks = 1;
  uint64_t seed = 1;
  // [model]
  int32_t layers = 3;                      // transformer blocks (12 forward kernels each)
  int64_t batch_bytes = int64_t{8} << 20;  // input batch copied to the GPU each step
  int64_t dataloader_ns = 300'000;         // the clean DataLoader.__next__ range
  StepSync step_sync = StepSync::kItem;
  // [plant.<rule_id>] strength; negative: not planted.
  std::array<double, kPlantCount> strength{};
  LaunchShape launch_shape = LaunchShape::kTinyKernels;  // [plant.launch_bound] shape

  SynthSpec() { strength.fill(-1); }
  bool planted(Plant p) const { return strength[static_cast<size_t>(p)] > 0; }
  double of(Plant p) const { return planted(p) ? strength[static_cast<size_t>(p)] : 0.0; }
};

// Parses a spec; `name` is the file name used in messages ("FILE: key: problem").
Result<SynthSpec> parse_synth_spec(std::string_view toml_text, const std::string& name);
Result<SynthSpec> read_synth_spec(const std::string& path);

}  // namespace tracedoc::synth
