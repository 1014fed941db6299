// CPU samples with call stacks (nsys `--sample=cpu`: COMPOSITE_EVENTS + SAMPLING_CALLCHAINS) per
// function: how many samples found it executing (self) and how many found it anywhere on the stack
// (total, once per sample however deep the recursion), in one pass over the distinct stacks.
//
//   cpu_sample_sum  one row per function (symbol and module), by self samples: Self (%), Self,
//                   Total (%), Total, Function, Module. Shares are of every kept sample, those
//                   without a stack included ("[no call stack]" row). `:thread=TID` keeps one
//                   thread's samples; --filter-time / --filter-nvtx restrict them to a window, as
//                   for every report; --filter-name keeps the functions whose name it finds.
//   cpu_sample_class_sum  per thread, its samples by what the CPU was doing (SampleClass below):
//                   PID, TID, Thread, Class, Samples, Share (%) of the thread's samples; threads by
//                   samples, classes by samples. `:thread=TID` as above.
//   cpu_sample_tree the call tree of the samples (analysis/cpu_sample_tree.cpp): top-down from the
//                   threads' entry points by default, `:bottom-up` from the sampled functions to
//                   their callers. Rows in depth-first order, children by samples: Depth, Total
//                   (%), Total, Self, Function, Module. `:depth=N` keeps depths below N, `:min=PCT`
//                   the nodes with at least PCT% of the samples (default 0.5), `:root=REGEX` (top-down)
//                   starts each stack at its outermost function whose name REGEX finds, leaving out
//                   the stacks without one.
// Every one takes `:thread=TID` and `:during=WHEN` (samples_during): what the CPU did while the GPU
// waited (gpu-idle), in the steps, in one step, or inside a range.
//
// A sample's class is that of the frame nearest the sampled function that says something (a
// memcpy in libc called from libtorch is PyTorch's work; take_gil is waiting for the GIL wherever
// it is called from): by the frame's symbol first (GIL, memory allocation), then its module.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "analysis/report.h"
#include "common/name_pattern.h"
#include "model/trace.h"

namespace tracedoc {

struct FunctionSamples {
  StrId symbol = kNoStr, module = kNoStr;
  bool unresolved = false;  // the symbol is an address nsys could not name
  int64_t self = 0, total = 0;
};

struct CpuSampleCounts {
  int64_t samples = 0;                     // samples kept
  int64_t without_stack = 0;               // of which no call stack was recorded
  std::vector<FunctionSamples> functions;  // by self, then total, descending, then name
};

enum class SampleClass : uint8_t {
  kPython,      // the interpreter (libpython, python3.X, _PyEval_*)
  kGil,         // waiting for or handing over the GIL (take_gil, drop_gil, PyEval_RestoreThread)
  kPyTorch,     // the dispatcher, autograd and CPU kernels (libtorch*, libc10*)
  kCuda,        // CUDA runtime, driver and libraries (libcuda, libcudart, cuBLAS, cuDNN, NCCL)
  kAllocation,  // memory allocation (malloc/free, operator new/delete, the caching allocators)
  kNumerics,    // NumPy, BLAS, OpenMP runtimes
  kData,        // image decoding and data transforms (PIL, OpenCV, libjpeg, libpng, pickle)
  kProfiler,    // the profiler's own injection (nsys, CUPTI, NVTX)
  kKernel,      // the OS kernel
  kOther,       // everything else (libc, libstdc++, the program itself)
  kUnresolved,  // no frame with a name
  kNoStack,     // no call stack recorded
};
inline constexpr size_t kSampleClassCount = 12;
const char* sample_class_name(SampleClass c);  // "Python interpreter", "GIL", "PyTorch", ...
SampleClass classify_frame(std::string_view symbol, std::string_view module, bool kernel_mode, bool unresolved);

struct CpuSampleFilter {
  int64_t tid = -1;  // keep only this thread's samples (its OS thread id); -1: every thread
  // Keep only these samples (by row), when set: e.g. gpu_idle_samples.
  const std::vector<uint8_t>* keep = nullptr;
};

// `:during=WHEN`, the samples a report keeps (null when the argument is absent):
//   gpu-idle      gpu_idle_samples below
//   steps         taken inside a step's CPU window of the sample's process (analysis/steps.h: the
//                 ProfilerStep#N ranges, else the detected steps)
//   step#N        inside step N's window
//   NAME, NAME*   inside an NVTX or annotation range of that name (NAME* by prefix) of the
//                 sample's process, on any of its threads
// A usage error for a malformed value; NoData when there is no such step or range.
Result<std::optional<std::vector<uint8_t>>> samples_during(std::string_view report, const Trace& trace,
                                                           const ReportArgs& args);

// The sampling period: the median distance between consecutive samples of a thread (nsys samples
// each running thread at one rate); 0 when no thread has two samples.
TimeNs sampling_period(const Trace& trace);

// Per sample: whether it is of a thread that launches GPU work (makes CUDA/HIP API calls) and was
// taken while its process's GPUs were all idle, between the process's first and last GPU work:
// what the CPU did while the GPU waited.
std::vector<uint8_t> gpu_idle_samples(const Trace& trace);

CpuSampleCounts count_cpu_samples(const Trace& trace, const CpuSampleFilter& filter = {});

// The samples a filter keeps, counted per distinct stack (index: StackId).
struct StackSamples {
  int64_t samples = 0;        // kept
  int64_t without_stack = 0;  // of which no call stack was recorded
  std::vector<int64_t> per_stack;
};
StackSamples samples_per_stack(const Trace& trace, const CpuSampleFilter& filter = {});

// Frames to functions: a function is its symbol and module (frames differing only in flags are
// the same function), numbered in the order first met.
class FunctionIndex {
 public:
  explicit FunctionIndex(const CallStacks& stacks) : stacks_(stacks) {}
  int32_t of(uint32_t frame);
  std::vector<FunctionSamples>& functions() { return functions_; }  // counts start at zero

