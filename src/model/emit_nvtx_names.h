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

namespace tracedoc {

struct EmitNvtxName {
  std::string_view name;   // "aten::addmm"
  int64_t seq = -1;        // autograd sequence number, -1 when absent
  int64_t op_id = -1;      // the RecordFunction handle, -1 when absent
  std::string_view sizes;  // "[[64], [64, 256], [], []]", empty when not recorded
};

// The parts of an emit_nvtx range name; nullopt for a name without emit_nvtx's attributes.
std::optional<EmitNvtxName> parse_emit_nvtx_name(std::string_view name);

// The name without emit_nvtx's attributes ("aten::mm, seq = 12, op_id = 7" -> "aten::mm"); any
// other name as it is.
std::string_view without_emit_nvtx_attributes(std::string_view name);

}  // namespace tracedoc
