// The NVTX range names of torch.autograd.profiler.emit_nvtx: PyTorch names each RecordFunction's
// range (PyTorch's getNvtxStr)
//
//   NAME[, seq = N][, op_id = N][, sizes = [[d, ...], ...]][, input_op_ids = [(op, output), ...]]
//
// with the autograd sequence number, the call's id, with record_shapes=True one list of dims per
// input (`[]` for a non-tensor) and the producers of its inputs. The ids differ in every call and
// every run; NAME is what the operator or scope is called (aten::mm, ProfilerStep#3).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "model/trace.h"

namespace tracedoc {

struct EmitNvtxName {
  std::string_view name;   // "aten::addmm"
  int64_t seq = -1;        // autograd sequence number, -1 when absent
  int64_t op_id = -1;      // the RecordFunction handle, -1 when absent
  std::string_view sizes;  // "[[64], [64, 256], [], []]", empty when not recorded
};

// The parts of an emit_nvtx range name; nullopt for a name without emit_nvtx's attributes.
std::optional<EmitNvtxName> parse_emit_nvtx_name(std::string_view name);

// Whether the range is one of the operators: it carries sizes (record_shapes=True gives every
// operator with inputs its sizes), or it is the autograd engine's wrapper around a backward node
// ("autograd::engine::evaluate_function: AddmmBackward0", which has no inputs). The rest are the
// record_function scopes (ProfilerStep#N, Optimizer.step#SGD.step).
bool is_emit_nvtx_operator(const EmitNvtxName& e);

// Whether a trace's operators are its emit_nvtx ranges (ingest/emit_nvtx_ops.h: an nsys export or
// capture recorded with shapes; a PyTorch profiler trace records its operators apart). Those
// ranges are then drawn and compared as operators, not a second time as ranges.
inline bool operators_are_ranges(const Trace& t) {
  return t.source.format != "kineto-json" && t.pytorch.ops.size() > 0;
}
// Whether a range name may carry emit_nvtx's sizes: one substring search, for those that look at
// every name before parsing any.
inline bool may_carry_sizes(std::string_view name) { return name.find(", sizes = [") != std::string_view::npos; }

// The name of range `row` when it is a closed NVTX push/pop range with emit_nvtx's attributes.
std::optional<EmitNvtxName> emit_nvtx_range(const Trace& t, size_t row);
// For a trace whose operators are its ranges (the caller checks operators_are_ranges once, not per
// row), whether range `row` is one of them.
bool range_is_operator(const Trace& t, size_t row);

// The name without emit_nvtx's attributes ("aten::mm, seq = 12, op_id = 7" -> "aten::mm"); any
// other name as it is.
std::string_view without_emit_nvtx_attributes(std::string_view name);

}  // namespace tracedoc
