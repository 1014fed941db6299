#include "view/sample_view.h"

#include <algorithm>
#include <array>
#include <map>
#include <unordered_map>

#include "analysis/cpu_samples.h"

namespace tracedoc::view {

namespace {

// Functions and stacks are embedded as the page needs them: the first sample that uses one adds it.
class EmbeddedStacks {
 public:
  EmbeddedStacks(const Trace& trace, SampleView& out, const std::vector<SampleClass>& classes)
      : trace_(trace), out_(out), functions_(trace.stacks), classes_(classes) {}

  uint32_t of(StackId stack) {
    if (stack == kNoStack) return SampleView::kNoEmbeddedStack;
    auto [it, added] = stacks_.try_emplace(stack, static_cast<uint32_t>(out_.stack_class.size()));
    if (!added) return it->second;
    for (uint32_t frame : trace_.stacks.stack(stack)) out_.stack_functions.push_back(function(frame));
    out_.stack_offsets.push_back(static_cast<uint32_t>(out_.stack_functions.size()));
    const auto s = static_cast<size_t>(stack);
    out_.stack_class.push_back(static_cast<uint8_t>(s < classes_.size() ? classes_[s] : SampleClass::kNoStack));
    return it->second;
  }

 private:
  uint32_t function(uint32_t frame) {
    const auto f = static_cast<uint32_t>(functions_.of(frame));
    while (out_.function_name.size() <= f) {
      const FunctionSamples& fs = functions_.functions()[out_.function_name.size()];
      const StackFrame& fr = trace_.stacks.frame(frame);
      out_.function_name.push_back(string(fs.symbol));
      out_.function_module.push_back(string(fs.module));
      out_.function_class.push_back(static_cast<uint8_t>(
          classify_frame(trace_.str(fs.symbol), trace_.str(fs.module), fr.kernel_mode(), fs.unresolved)));
    }
    return f;
  }
  uint32_t string(StrId id) {
    auto [it, added] = strings_.try_emplace(id, static_cast<uint32_t>(out_.strings.size()));
    if (added) out_.strings.emplace_back(id == kNoStr ? std::string_view("[unknown]") : trace_.str(id));
    return it->second;
  }

  const Trace& trace_;
  SampleView& out_;
  FunctionIndex functions_;
  const std::vector<SampleClass>& classes_;  // stack_classes(trace), computed once by the caller
  std::unordered_map<StackId, uint32_t> stacks_;
  std::unordered_map<StrId, uint32_t> strings_;
};

// Per bucket of one lane: samples by class.
using ClassCounts = std::array<uint32_t, kSampleClassCount>;

}  // namespace

SampleView build_sample_view(const Trace& trace, const Timeline& timeline, const Lod& lod, int64_t max_samples) {
  SampleView out;
  for (size_t c = 0; c < kSampleClassCount; ++c)
    out.classes.emplace_back(sample_class_name(static_cast<SampleClass>(c)));
  const CpuSampleTable& s = trace.cpu_samples;
  if (s.size() == 0) return out;
  std::unordered_map<int64_t, uint32_t> track_of;  // global tid -> track
  for (uint32_t t = 0; t < timeline.tracks.size(); ++t) {
    if (timeline.tracks[t].kind == TrackKind::kCpuThread) track_of.emplace(timeline.tracks[t].global_tid, t);
  }
  const std::vector<SampleClass> classes = stack_classes(trace);
  const auto class_of = [&](StackId stack) {
    return stack >= 0 && static_cast<size_t>(stack) < classes.size() ? classes[static_cast<size_t>(stack)]
                                                                     : SampleClass::kNoStack;
  };
  // The lanes: every sample of the trace, bucketed.
  const Buckets grid = lod.grid();
  std::map<uint32_t, std::map<uint32_t, ClassCounts>> cells;  // track -> bucket -> counts
  std::vector<uint32_t> order;                                // rows on the timeline's threads
  for (uint32_t i = 0; i < s.size(); ++i) {
    const auto track = track_of.find(s.global_tid[i]);
    if (track == track_of.end() || s.time[i] == kNoTime) continue;
    ++cells[track->second][grid.index_of(s.time[i])][static_cast<size_t>(class_of(s.stack[i]))];
    order.push_back(i);
  }
  out.total = static_cast<int64_t>(order.size());
  for (const auto& [track, buckets] : cells) {
    SampleLane lane;
    lane.track = track;
    for (const auto& [bucket, counts] : buckets) {
      uint32_t n = 0;
      size_t most = 0;
      for (size_t c = 0; c < counts.size(); ++c) {
        n += counts[c];
        if (counts[c] > counts[most]) most = c;
      }
      lane.bucket.push_back(static_cast<uint16_t>(bucket));
      lane.count.push_back(n);
      lane.cls.push_back(static_cast<uint8_t>(most));
      lane.samples += n;
    }
    out.lanes.push_back(std::move(lane));
  }
  // The embedded samples: those of the raw window, in time order, up to the budget.
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return s.time[a] < s.time[b]; });
  out.start = lod.raw.start;
  out.end = lod.raw.end;
  const std::vector<uint8_t> idle = gpu_idle_samples(trace);
  EmbeddedStacks stacks(trace, out, classes);
  for (uint32_t i : order) {
    if (s.time[i] < lod.raw.start || s.time[i] > lod.raw.end) {
      out.complete = false;
      continue;
    }
    if (static_cast<int64_t>(out.time.size()) >= std::max<int64_t>(max_samples, 0)) {
      // The budget ends the window: the page knows the samples it holds up to here.
      out.complete = false;
      out.end = out.time.empty() ? out.start : out.time.back();
      break;
    }
    out.track.push_back(track_of.at(s.global_tid[i]));
    out.time.push_back(s.time[i]);
    out.stack.push_back(stacks.of(s.stack[i]));
    out.gpu_idle.push_back(i < idle.size() ? idle[i] : 0);
  }
  return out;
}

}  // namespace tracedoc::view
