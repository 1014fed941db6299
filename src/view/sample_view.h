// CPU samples on `tracedoc view`'s page (nsys --sample=cpu, tracedoc capture --sample cpu):
//
//  * a lane of ticks under each sampled thread's track: per bucket of the timeline (lod.h) how many
//    samples the thread took and the class most of them belong to (analysis/cpu_samples.h:
//    Python, PyTorch, CUDA, allocation, ...), for every sample of the trace;
//  * the samples themselves, for the flame graph the page draws of the visible window (or of its
//    GPU-idle time, or of one thread): each with its thread's track, time, stack and whether its
//    GPU was idle then (gpu_idle_samples), those of the raw window (lod.h's RawSelection) up to a
//    budget; the stacks they use as runs of function ids (a function is a symbol in a module),
//    stored once.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/trace.h"
#include "view/lod.h"
#include "view/timeline.h"

namespace tracedoc::view {

struct SampleLane {
  uint32_t track = 0;  // the thread's track in the Timeline
  int64_t samples = 0;
  std::vector<uint16_t> bucket;  // non-empty buckets, ascending
  std::vector<uint32_t> count;   // samples in the bucket
  std::vector<uint8_t> cls;      // the class of most of them (SampleClass)
};

struct SampleView {
  std::vector<std::string> classes;  // SampleClass labels, by value
  std::vector<SampleLane> lanes;     // by track
  // Functions: name and module as indices into `strings`, and their own class.
  std::vector<std::string> strings;
  std::vector<uint32_t> function_name, function_module;
  std::vector<uint8_t> function_class;
  // The embedded samples' stacks: stack i is stack_functions[stack_offsets[i], stack_offsets[i + 1]),
  // the sampled function first; stack_class is the sample's class (the frame nearest it that says
  // something).
  std::vector<uint32_t> stack_offsets{0}, stack_functions;
  std::vector<uint8_t> stack_class;
  // The embedded samples, in time order; stack kNoEmbeddedStack when none was recorded.
  static constexpr uint32_t kNoEmbeddedStack = 0xFFFFFFFF;
  std::vector<uint32_t> track;
  std::vector<TimeNs> time;
  std::vector<uint32_t> stack;
  std::vector<uint8_t> gpu_idle;
  TimeNs start = 0, end = 0;  // the embedded window (absolute trace time)
  bool complete = true;       // every sample is embedded
  int64_t total = 0;          // samples of the trace on the timeline's threads
  bool empty() const { return total == 0; }
};

SampleView build_sample_view(const Trace& trace, const Timeline& timeline, const Lod& lod, int64_t max_samples);

}  // namespace tracedoc::view
