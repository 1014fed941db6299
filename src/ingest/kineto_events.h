// Internal to the Kineto reader: one parsed trace event (views into the read window) and the
// builder that turns events into the trace model.
#pragma once

#include <cstdint>
#include <functional>
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
  Value total_allocated, total_reserved, addr, device_type, device_id;
  Value collective, dtype, in_nelems, out_nelems, group_size, group_name;
  Value graph_node_id, arg_name;      // arg_name: args.name of metadata events
  Value occupancy;                    // kernels: "est. achieved occupancy %"
  Value python_id, python_parent_id;  // python_function: "Python id", "Python parent id"
  int64_t grid[3] = {0, 0, 0}, block[3] = {0, 0, 0};
  bool has_grid = false, has_block = false;
  bool has_ev_idx = false;  // `Ev Idx` (2022-10 and later)
};

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