 private:
  const CallStacks& stacks_;
  std::vector<int32_t> function_of_;  // per frame, -1 until met
  std::map<std::pair<StrId, StrId>, int32_t> index_;
  std::vector<FunctionSamples> functions_;
};

// The call tree of the kept samples (cpu_sample_tree, the flame graph): top-down from the
// threads' entry points, or bottom-up from the sampled functions to their callers; with `root`
// (top-down), each stack starts at its outermost function whose name it finds, the stacks without
// one left out. Built per distinct stack, weighted by its samples.
struct SampleTree {
  struct Node {
    int32_t function = -1;  // into `functions`; -1 for node 0, the root above every path
    int64_t total = 0;      // samples whose path passes through the node
    int64_t self = 0;       // samples whose path ends at it
    std::vector<int32_t> children;
  };
  std::vector<Node> nodes;
  std::vector<FunctionSamples> functions;  // the FunctionIndex's (their counts unused)
  int64_t samples = 0;                     // kept, those without a stack included
  int64_t without_stack = 0;
  // A node's children by samples, then name and module.
  std::vector<int32_t> children_of(const Trace& trace, int32_t node) const;
};
SampleTree sample_tree(const Trace& trace, const CpuSampleFilter& filter, bool bottom_up,
                       const NamePattern* root = nullptr);

// A share as the sample and scheduling reports print it: percent, one decimal; NULL of nothing.
Cell sample_share(int64_t part, int64_t whole);

// Where a stack's call was made from, for a finding's evidence: the frame nearest the leaf that is
// the program's or a framework's code, past the C library, the dynamic loader, the CUDA runtime
// and driver, the profiler's injection, the OS kernel and unnamed frames: "select_poll_poll
// (select.cpython-38-x86_64-linux-gnu.so)", "at::native::copy_kernel_cuda(at::TensorIterator&,
// bool) (libtorch_cuda_cu.so)". Empty when the stack has no such frame.
std::string stack_call_site(const Trace& trace, StackId stack);

// Each stack's class (index: StackId), as classify_frame decides it from the leaf up.
std::vector<SampleClass> stack_classes(const Trace& trace);

// Per thread (global tid): its samples by class (index: SampleClass); `keep` as CpuSampleFilter's.
using SampleClassCounts = std::array<int64_t, kSampleClassCount>;
// The classes with samples in `counts` (index: SampleClass), most samples first.
std::vector<SampleClass> classes_by_count(std::span<const int64_t> counts);
std::map<int64_t, SampleClassCounts> sample_classes_by_thread(const Trace& trace, const CpuSampleFilter& filter = {});

Status cpu_sample_sum(const Trace& trace, const ReportArgs& args, RowSink& sink);
Status cpu_sample_class_sum(const Trace& trace, const ReportArgs& args, RowSink& sink);
Status cpu_sample_tree(const Trace& trace, const ReportArgs& args, RowSink& sink);

}  // namespace tracedoc
