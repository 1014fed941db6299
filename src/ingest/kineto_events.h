// Internal to the Kineto reader: one parsed trace event (views into the read window) and the
// builder that turns events into the trace model.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <iterator>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "ingest/kineto_reader.h"
#include "model/trace.h"

namespace tracedoc::kineto {

// A JSON value seen in an event, as text. Strings keep their raw (still escaped) contents.
struct Value {
  std::string_view text;
  bool present = false;
  bool is_string = false;
  bool escaped = false;
};

// The fields of one event tracedoc uses; the rest is skipped unread.
struct RawEvent {
  Value ph, cat, name, pid, tid, ts, dur, id, scope;
  // args
  Value correlation, external_id, device, stream, context, bytes, registers, shared_memory;
  Value sequence_number, fwd_thread_id, input_dims;  // input_dims: the array's raw text
  Value input_types, concrete_inputs, flops;         // arrays' raw text; flops: with_flops=True
  Value total_allocated, total_reserved, addr, device_type, device_id;
  Value collective, dtype, in_nelems, out_nelems, group_size, group_name;
  Value graph_node_id, arg_name;      // arg_name: args.name of metadata events
  Value occupancy;                    // kernels: "est. achieved occupancy %"
  Value python_id, python_parent_id;  // python_function: "Python id", "Python parent id"
  int64_t grid[3] = {0, 0, 0}, block[3] = {0, 0, 0};
  bool has_grid = false, has_block = false;
  bool has_ev_idx = false;    // `Ev Idx` (2022-10 and later)
  uint64_t present_mask = 0;  // bit i: kRawEventValues[i] was set

  // Stores `v` in `field`, one of this event's Values, and marks it set.
  void set(Value& field, const Value& v) {
    field = v;
    present_mask |= uint64_t{1} << index_of(field);
  }
  // Back to an empty event, touching only what was set (an event sets a dozen of its 36 Values).
  void clear();
  // The index in kRawEventValues of one of this event's Values: they come first, in that order.
  size_t index_of(const Value& field) const {
    return static_cast<size_t>(reinterpret_cast<const char*>(&field) - reinterpret_cast<const char*>(this)) /
           sizeof(Value);
  }
};

// Every Value of RawEvent in declaration order, for what handles them all alike (the pipeline
// packs events by this list).
inline constexpr Value RawEvent::*kRawEventValues[] = {
    &RawEvent::ph,
    &RawEvent::cat,
    &RawEvent::name,
    &RawEvent::pid,
    &RawEvent::tid,
    &RawEvent::ts,
    &RawEvent::dur,
    &RawEvent::id,
    &RawEvent::scope,
    &RawEvent::correlation,
    &RawEvent::external_id,
    &RawEvent::device,
    &RawEvent::stream,
    &RawEvent::context,
    &RawEvent::bytes,
    &RawEvent::registers,
    &RawEvent::shared_memory,
    &RawEvent::sequence_number,
    &RawEvent::fwd_thread_id,
    &RawEvent::input_dims,
    &RawEvent::input_types,
    &RawEvent::concrete_inputs,
    &RawEvent::flops,
    &RawEvent::total_allocated,
    &RawEvent::total_reserved,
    &RawEvent::addr,
    &RawEvent::device_type,
    &RawEvent::device_id,
    &RawEvent::collective,
    &RawEvent::dtype,
    &RawEvent::in_nelems,
    &RawEvent::out_nelems,
    &RawEvent::group_size,
    &RawEvent::group_name,
    &RawEvent::graph_node_id,
    &RawEvent::arg_name,
    &RawEvent::occupancy,
    &RawEvent::python_id,
    &RawEvent::python_parent_id,
};
// The Values come first in RawEvent: a Value added without its entry above fails here.
static_assert(offsetof(RawEvent, grid) == std::size(kRawEventValues) * sizeof(Value));
static_assert(std::size(kRawEventValues) <= 64, "present_mask has a bit per Value");

inline void RawEvent::clear() {
  for (uint64_t m = present_mask; m != 0; m &= m - 1) this->*kRawEventValues[__builtin_ctzll(m)] = Value{};
  grid[0] = grid[1] = grid[2] = block[0] = block[1] = block[2] = 0;  // (a failed read_dim3 leaves some)
  has_grid = has_block = has_ev_idx = false;
  present_mask = 0;
}

// Format features seen while reading, from which the era is decided at the end.
struct EraClues {
  bool bare_array = false;
  bool capitalized_categories = false;  // Kernel / Runtime / Memcpy / Memset (2021, still in PyTorch 1.10)
  bool operator_category = false;       // Operator: CPU ops before the June 2021 refactor
  bool launch_flows = false;            // cat "async", name "launch" (2021; 1.10 wrote "async_gpu")
  bool fractional_times = false;
  bool base_time = false;
  bool ac2g_flows = false;
  bool ev_idx = false;
  int era() const;
};

// Fills trace.pytorch.steps from the ranges named ProfilerStep#N.
void find_steps(Trace& trace);

class TraceBuilder {
 public:
  explicit TraceBuilder(Trace& trace, const KinetoReadOptions& options = {}) : t_(trace), options_(options) {}

