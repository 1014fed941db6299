// PyTorch operators that torch.autograd.profiler.emit_nvtx(record_shapes=True) recorded as NVTX
// ranges (model/emit_nvtx_names.h), for the Nsight Systems exports and captures of PyTorch runs:
// they become Trace::pytorch.ops rows, so the operator analyses (FLOPs, operator -> kernel links,
// framework overhead) run on them as on a PyTorch profiler trace. With record_shapes=True every
// operator with inputs carries `sizes`, and the autograd engine's wrapper around each backward node
// ("autograd::engine::evaluate_function: AddmmBackward0") has none: these are the operators, the
// same ones the PyTorch profiler records. The record_function scopes (ProfilerStep#N,
// Optimizer.step#...) have no inputs and stay ranges only. emit_nvtx records no dtypes and no
// scalar arguments: the operators have input dims only.
#pragma once

#include "model/trace.h"

namespace tracedoc {

// Adds an operator, in time order, for every closed NVTX push/pop range named as above (the dims, as
// Python prints lists, go to input_dims; seq and op_id to sequence_number and external_id). Nothing
// changes for a trace without a range that carries `sizes` (emit_nvtx without record_shapes: the
// operators cannot be told from the scopes) or one that already has operators (a PyTorch trace).
// A reader that checked each range text with may_carry_sizes as it interned it passes what it found
// in `texts_may_carry_sizes`: false skips the search through every range.
void add_emit_nvtx_operators(Trace& trace, bool texts_may_carry_sizes = true);

}  // namespace tracedoc
