// What a PyTorch profiler (Kineto) trace holds beyond the CUDA activity that nsys also records:
// framework operators, GPU-side annotations, caching-allocator events, collectives, steps, Python
// calls and the trace's own metadata. The CUDA activity itself (kernels, copies, runtime calls, syncs) goes into
// the ordinary Trace tables, so every nsys report also runs on PyTorch traces.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/string_pool.h"

namespace tracedoc {

using TimeNs = int64_t;

// Framework operators (`cpu_op` events: aten::*, autograd nodes, optimizer ops), one row each.
struct OpTable {
  std::vector<TimeNs> start, end;
  std::vector<int64_t> global_tid;
  std::vector<StrId> name;
  std::vector<int64_t> external_id;      // args "External id" (kNoValue when absent)
  std::vector<int64_t> sequence_number;  // autograd sequence number (kNoValue when absent)
  std::vector<int64_t> fwd_thread_id;    // backward ops: the forward op's thread (kNoValue when absent)
  std::vector<StrId> input_dims;         // args "Input Dims" as compact JSON text (kNoStr when absent)
  size_t size() const { return start.size(); }
};

// `gpu_user_annotation` events: a record_function range projected by Kineto onto a GPU stream.
struct GpuAnnotationTable {
  std::vector<TimeNs> start, end;
  std::vector<int32_t> device, stream;
  std::vector<StrId> name;
  std::vector<int64_t> external_id;
  size_t size() const { return start.size(); }
};

// PyTorch caching-allocator events (`[memory]` instants): one row per allocation (bytes > 0) or free
// (bytes < 0), with the allocator's totals after the event.
struct AllocatorEventTable {
  std::vector<TimeNs> time;
  std::vector<int64_t> global_tid;
  std::vector<int64_t> address, bytes, total_allocated, total_reserved;  // kNoValue when absent
  std::vector<int32_t> device_type, device_id;                           // device_type: 0 CPU, 1 CUDA
  size_t size() const { return time.size(); }
};

// NCCL/RCCL collectives as Kineto describes them on the GPU kernel (args copied from the launching
// record_param_comms op): one row per communication kernel that carries them.
struct CollectiveTable {
  std::vector<uint32_t> kernel;  // row in Trace::kernels
  std::vector<StrId> collective, dtype, group_name;
  std::vector<int64_t> in_nelems, out_nelems, group_size;  // kNoValue when absent
  size_t size() const { return kernel.size(); }
};

// Forward -> backward flow events (`fwdbwd`, formerly `forward_backward`/`fwd_bwd`): Kineto draws an
// arrow from a forward operator (phase 's') to the autograd operator that computes its gradient
// (phase 'f'); both ends share `id` and sit at the start time and thread of their operator.
struct FlowTable {
  std::vector<int64_t> id;
  std::vector<TimeNs> time;
  std::vector<int64_t> global_tid;
  std::vector<char> phase;  // 's' or 'f'
  size_t size() const { return id.size(); }
};

// `python_function` events (profiler `with_stack=True`): one row per Python call. Stored only when a
// report asks for them (kLoadPythonFunctions): a trace recorded with stacks can hold more of them
// than of every other event together. Kineto numbers the calls of a trace file ("Python id") and
// names each one's caller ("Python parent id", null for the outermost); the caller may run on
// another thread (activation-checkpoint hooks on the autograd thread name the main thread's
// run_backward). In a merged rank directory both ids carry the rank tag of global_tid's upper bits,
// so they stay unique across ranks.
struct PythonFunctionTable {
  std::vector<TimeNs> start, end;
  std::vector<int64_t> global_tid;
  std::vector<StrId> name;         // "torch/nn/modules/module.py(1501): _call_impl", "<built-in method ...>"
  std::vector<int64_t> python_id;  // args "Python id" (kNoValue when absent)
  std::vector<int64_t> parent_id;  // args "Python parent id" (kNoValue when null or absent)
  size_t size() const { return start.size(); }
};

struct PyTorchInfo {
  // Kineto format era (1 = 2021 capitalized categories ... 5 = relative "us.nnn" timestamps with
  // baseTimeNanoseconds; 0 = PyTorch's legacy exporter, a bare event array).
  int era = 0;
  int64_t rank = -1, world_size = -1;  // distributedInfo, else the file name's rank-N, else -1
  std::string backend;                 // distributedInfo.backend
  int64_t base_time_ns = 0;            // baseTimeNanoseconds (0: timestamps are absolute epoch µs)
  int64_t event_count = 0;             // events in traceEvents, all phases
  int64_t python_function_count = 0;   // python_function events (always counted; stored on request)
  int64_t flow_count = 0;              // s/f flow events (links are rebuilt from correlation ids)
  OpTable ops;
  GpuAnnotationTable gpu_annotations;
  AllocatorEventTable allocator;
  CollectiveTable collectives;
  FlowTable forward_backward;
  PythonFunctionTable python_functions;  // empty unless read with kLoadPythonFunctions
  std::vector<uint32_t> steps;  // rows of Trace::ranges named ProfilerStep#N, in time order
};

}  // namespace tracedoc
