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

namespace tracedoc {

namespace {

bool contains(std::string_view s, std::initializer_list<std::string_view> parts) {
  for (std::string_view p : parts) {
    if (s.find(p) != std::string_view::npos) return true;
  }
  return false;
}

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
        contains(symbol,
                 {"_int_malloc", "_int_free", "__libc_malloc", "__libc_free", "__libc_calloc", "malloc_consolidate",
                  "pymalloc_", "operator new", "operator delete", "CachingAllocator", "alloc_cpu", "free_cpu",
                  "cudaMalloc", "cudaFree", "cudaHostAlloc", "cuMemAlloc", "cuMemFree"}))
      return SampleClass::kAllocation;
  }
  const std::string_view file = file_name(module);
  if (contains(file, {"libToolsInjection", "libcupti", "libnvToolsExt", "libnvtx"})) return SampleClass::kProfiler;
  if (contains(file, {"libcuda.", "libcudart", "libcublas", "libcudnn", "libnccl", "libnvrtc", "libcufft", "libcurand",
                      "libcusparse", "libnvJitLink", "libnvidia-"}))
    return SampleClass::kCuda;
  if (contains(file, {"libtorch", "libc10", "libshm", "_C.cpython", "libtorchvision", "_C.so"}))
    return SampleClass::kPyTorch;
  if (file.starts_with("python") || file.starts_with("libpython") || symbol.starts_with("_Py") ||
      symbol.starts_with("Py"))
    return SampleClass::kPython;
  if (contains(file, {"_multiarray", "numpy", "openblas", "libblas", "mkl", "libgomp", "libomp", "libiomp", "scipy"}))
    return SampleClass::kNumerics;
  if (contains(file, {"_imaging", "PIL", "cv2", "opencv", "libjpeg", "libturbojpeg", "libpng", "libwebp", "_pickle",
                      "image.so", "video_reader"}))
    return SampleClass::kData;
  return unresolved || symbol.empty() || symbol.starts_with('[') ? SampleClass::kUnresolved : SampleClass::kOther;
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

std::vector<uint8_t> gpu_idle_samples(const Trace& trace) {
  const CpuSampleTable& c = trace.cpu_samples;
  std::vector<uint8_t> out(c.size(), 0);
  std::set<int64_t> launching;
  for (int64_t tid : trace.api.global_tid) launching.insert(tid);
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

// `:during=...`: the samples mask it asks for (null when absent), a usage error when unknown.
Result<std::optional<std::vector<uint8_t>>> during_arg(std::string_view report, const Trace& trace,
                                                       const ReportArgs& args) {
  const std::optional<std::string> during = text_report_arg(args, "during");
  if (!during) return std::optional<std::vector<uint8_t>>();
  if (*during != "gpu-idle") return UsageError(fmt::format("{}: during must be gpu-idle, got '{}'", report, *during));
  return std::optional<std::vector<uint8_t>>(gpu_idle_samples(trace));
}

}  // namespace

CpuSampleCounts count_cpu_samples(const Trace& trace, const CpuSampleFilter& filter) {
  const CpuSampleTable& c = trace.cpu_samples;
  const CallStacks& stacks = trace.stacks;
  CpuSampleCounts out;
  // Samples per stack first: a training loop repeats a few thousand stacks a million times.
  std::vector<int64_t> per_stack(stacks.stack_count(), 0);
  for (size_t i = 0; i < c.size(); ++i) {
    if (filter.tid >= 0 && tid_of(c.global_tid[i]) != filter.tid) continue;
    if (filter.keep != nullptr && !(*filter.keep)[i]) continue;
    ++out.samples;
    const StackId s = c.stack.empty() ? kNoStack : c.stack[i];
    if (s < 0 || static_cast<size_t>(s) >= per_stack.size()) {
      ++out.without_stack;
      continue;
    }
    ++per_stack[static_cast<size_t>(s)];
  }
  // A function is its symbol and module; frames differing only in flags are the same function.
  std::vector<int32_t> function_of(stacks.frame_count(), -1);
  std::map<std::pair<StrId, StrId>, int32_t> index;
  auto function = [&](uint32_t frame) -> int32_t {
    int32_t& f = function_of[frame];
    if (f < 0) {
      const StackFrame& fr = stacks.frame(frame);
      auto [it, fresh] = index.try_emplace({fr.symbol, fr.module}, static_cast<int32_t>(out.functions.size()));
      if (fresh) out.functions.push_back({fr.symbol, fr.module, fr.unresolved(), 0, 0});
      f = it->second;
    }
    return f;
  };
  std::vector<StackId> last_counted;  // per function: the stack that last added to its total
  for (size_t s = 0; s < per_stack.size(); ++s) {
    const int64_t n = per_stack[s];
    if (n == 0) continue;
    const std::span<const uint32_t> frames = stacks.stack(static_cast<StackId>(s));
    out.functions[static_cast<size_t>(function(frames.front()))].self += n;
    for (uint32_t frame : frames) {
      const auto f = static_cast<size_t>(function(frame));
      if (last_counted.size() <= f) last_counted.resize(out.functions.size(), kNoStack);
      if (last_counted[f] == static_cast<StackId>(s)) continue;  // recursion: once per sample
      last_counted[f] = static_cast<StackId>(s);
      out.functions[f].total += n;
    }
  }
  std::erase_if(out.functions, [](const FunctionSamples& f) { return f.total == 0; });
  std::stable_sort(out.functions.begin(), out.functions.end(), [&](const FunctionSamples& a, const FunctionSamples& b) {
    return std::tuple(-a.self, -a.total, trace.str(a.symbol), trace.str(a.module)) <
           std::tuple(-b.self, -b.total, trace.str(b.symbol), trace.str(b.module));
  });
  return out;
}

