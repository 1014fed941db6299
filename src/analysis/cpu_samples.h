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
// Both take `:during=gpu-idle`: only the samples of the threads that launch GPU work taken while
// their process's GPUs were idle (gpu_idle_samples).
//
// A sample's class is that of the frame nearest the sampled function that says something (a
// memcpy in libc called from libtorch is PyTorch's work; take_gil is waiting for the GIL wherever
// it is called from): by the frame's symbol first (GIL, memory allocation), then its module.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <span>
#include <string_view>
#include <vector>

#include "analysis/report.h"
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

// Per sample: whether it is of a thread that launches GPU work (makes CUDA/HIP API calls) and was
// taken while its process's GPUs were all idle, between the process's first and last GPU work:
// what the CPU did while the GPU waited.
std::vector<uint8_t> gpu_idle_samples(const Trace& trace);

CpuSampleCounts count_cpu_samples(const Trace& trace, const CpuSampleFilter& filter = {});

// Each stack's class (index: StackId), as classify_frame decides it from the leaf up.
std::vector<SampleClass> stack_classes(const Trace& trace);

// Per thread (global tid): its samples by class (index: SampleClass); `keep` as CpuSampleFilter's.
using SampleClassCounts = std::array<int64_t, kSampleClassCount>;
// The classes with samples in `counts` (index: SampleClass), most samples first.
std::vector<SampleClass> classes_by_count(std::span<const int64_t> counts);
std::map<int64_t, SampleClassCounts> sample_classes_by_thread(const Trace& trace, const CpuSampleFilter& filter = {});

Status cpu_sample_sum(const Trace& trace, const ReportArgs& args, RowSink& sink);
Status cpu_sample_class_sum(const Trace& trace, const ReportArgs& args, RowSink& sink);

}  // namespace tracedoc
