// Framework -> GPU mapping of a PyTorch trace: which operator launched which kernels, from which CPU
// thread, and how long the launch took to leave the operator and to reach the GPU.
//
// Built on op_links (operator nesting per thread, API call -> innermost operator, GPU activity ->
// launching call), so it is as linear as those: one sort of the operators and of the API calls, a
// hash lookup per kernel, a preorder walk per operator view, and one selection per row for the
// median.
#pragma once

#include <cstdint>
#include <vector>

#include "analysis/nsys_stats/time_summary.h"
#include "analysis/pytorch/op_links.h"
#include "model/trace.h"

namespace tracedoc::pytorch {

// Which operator on the launching call's ancestor chain a kernel is charged to.
enum class OpView : uint8_t {
  kInnermost,  // the innermost operator holding the call (what actually launched it)
  kAten,       // the deepest aten:: operator holding it (HTA's view of an operator)
  kTop,        // the outermost operator holding it (module / top-level call view)
};

// Per operator: the operator a call made directly inside it is charged to under `view` (itself, its
// nearest aten:: ancestor-or-self, its root), kNoRow when there is none (no aten:: ancestor). One
// preorder walk, parents before children.
std::vector<int32_t> charged_operator(const Trace& trace, const OpLinks& links, OpView view);

// Per row of Trace::threads: 1 when the thread is PyTorch's autograd (backward) thread. Kineto names
// it "thread N (pt_autograd_K)" since 2022; older traces name it after the process, so a thread also
// counts when more of its top-level operators are backward operators (Kineto's "Fwd thread id" > 0:
// the autograd engine records the forward op's thread on every node it runs) than forward operators
// ("Fwd thread id" 0). The majority rule keeps a CPU-only run, whose main thread runs forward and
// backward alike, unmarked.
std::vector<uint8_t> autograd_threads(const Trace& trace, const OpLinks& links);

// op_kernel_sum — Operator/Kernel Summary: one row per (operator name, kernel name), the operator
// being the innermost one holding the launching API call's start on the call's own thread
// (`op_kernel_sum:aten`: the deepest aten:: operator there, `op_kernel_sum:top`: the outermost).
// Columns: Time (%) (share of the kernel time of the rows shown), Kernel Total, Count (kernels),
// Kernel Avg, Op To Launch Avg/Min/Max (launch call start - operator start), Launch To Kernel
// Avg/Med/Min/Max (kernel start - launch call end, 0 when the kernel started before the call
// returned), Threads (the launching threads by kernels launched, "[autograd]" after autograd
// threads, at most four then "+N more"), Operator (NULL: the call was made outside every operator,
// or outside every aten:: one with `:aten`), Kernel. Sorted by Kernel Total descending, then
// operator and kernel name. Kernels whose launching call is not in the trace are left out.
// --filter-name keeps rows whose operator or kernel name matches.
Status op_kernel_sum(const Trace&, const ReportArgs&, RowSink&);

}  // namespace tracedoc::pytorch
