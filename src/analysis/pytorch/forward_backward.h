// Forward -> backward links of a PyTorch trace: for each autograd operator, the forward operator
// whose gradient it computes.
//
// Two sources exist. Traces from 2022-10 on draw `fwdbwd` flow arrows (older ones
// `forward_backward` / `fwd_bwd`) from the forward op to the backward op; both ends sit at their
// operator's start time on its thread. Every era also records the autograd sequence number: a
// backward op carries "Sequence number" N and "Fwd thread id", its forward op the same N. PyTorch
// builds the arrows from the sequence numbers itself, taking among the forward ops with the same
// number the one that started last (the op that created the autograd node), so without arrows the
// same rule gives the same links.
#pragma once

#include <cstdint>
#include <vector>

#include "analysis/pytorch/op_links.h"
#include "model/trace.h"

namespace tracedoc::pytorch {

struct ForwardBackwardLinks {
  std::vector<int32_t> forward_of;  // per operator: its forward operator, kNoRow when none
  int64_t linked = 0;               // operators that got a forward operator
};

// From the trace's flow arrows (empty links when the trace has none).
ForwardBackwardLinks link_by_flows(const Trace& trace);
// From sequence numbers. Forward ops are matched per process: Kineto's "Fwd thread id" is the
// profiler's internal thread number, not an OS thread id, so it cannot name the thread.
ForwardBackwardLinks link_by_sequence_number(const Trace& trace);
// The arrows when the trace has them, else the sequence numbers.
ForwardBackwardLinks link_forward_backward(const Trace& trace);

}  // namespace tracedoc::pytorch
