// CPU samples with call stacks (nsys `--sample=cpu`: COMPOSITE_EVENTS + SAMPLING_CALLCHAINS) per
// function: how many samples found it executing (self) and how many found it anywhere on the stack
// (total, once per sample however deep the recursion), in one pass over the distinct stacks.
//
//   cpu_sample_sum  one row per function (symbol and module), by self samples: Self (%), Self,
//                   Total (%), Total, Function, Module. Shares are of every kept sample, those
//                   without a stack included ("[no call stack]" row). `:thread=TID` keeps one
//                   thread's samples; --filter-time / --filter-nvtx restrict them to a window, as
//                   for every report; --filter-name keeps the functions whose name it finds.
#pragma once

#include <cstdint>
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

struct CpuSampleFilter {
  int64_t tid = -1;  // keep only this thread's samples (its OS thread id); -1: every thread
};

CpuSampleCounts count_cpu_samples(const Trace& trace, const CpuSampleFilter& filter = {});

Status cpu_sample_sum(const Trace& trace, const ReportArgs& args, RowSink& sink);

}  // namespace tracedoc
