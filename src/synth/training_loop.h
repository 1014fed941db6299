// `tracedoc synth`: a PyTorch-like training loop built from a description (synth_spec.h), clean or
// with fingerprints planted in it, as one Trace per rank that writes out both as an Nsight Systems
// export (write_nsys_sqlite) and as a PyTorch profiler trace (write_kineto_json).
//
// The same spec and seed always give the same traces, byte for byte once written.
//
// Plants change the loop itself, never only its labels: a slower kernel makes everything after it
// on the GPU later, a host sync makes the CPU wait for the GPU, an exposed all-reduce delays the
// optimizer. Each plant is sized from the clean loop of the same spec, so a strength means the same
// share of a step whatever the model: the clean loop is simulated first, its mean step (CPU span)
// and its mean GPU time per step measured, then the planted loop (docs/synth.md gives each plant's
// formula).
#pragma once

#include <vector>

#include "common/status.h"
#include "model/trace.h"
#include "synth/synth_spec.h"

namespace tracedoc::synth {

// What the clean loop of a spec measures, from rank 0.
struct CleanLoopFigures {
  TimeNs step_ns = 0;  // mean ProfilerStep#N span on the CPU
  TimeNs gpu_ns = 0;   // mean GPU time (kernels and copies on the compute stream) launched per step
};

struct SynthResult {
  std::vector<Trace> ranks;  // one trace per rank, rank order
  CleanLoopFigures clean;    // what the plants were sized from
};

Result<SynthResult> build_training_loop(const SynthSpec& spec);

}  // namespace tracedoc::synth