namespace {

Cell share(int64_t part, int64_t whole) {
  return whole > 0 ? Cell::real(sqlite_round(100.0 * static_cast<double>(part) / static_cast<double>(whole), 1))
                   : Cell::null();
}

}  // namespace

Status cpu_sample_sum(const Trace& trace, const ReportArgs& args, RowSink& sink) {
  TRACEDOC_RETURN_IF_ERROR(check_report_args("cpu_sample_sum", args, {}, {"thread", "during"}));
  TRACEDOC_ASSIGN_OR_RETURN(const int64_t tid, int_report_arg("cpu_sample_sum", args, "thread", -1));
  TRACEDOC_ASSIGN_OR_RETURN(const auto keep, during_arg("cpu_sample_sum", trace, args));
  if (!trace.source.has_table("COMPOSITE_EVENTS") || trace.cpu_samples.size() == 0)
    return no_data(trace, "does not contain CPU samples (nsys profile --sample=cpu).");
  const CpuSampleCounts counts = count_cpu_samples(trace, {tid, keep ? &*keep : nullptr});
  sink.begin({{"Self", Unit::kRatioPct}, {"Self"}, {"Total", Unit::kRatioPct}, {"Total"}, {"Function"}, {"Module"}});
  std::vector<Cell> row;
  for (const FunctionSamples& f : counts.functions) {
    const std::string_view name = trace.str(f.symbol);
    if (!args.name_ok(name)) continue;
    row = {share(f.self, counts.samples), Cell::integer(f.self), share(f.total, counts.samples),
           Cell::integer(f.total),        Cell::text(name),      Cell::text(trace.str(f.module))};
    sink.row(row);
  }
  if (counts.without_stack > 0 && args.name_ok("[no call stack]")) {
    row = {share(counts.without_stack, counts.samples),
           Cell::integer(counts.without_stack),
           share(counts.without_stack, counts.samples),
           Cell::integer(counts.without_stack),
           Cell::text("[no call stack]"),
           Cell::null()};
    sink.row(row);
  }
  sink.end();
  return Status::Ok();
}

std::map<int64_t, SampleClassCounts> sample_classes_by_thread(const Trace& trace, const CpuSampleFilter& filter) {
  const CpuSampleTable& c = trace.cpu_samples;
  std::map<int64_t, SampleClassCounts> out;
  if (c.size() == 0) return out;
  const std::vector<SampleClass> classes = stack_classes(trace);
  for (size_t i = 0; i < c.size(); ++i) {
    if (filter.tid >= 0 && tid_of(c.global_tid[i]) != filter.tid) continue;
    if (filter.keep != nullptr && !(*filter.keep)[i]) continue;
    const StackId s = c.stack.empty() ? kNoStack : c.stack[i];
    const SampleClass k =
        s >= 0 && static_cast<size_t>(s) < classes.size() ? classes[static_cast<size_t>(s)] : SampleClass::kNoStack;
    ++out[c.global_tid[i]][static_cast<size_t>(k)];
  }
  return out;
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

Status cpu_sample_class_sum(const Trace& trace, const ReportArgs& args, RowSink& sink) {
  TRACEDOC_RETURN_IF_ERROR(check_report_args("cpu_sample_class_sum", args, {}, {"thread", "during"}));
  TRACEDOC_ASSIGN_OR_RETURN(const int64_t tid, int_report_arg("cpu_sample_class_sum", args, "thread", -1));
  TRACEDOC_ASSIGN_OR_RETURN(const auto keep, during_arg("cpu_sample_class_sum", trace, args));
  const CpuSampleTable& c = trace.cpu_samples;
  if (!trace.source.has_table("COMPOSITE_EVENTS") || c.size() == 0)
    return no_data(trace, "does not contain CPU samples (nsys profile --sample=cpu).");
  const std::map<int64_t, SampleClassCounts> threads = sample_classes_by_thread(trace, {tid, keep ? &*keep : nullptr});
  std::map<int64_t, std::string> names;
  for (const CpuThreadStats& t : cpu_thread_stats(trace)) names[t.global_tid] = t.name;
  const auto samples = [](const SampleClassCounts& counts) {
    int64_t n = 0;
    for (int64_t x : counts) n += x;
    return n;
  };
  std::vector<std::pair<int64_t, const SampleClassCounts*>> order;
  for (const auto& [g, t] : threads) order.emplace_back(g, &t);
  std::stable_sort(order.begin(), order.end(),
                   [&](const auto& a, const auto& b) { return samples(*a.second) > samples(*b.second); });
  sink.begin({{"PID"}, {"TID"}, {"Thread"}, {"Class"}, {"Samples"}, {"Share", Unit::kRatioPct}});
  std::vector<Cell> row;
  for (const auto& [g, t] : order) {
    const std::string& name = names[g];
    for (SampleClass k : classes_by_count(*t)) {
      const int64_t n = (*t)[static_cast<size_t>(k)];
      row = {Cell::integer(pid_of(g)),         Cell::integer(tid_of(g)), name.empty() ? Cell::null() : Cell::text(name),
             Cell::text(sample_class_name(k)), Cell::integer(n),         share(n, samples(*t))};
      sink.row(row);
    }
  }
  sink.end();
  return Status::Ok();
}

}  // namespace tracedoc
