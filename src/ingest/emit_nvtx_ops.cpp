#include "ingest/emit_nvtx_ops.h"

#include <optional>
#include <string>

#include "ingest/json_cursor.h"
#include "model/emit_nvtx_names.h"
#include "model/table_sort.h"

namespace tracedoc {

void add_emit_nvtx_operators(Trace& trace, bool texts_may_carry_sizes) {
  OpTable& ops = trace.pytorch.ops;
  if (ops.size() > 0 || !texts_may_carry_sizes) return;
  const RangeTable& r = trace.ranges;
  // Every NVTX range of every export passes here: one substring search each until a range with
  // shapes turns up (an export without them, emit_nvtx's ids but no sizes, is read to its end).
  bool with_shapes = false;
  for (size_t i = 0; i < r.size() && !with_shapes; ++i) {
    if (!may_carry_sizes(trace.str(r.text[i]))) continue;
    const std::optional<EmitNvtxName> e = emit_nvtx_range(trace, i);
    with_shapes = e && !e->sizes.empty();
  }
  if (!with_shapes) return;
  std::string scratch;
  for (uint32_t i : stable_time_order(r.start)) {
    const std::optional<EmitNvtxName> parsed = emit_nvtx_range(trace, i);
    if (!parsed || !is_emit_nvtx_operator(*parsed)) continue;
    // Interning may grow the pool the parsed views point into: copy them out first.
    const std::string name(parsed->name);
    const std::string dims(parsed->sizes.empty() ? std::string_view() : json::compact(parsed->sizes, scratch));
    ops.start.push_back(r.start[i]);
    ops.end.push_back(r.end[i]);
    ops.global_tid.push_back(r.global_tid[i]);
    ops.name.push_back(trace.strings.intern(name));
    ops.external_id.push_back(parsed->op_id >= 0 ? parsed->op_id : kNoValue);
    ops.sequence_number.push_back(parsed->seq >= 0 ? parsed->seq : kNoValue);
    ops.fwd_thread_id.push_back(kNoValue);
    ops.input_dims.push_back(dims.empty() ? kNoStr : trace.strings.intern(dims));
    ops.input_types.push_back(kNoStr);
    ops.concrete_inputs.push_back(kNoStr);
    ops.flops.push_back(kNoValue);
  }
}

}  // namespace tracedoc
