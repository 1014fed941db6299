#include "analysis/cpu_samples.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <initializer_list>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "analysis/context.h"
#include "analysis/cpu_threads.h"
#include "analysis/statistics.h"
#include "analysis/steps.h"
#include "common/human_units.h"
#include "common/text.h"

namespace tracedoc {

namespace {

// The file name of a module path ("/opt/conda/lib/libtorch_cpu.so" -> "libtorch_cpu.so").
std::string_view file_name(std::string_view module) {
  const size_t slash = module.rfind('/');
  return slash == std::string_view::npos ? module : module.substr(slash + 1);
}

}  // namespace

const char* sample_class_name(SampleClass c) {
  switch (c) {
    case SampleClass::kPython: return "Python interpreter";
    case SampleClass::kGil: return "GIL";
    case SampleClass::kPyTorch: return "PyTorch";
    case SampleClass::kCuda: return "CUDA";
    case SampleClass::kAllocation: return "memory allocation";
    case SampleClass::kNumerics: return "NumPy/BLAS/OpenMP";
    case SampleClass::kData: return "data decoding";
    case SampleClass::kProfiler: return "profiler";
    case SampleClass::kKernel: return "OS kernel";
    case SampleClass::kOther: return "other";
    case SampleClass::kUnresolved: return "unresolved";
    case SampleClass::kNoStack: return "no call stack";
  }
  return "other";
}

SampleClass classify_frame(std::string_view symbol, std::string_view module, bool kernel_mode, bool unresolved) {
  if (kernel_mode || module == "[kernel.kallsyms]") return SampleClass::kKernel;
  if (!unresolved) {
    if (symbol == "take_gil" || symbol == "drop_gil" || symbol.starts_with("PyEval_RestoreThread") ||
        symbol.starts_with("PyGILState_Ensure"))
      return SampleClass::kGil;
    if (symbol == "malloc" || symbol == "free" || symbol == "calloc" || symbol == "realloc" ||
        contains_any(symbol,
                     {"_int_malloc", "_int_free", "__libc_malloc", "__libc_free", "__libc_calloc", "malloc_consolidate",
                      "pymalloc_", "operator new", "operator delete", "CachingAllocator", "alloc_cpu", "free_cpu",
                      "cudaMalloc", "cudaFree", "cudaHostAlloc", "cuMemAlloc", "cuMemFree"}))
      return SampleClass::kAllocation;
  }
  const std::string_view file = file_name(module);
  if (contains_any(file, {"libToolsInjection", "libcupti", "libnvToolsExt", "libnvtx"})) return SampleClass::kProfiler;
  if (contains_any(file, {"libcuda.", "libcudart", "libcublas", "libcudnn", "libnccl", "libnvrtc", "libcufft",
                          "libcurand", "libcusparse", "libnvJitLink", "libnvidia-"}))
    return SampleClass::kCuda;
  if (contains_any(file, {"libtorch", "libc10", "libshm", "_C.cpython", "libtorchvision", "_C.so"}))
    return SampleClass::kPyTorch;
  if (file.starts_with("python") || file.starts_with("libpython") || symbol.starts_with("_Py") ||
      symbol.starts_with("Py"))
    return SampleClass::kPython;
  if (contains_any(file,
                   {"_multiarray", "numpy", "openblas", "libblas", "mkl", "libgomp", "libomp", "libiomp", "scipy"}))
    return SampleClass::kNumerics;
  if (contains_any(file, {"_imaging", "PIL", "cv2", "opencv", "libjpeg", "libturbojpeg", "libpng", "libwebp", "_pickle",
                          "image.so", "video_reader"}))
    return SampleClass::kData;
  return unresolved || symbol.empty() || symbol.starts_with('[') ? SampleClass::kUnresolved : SampleClass::kOther;
}

std::string stack_call_site(const Trace& trace, StackId stack) {
  for (uint32_t id : trace.stacks.stack(stack)) {
    const StackFrame& f = trace.stacks.frame(id);
    if (f.kernel_mode() || f.unresolved() || trace.str(f.symbol).empty()) continue;
    const std::string_view file = file_name(trace.str(f.module));
    const SampleClass c = classify_frame({}, file, false, false);  // by the module alone
    if (c == SampleClass::kCuda || c == SampleClass::kProfiler || c == SampleClass::kKernel) continue;
    if (file.starts_with("libc.") || file.starts_with("libc-") || file.starts_with("libpthread") ||
        file.starts_with("ld-") || file.starts_with("libdl") || file.starts_with("librt") || file == "[vdso]")
      continue;
    // Template instantiations run to kilobytes; clipped on a character boundary.
    return fmt::format("{} ({})", clip_text(trace.str(f.symbol), 100), file);
  }
  return {};
}

std::vector<SampleClass> stack_classes(const Trace& trace) {
  const CallStacks& stacks = trace.stacks;
  std::vector<int8_t> frame_class(stacks.frame_count(), -1);
  std::vector<SampleClass> out(stacks.stack_count(), SampleClass::kNoStack);
  for (size_t s = 0; s < out.size(); ++s) {
    // From the sampled function up: the first frame that says something decides; a stack of
    // nothing but libc and unnamed frames is "other" when a frame has a name, else unresolved.
    SampleClass found = SampleClass::kUnresolved;
    for (uint32_t frame : stacks.stack(static_cast<StackId>(s))) {
      int8_t& c = frame_class[frame];
      if (c < 0) {
        const StackFrame& f = stacks.frame(frame);
        c = static_cast<int8_t>(
            classify_frame(trace.str(f.symbol), trace.str(f.module), f.kernel_mode(), f.unresolved()));
      }
      const auto fc = static_cast<SampleClass>(c);
      if (fc == SampleClass::kUnresolved) continue;
      if (fc == SampleClass::kOther) {
        found = SampleClass::kOther;
        continue;
      }
      found = fc;
      break;
    }
    out[s] = found;
  }
  return out;
}

TimeNs sampling_period(const Trace& trace) {
  const CpuSampleTable& c = trace.cpu_samples;
  std::map<int64_t, TimeNs> last;  // per thread
  std::vector<int64_t> gaps;
  gaps.reserve(c.size());
  for (size_t i = 0; i < c.size(); ++i) {
    if (c.time[i] == kNoTime) continue;
    auto [it, fresh] = last.try_emplace(c.global_tid[i], c.time[i]);
    if (!fresh) {
      if (c.time[i] > it->second) gaps.push_back(c.time[i] - it->second);
      it->second = std::max(it->second, c.time[i]);
    }
  }
  return median_ns(std::move(gaps));
}

std::vector<uint8_t> gpu_idle_samples(const Trace& trace) {
  const CpuSampleTable& c = trace.cpu_samples;
  std::vector<uint8_t> out(c.size(), 0);
  const std::unordered_set<int64_t> launching = launching_threads(trace);
  AnalysisContext ctx(trace, StepOptions{});
  std::map<int64_t, IntervalSet> busy;  // per owner (process or rank): the union of its GPUs' work
  for (const pytorch::GpuUnit& u : ctx.gpu_work().units) {
    if (!busy.count(u.owner)) busy.emplace(u.owner, ctx.owner_busy(u.owner));
  }
  for (size_t i = 0; i < c.size(); ++i) {
    if (!launching.count(c.global_tid[i])) continue;
    const auto it = busy.find(ctx.owner_of(c.global_tid[i]));
    if (it == busy.end() || it->second.empty()) continue;
    const Interval span = it->second.span();
    const TimeNs t = c.time[i];
    if (t < span.start || t >= span.end || it->second.covered_within({t, t + 1}) > 0) continue;
    out[i] = 1;
  }
  return out;
}

namespace {

// Per process, the union of `windows` (global pid, interval).
std::map<int64_t, IntervalSet> by_process(std::vector<std::pair<int64_t, Interval>> windows) {
  std::map<int64_t, std::vector<Interval>> lists;
  for (const auto& [pid, w] : windows) lists[pid].push_back(w);
  std::map<int64_t, IntervalSet> out;
  for (auto& [pid, list] : lists) out.emplace(pid, IntervalSet::busy_union(std::move(list)));
  return out;
}

}  // namespace

Result<std::optional<std::vector<uint8_t>>> samples_during(std::string_view report, const Trace& trace,
                                                           const ReportArgs& args) {
  const std::optional<std::string> during = text_report_arg(args, "during");
  if (!during) return std::optional<std::vector<uint8_t>>();
  if (*during == "gpu-idle") return std::optional<std::vector<uint8_t>>(gpu_idle_samples(trace));
  if (during->empty() || *during == "*")
    return UsageError(fmt::format("{}: during needs gpu-idle, steps, step#N or a range name", report));
  std::vector<std::pair<int64_t, Interval>> windows;  // (global pid, window)
  if (*during == "steps" || during->starts_with("step#")) {
    std::optional<int64_t> number;
    if (during->starts_with("step#")) {
      const std::string n = during->substr(5);
      if (n.empty() || n.find_first_not_of("0123456789") != std::string::npos || n.size() > 15)
        return UsageError(fmt::format("{}: during=step#N needs a step number, got '{}'", report, *during));
      number = std::stoll(n);
    }
    auto steps = find_steps(trace, StepOptions{});
    if (!steps.ok()) return no_data(trace, fmt::format("has no steps: {}", steps.status().message()));
    for (const StepWindow& w : steps->steps) {
      if (!number || w.number == *number) windows.push_back({w.global_pid, {w.start, w.end}});
    }
    if (windows.empty()) return no_data(trace, fmt::format("has no step {}.", *number));
  } else {
    const RangeTable& r = trace.ranges;
    for (size_t i = 0; i < r.size(); ++i) {
      if (r.end[i] == kNoTime || r.text[i] == kNoStr || !marker_matches(trace.str(r.text[i]), *during)) continue;
      windows.push_back({global_pid_of(r.global_tid[i]), {r.start[i], r.end[i]}});
    }
    if (windows.empty()) return no_data(trace, fmt::format("has no range named '{}'.", *during));
  }
  const std::map<int64_t, IntervalSet> sets = by_process(std::move(windows));
  const CpuSampleTable& c = trace.cpu_samples;
  std::vector<uint8_t> keep(c.size(), 0);
  for (size_t i = 0; i < c.size(); ++i) {
    const auto it = sets.find(global_pid_of(c.global_tid[i]));
    keep[i] = it != sets.end() && it->second.covered_within({c.time[i], c.time[i] + 1}) > 0;
  }
  return std::optional<std::vector<uint8_t>>(std::move(keep));
}

StackSamples samples_per_stack(const Trace& trace, const CpuSampleFilter& filter) {
  const CpuSampleTable& c = trace.cpu_samples;
  StackSamples out;
  out.per_stack.assign(trace.stacks.stack_count(), 0);
  for (size_t i = 0; i < c.size(); ++i) {
    if (filter.tid >= 0 && tid_of(c.global_tid[i]) != filter.tid) continue;
    if (filter.keep != nullptr && !(*filter.keep)[i]) continue;
    ++out.samples;
    const StackId s = c.stack.empty() ? kNoStack : c.stack[i];
    if (s < 0 || static_cast<size_t>(s) >= out.per_stack.size()) {
      ++out.without_stack;
      continue;
    }
    ++out.per_stack[static_cast<size_t>(s)];
  }
  return out;
}

int32_t FunctionIndex::of(uint32_t frame) {
  if (function_of_.size() <= frame) function_of_.resize(stacks_.frame_count(), -1);
  int32_t& f = function_of_[frame];
  if (f < 0) {
    const StackFrame& fr = stacks_.frame(frame);
    auto [it, fresh] = index_.try_emplace({fr.symbol, fr.module}, static_cast<int32_t>(functions_.size()));
    if (fresh) functions_.push_back({fr.symbol, fr.module, fr.unresolved(), 0, 0});
    f = it->second;
  }
  return f;
}

CpuSampleCounts count_cpu_samples(const Trace& trace, const CpuSampleFilter& filter) {
  const CallStacks& stacks = trace.stacks;
  // Samples per stack first: a training loop repeats a few thousand stacks a million times.
  const StackSamples counted = samples_per_stack(trace, filter);
  const std::vector<int64_t>& per_stack = counted.per_stack;
  CpuSampleCounts out;
  out.samples = counted.samples;
  out.without_stack = counted.without_stack;
  FunctionIndex index(stacks);
  std::vector<FunctionSamples>& functions = index.functions();
  auto function = [&](uint32_t frame) { return index.of(frame); };
  std::vector<StackId> last_counted;  // per function: the stack that last added to its total
  for (size_t s = 0; s < per_stack.size(); ++s) {
    const int64_t n = per_stack[s];
    if (n == 0) continue;
    const std::span<const uint32_t> frames = stacks.stack(static_cast<StackId>(s));
    functions[static_cast<size_t>(function(frames.front()))].self += n;
    for (uint32_t frame : frames) {
      const auto f = static_cast<size_t>(function(frame));
      if (last_counted.size() <= f) last_counted.resize(functions.size(), kNoStack);
      if (last_counted[f] == static_cast<StackId>(s)) continue;  // recursion: once per sample
      last_counted[f] = static_cast<StackId>(s);
      functions[f].total += n;
    }
  }
  out.functions = std::move(functions);
  std::erase_if(out.functions, [](const FunctionSamples& f) { return f.total == 0; });
  std::stable_sort(out.functions.begin(), out.functions.end(), [&](const FunctionSamples& a, const FunctionSamples& b) {
    return std::tuple(-a.self, -a.total, trace.str(a.symbol), trace.str(a.module)) <
           std::tuple(-b.self, -b.total, trace.str(b.symbol), trace.str(b.module));
  });
  return out;
}

Cell sample_share(int64_t part, int64_t whole) {
  return whole > 0 ? Cell::real(sqlite_round(100.0 * static_cast<double>(part) / static_cast<double>(whole), 1))
                   : Cell::null();
}

Status cpu_sample_sum(const Trace& trace, const ReportArgs& args, RowSink& sink) {
  TRACEDOC_RETURN_IF_ERROR(check_report_args("cpu_sample_sum", args, {}, {"thread", "during"}));
  TRACEDOC_ASSIGN_OR_RETURN(const int64_t tid, int_report_arg("cpu_sample_sum", args, "thread", -1));
  TRACEDOC_ASSIGN_OR_RETURN(const auto keep, samples_during("cpu_sample_sum", trace, args));
  if (!trace.source.has_table("COMPOSITE_EVENTS") || trace.cpu_samples.size() == 0)
    return no_data(trace, "does not contain CPU samples (nsys profile --sample=cpu).");
  const CpuSampleCounts counts = count_cpu_samples(trace, {tid, keep ? &*keep : nullptr});
  sink.begin({{"Self", Unit::kRatioPct}, {"Self"}, {"Total", Unit::kRatioPct}, {"Total"}, {"Function"}, {"Module"}});
  std::vector<Cell> row;
  for (const FunctionSamples& f : counts.functions) {
    const std::string_view name = trace.str(f.symbol);
    if (!args.name_ok(name)) continue;
    row = {sample_share(f.self, counts.samples),
           Cell::integer(f.self),
           sample_share(f.total, counts.samples),
           Cell::integer(f.total),
           Cell::text(name),
           Cell::text(trace.str(f.module))};
    sink.row(row);
  }
  if (counts.without_stack > 0 && args.name_ok("[no call stack]")) {
    row = {sample_share(counts.without_stack, counts.samples),
           Cell::integer(counts.without_stack),
           sample_share(counts.without_stack, counts.samples),
           Cell::integer(counts.without_stack),
           Cell::text("[no call stack]"),
           Cell::null()};
    sink.row(row);
  }
  sink.end();
  return Status::Ok();
}

namespace {

// The kept samples' classes counted per key: key_of(sample row) gives it, nullopt leaves the
// sample out.
template <typename Key, typename KeyOf>
std::map<Key, SampleClassCounts> classes_by(const Trace& trace, const CpuSampleFilter& filter, KeyOf key_of) {
  const CpuSampleTable& c = trace.cpu_samples;
  std::map<Key, SampleClassCounts> out;
  if (c.size() == 0) return out;
  const std::vector<SampleClass> classes = stack_classes(trace);
  for (size_t i = 0; i < c.size(); ++i) {
    if (filter.tid >= 0 && tid_of(c.global_tid[i]) != filter.tid) continue;
    if (filter.keep != nullptr && !(*filter.keep)[i]) continue;
    const std::optional<Key> key = key_of(i);
    if (!key) continue;
    const StackId s = c.stack.empty() ? kNoStack : c.stack[i];
    const SampleClass k =
        s >= 0 && static_cast<size_t>(s) < classes.size() ? classes[static_cast<size_t>(s)] : SampleClass::kNoStack;
    ++out[*key][static_cast<size_t>(k)];
  }
  return out;
}

}  // namespace

std::map<int64_t, SampleClassCounts> sample_classes_by_thread(const Trace& trace, const CpuSampleFilter& filter) {
  return classes_by<int64_t>(trace, filter, [&](size_t i) { return std::optional(trace.cpu_samples.global_tid[i]); });
}

std::vector<SampleClass> classes_by_count(std::span<const int64_t> counts) {
  std::vector<SampleClass> out;
  for (size_t k = 0; k < counts.size() && k < kSampleClassCount; ++k) {
    if (counts[k] > 0) out.push_back(static_cast<SampleClass>(k));
  }
  std::stable_sort(out.begin(), out.end(), [&](SampleClass a, SampleClass b) {
    return counts[static_cast<size_t>(a)] > counts[static_cast<size_t>(b)];
  });
  return out;
}

namespace {

// Per sample, the step (index into `steps`) whose CPU window of the sample's process holds it; -1
// outside every step.
std::vector<int32_t> step_of_samples(const Trace& trace, const std::vector<StepWindow>& steps) {
  std::map<int64_t, std::vector<std::pair<Interval, int32_t>>> by_process;
  for (size_t k = 0; k < steps.size(); ++k)
    by_process[steps[k].global_pid].push_back({{steps[k].start, steps[k].end}, static_cast<int32_t>(k)});
  for (auto& [pid, list] : by_process)
    std::sort(list.begin(), list.end(), [](const auto& a, const auto& b) { return a.first.start < b.first.start; });
  const CpuSampleTable& c = trace.cpu_samples;
  std::vector<int32_t> out(c.size(), -1);
  for (size_t i = 0; i < c.size(); ++i) {
    const auto it = by_process.find(global_pid_of(c.global_tid[i]));
    if (it == by_process.end()) continue;
    const auto& list = it->second;
    // The latest-starting window that began at or before the sample.
    auto w = std::upper_bound(list.begin(), list.end(), c.time[i],
                              [](TimeNs t, const auto& x) { return t < x.first.start; });
    if (w != list.begin() && c.time[i] < std::prev(w)->first.end) out[i] = std::prev(w)->second;
  }
  return out;
}

}  // namespace

Status cpu_sample_class_sum(const Trace& trace, const ReportArgs& args, RowSink& sink) {
  constexpr std::string_view kReport = "cpu_sample_class_sum";
  TRACEDOC_RETURN_IF_ERROR(check_report_args(kReport, args, {"detect"}, {"thread", "during", "per", "marker"}));
  TRACEDOC_ASSIGN_OR_RETURN(const int64_t tid, int_report_arg(kReport, args, "thread", -1));
  TRACEDOC_ASSIGN_OR_RETURN(const auto keep, samples_during(kReport, trace, args));
  const std::optional<std::string> per = text_report_arg(args, "per");
  if (per && *per != "step") return UsageError(fmt::format("{}: per must be step, got '{}'", kReport, *per));
  const CpuSampleTable& c = trace.cpu_samples;
  if (!trace.source.has_table("COMPOSITE_EVENTS") || c.size() == 0)
    return no_data(trace, "does not contain CPU samples (nsys profile --sample=cpu).");
  // `:per=step`: each thread's samples per step (the CPU windows of analysis/steps.h).
  std::vector<StepWindow> steps;
  std::vector<int32_t> step_of;
  if (per) {
    TRACEDOC_ASSIGN_OR_RETURN(StepOptions options, step_options_from_args(args.args));
    auto found = find_steps(trace, options);
    if (!found.ok()) return no_data(trace, fmt::format("has no steps: {}", found.status().message()));
    steps = std::move(found->steps);
    step_of = step_of_samples(trace, steps);
  }
  using Group = std::pair<int32_t, int64_t>;  // (step or -1, thread)
  const std::map<Group, SampleClassCounts> groups =
      classes_by<Group>(trace, {tid, keep ? &*keep : nullptr}, [&](size_t i) -> std::optional<Group> {
        const int32_t step = per ? step_of[i] : -1;
        if (per && step < 0) return std::nullopt;
        return Group{step, c.global_tid[i]};
      });
  std::map<int64_t, std::string> names;
  for (const CpuThreadStats& t : cpu_thread_stats(trace)) names[t.global_tid] = t.name;
  const auto samples = [](const SampleClassCounts& counts) {
    int64_t n = 0;
    for (int64_t x : counts) n += x;
    return n;
  };
  // Steps in time order; within one, threads by samples.
  std::vector<std::pair<std::pair<int32_t, int64_t>, const SampleClassCounts*>> order;
  for (const auto& [key, t] : groups) order.emplace_back(key, &t);
  std::stable_sort(order.begin(), order.end(), [&](const auto& a, const auto& b) {
    if (a.first.first != b.first.first) {
      const TimeNs ta = a.first.first < 0 ? 0 : steps[static_cast<size_t>(a.first.first)].start;
      const TimeNs tb = b.first.first < 0 ? 0 : steps[static_cast<size_t>(b.first.first)].start;
      if (ta != tb) return ta < tb;
      return a.first.first < b.first.first;
    }
    return samples(*a.second) > samples(*b.second);
  });
  std::vector<ColumnSpec> columns = {{"PID"}, {"TID"}, {"Thread"}, {"Class"}, {"Samples"}, {"Share", Unit::kRatioPct}};
  if (per) columns.insert(columns.begin() + 1, ColumnSpec{"Step"});
  sink.begin(columns);
  std::vector<Cell> row;
  for (const auto& [key, t] : order) {
    const int64_t g = key.second;
    const std::string& name = names[g];
    for (SampleClass k : classes_by_count(*t)) {
      const int64_t n = (*t)[static_cast<size_t>(k)];
      row = {Cell::integer(pid_of(g)),         Cell::integer(tid_of(g)), name.empty() ? Cell::null() : Cell::text(name),
             Cell::text(sample_class_name(k)), Cell::integer(n),         sample_share(n, samples(*t))};
      if (per) {
        const int64_t number = steps[static_cast<size_t>(key.first)].number;
        row.insert(row.begin() + 1, number == kNoValue ? Cell::null() : Cell::integer(number));
      }
      sink.row(row);
    }
  }
  sink.end();
  return Status::Ok();
}

}  // namespace tracedoc
