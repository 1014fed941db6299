// PyTorch operators that torch.autograd.profiler.emit_nvtx(record_shapes=True) recorded as NVTX
// ranges (model/emit_nvtx_names.h), for the Nsight Systems exports and captures of PyTorch runs:
// they become Trace::pytorch.ops rows, so the operator analyses (FLOPs, operator -> kernel links,
// framework overhead) run on them as on a PyTorch profiler trace. With record_shapes=True every
// operator with inputs carries `sizes`; the record_function scopes (ProfilerStep#N,
// Optimizer.step#...) have no inputs and stay ranges only. emit_nvtx records no dtypes and no
// scalar arguments: the operators have input dims only.
#pragma once

#include "model/trace.h"

namespace tracedoc {

// Adds an operator, in time order, for every closed NVTX push/pop range whose name carries
// `sizes` (the dims, as Python prints lists, go to input_dims; seq and op_id to sequence_number
// and external_id). Nothing changes for a trace without such ranges or one that already has
// operators (a PyTorch profiler trace).
void add_emit_nvtx_operators(Trace& trace);

}  // namespace tracedoc