  void add_event(const RawEvent& e);
  void add_device(int64_t id, std::string_view name, int64_t sm_count, int64_t total_memory, int64_t cc_major,
                  int64_t cc_minor);
  EraClues& clues() { return clues_; }
  // Sorts tables by start time, links kernels to their launching process, derives steps and the
  // list of "tables" the reports check for.
  void finish();

 private:
  StrId name_id(const Value& v);
  int64_t cpu_global_tid(const RawEvent& e);
  int64_t map_pid(const Value& v);
  int64_t map_tid(const Value& v);
  int64_t compact_id(int64_t raw);
  bool times(const RawEvent& e, TimeNs* start, TimeNs* end);
  void add_kernel(const RawEvent& e, TimeNs start, TimeNs end);
  void add_memcpy(const RawEvent& e, TimeNs start, TimeNs end);
  void add_memset(const RawEvent& e, TimeNs start, TimeNs end);
  void add_api(const RawEvent& e, TimeNs start, TimeNs end, bool driver);
  void add_op(const RawEvent& e, TimeNs start, TimeNs end);
  void add_range(const RawEvent& e, TimeNs start, TimeNs end);
  void add_gpu_annotation(const RawEvent& e, TimeNs start, TimeNs end);
  void add_sync(const RawEvent& e, TimeNs start, TimeNs end);
  void add_memory(const RawEvent& e);
  void add_forward_backward_flow(const RawEvent& e);
  void add_python_function(const RawEvent& e);
  void add_metadata(const RawEvent& e);
  int32_t gpu_device(const RawEvent& e) const;
  int32_t gpu_stream(const RawEvent& e) const;

  Trace& t_;
  KinetoReadOptions options_;
  EraClues clues_;
  std::unordered_map<std::string, int64_t> named_pids_;  // pid strings that are not numbers
  std::unordered_map<int64_t, int64_t> compacted_;       // ids above 24 bits -> small ids
  int64_t next_named_pid_ = 0xFFFF00, next_compact_ = 0xFFFE00;
  std::unordered_map<int64_t, StrId> thread_names_, process_names_;  // by global tid / global pid
  std::vector<int64_t> collective_kernel_rows_;
  std::string scratch_;  // json::compact's output, reused
  // Input shapes and types repeat from step to step: each distinct list, as the file writes it, is
  // compacted once (written_lists_ id -> the compacted list's id in the trace).
  StringPool written_lists_;
  std::vector<StrId> compacted_lists_;
  int64_t first_cpu_pid_ = -1;
  // The threads of stored Python calls, numbered in first-seen order; PythonFunctionTable::global_tid
  // holds these numbers until finish() maps them. Mapping a pid or tid can number a new named
  // pseudo-process or compacted id, so the calls' threads are mapped after every other event:
  // storing them then changes no id of any other table.
  struct PendingThread {
    std::string pid, tid;  // the raw texts
    bool has_pid = false, has_tid = false;
  };
  std::unordered_map<std::string, uint32_t> python_thread_ids_;
  std::vector<PendingThread> python_threads_;
};

}  // namespace tracedoc::kineto
