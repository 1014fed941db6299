// What a PyTorch profiler (Kineto) trace holds beyond the CUDA activity that nsys also records:
// framework operators, GPU-side annotations, caching-allocator events, collectives, steps, Python
// calls and the trace's own metadata. The CUDA activity itself (kernels, copies, runtime calls, syncs) goes into
// the ordinary Trace tables, so every nsys report also runs on PyTorch traces.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/columns.h"
#include "model/string_pool.h"

namespace tracedoc {

// Framework operators (`cpu_op` events: aten::*, autograd nodes, optimizer ops), one row each.
#define TRACEDOC_OP_COLUMNS(X)                                                                \
  X(start, TimeNs, kTime, kNoTime, "when the operator began")                                 \
  X(end, TimeNs, kTime, kNoTime, "when it returned")                                          \
  X(global_tid, int64_t, kOwner, kNoValue, "the thread")                                      \
  X(name, StrId, kString, kNoStr, "the operator (aten::mm, autograd::engine::...)")           \
  X(external_id, int64_t, kValue, kNoValue, "args \"External id\"")                           \
  X(sequence_number, int64_t, kValue, kNoValue, "autograd sequence number")                   \
  X(fwd_thread_id, int64_t, kValue, kNoValue, "backward ops: the forward op's thread")        \
  X(input_dims, StrId, kString, kNoStr, "args \"Input Dims\" as compact JSON text")           \
  X(input_types, StrId, kString, kNoStr, "args \"Input type\" as compact JSON text")          \
  X(concrete_inputs, StrId, kString, kNoStr, "args \"Concrete Inputs\" as compact JSON text") \
  X(flops, int64_t, kValue, kNoValue, "args \"flops\" (with_flops=True), when the trace has it")
struct OpTable {
  TRACEDOC_TABLE(OpTable, TRACEDOC_OP_COLUMNS)
};

// `gpu_user_annotation` events: a record_function range projected by Kineto onto a GPU stream.
#define TRACEDOC_GPU_ANNOTATION_COLUMNS(X)                            \
  X(start, TimeNs, kTime, kNoTime, "when the range began on the GPU") \
  X(end, TimeNs, kTime, kNoTime, "when it ended")                     \
  X(device, int32_t, kValue, kNoInt32, "the GPU")                     \
  X(stream, int32_t, kValue, kNoInt32, "the stream")                  \
  X(name, StrId, kString, kNoStr, "the record_function name")         \
  X(external_id, int64_t, kValue, kNoValue, "links it to its CPU range")
struct GpuAnnotationTable {
  TRACEDOC_TABLE(GpuAnnotationTable, TRACEDOC_GPU_ANNOTATION_COLUMNS)
};

// PyTorch caching-allocator events (`[memory]` instants): one row per allocation (bytes > 0) or free
// (bytes < 0), with the allocator's totals after the event.
#define TRACEDOC_ALLOCATOR_COLUMNS(X)                                                 \
  X(time, TimeNs, kTime, kNoTime, "when the block was allocated or freed")            \
  X(global_tid, int64_t, kOwner, kNoValue, "the thread")                              \
  X(address, int64_t, kValue, kNoValue, "the block's address")                        \
  X(bytes, int64_t, kValue, kNoValue, "its size: positive allocated, negative freed") \
  X(total_allocated, int64_t, kValue, kNoValue, "bytes allocated after the event")    \
  X(total_reserved, int64_t, kValue, kNoValue, "bytes reserved after the event")      \
  X(device_type, int32_t, kValue, kNoInt32, "0 CPU, 1 CUDA")                          \
  X(device_id, int32_t, kValue, kNoInt32, "the device")
struct AllocatorEventTable {
  TRACEDOC_TABLE(AllocatorEventTable, TRACEDOC_ALLOCATOR_COLUMNS)
};

// NCCL/RCCL collectives as Kineto describes them on the GPU kernel (args copied from the launching
// record_param_comms op): one row per communication kernel that carries them.
#define TRACEDOC_COLLECTIVE_COLUMNS(X)                                                            \
  X(kernel, uint32_t, kKernelRow, UINT32_MAX, "the communication kernel (row in Trace::kernels)") \
  X(collective, StrId, kString, kNoStr, "the collective (allreduce, all_gather, ...)")            \
  X(dtype, StrId, kString, kNoStr, "element type")                                                \
  X(group_name, StrId, kString, kNoStr, "process group")                                          \
  X(in_nelems, int64_t, kValue, kNoValue, "input elements")                                       \
  X(out_nelems, int64_t, kValue, kNoValue, "output elements")                                     \
  X(group_size, int64_t, kValue, kNoValue, "ranks in the group")
struct CollectiveTable {
  TRACEDOC_TABLE(CollectiveTable, TRACEDOC_COLLECTIVE_COLUMNS)
};

// Forward -> backward flow events (`fwdbwd`, formerly `forward_backward`/`fwd_bwd`): Kineto draws an
// arrow from a forward operator (phase 's') to the autograd operator that computes its gradient
// (phase 'f'); both ends share `id` and sit at the start time and thread of their operator.
#define TRACEDOC_FLOW_COLUMNS(X)                                               \
  X(id, int64_t, kValue, kNoValue, "shared by the two ends of an arrow")       \
  X(time, TimeNs, kTime, kNoTime, "the start of the end's operator")           \
  X(global_tid, int64_t, kOwner, kNoValue, "the thread of the end's operator") \
  X(phase, char, kValue, '\0', "'s' forward end, 'f' backward end")
struct FlowTable {
  TRACEDOC_TABLE(FlowTable, TRACEDOC_FLOW_COLUMNS)
};

// `python_function` events (profiler `with_stack=True`): one row per Python call. Stored only when a
// report asks for them (kLoadPythonFunctions): a trace recorded with stacks can hold more of them
// than of every other event together. Kineto numbers the calls of a trace file ("Python id") and
// names each one's caller ("Python parent id", null for the outermost); the caller may run on
// another thread (activation-checkpoint hooks on the autograd thread name the main thread's
// run_backward). In a merged rank directory both ids carry the rank tag of global_tid's upper bits,
// so they stay unique across ranks.
#define TRACEDOC_PYTHON_FUNCTION_COLUMNS(X)                                                                      \
  X(start, TimeNs, kTime, kNoTime, "when the call began")                                                        \
  X(end, TimeNs, kTime, kNoTime, "when it returned")                                                             \
  X(global_tid, int64_t, kOwner, kNoValue, "the thread")                                                         \
  X(name, StrId, kString, kNoStr, "\"torch/nn/modules/module.py(1501): _call_impl\", \"<built-in method ...>\"") \
  X(python_id, int64_t, kFileId, kNoValue, "args \"Python id\"")                                                 \
  X(parent_id, int64_t, kFileId, kNoValue, "args \"Python parent id\" (absent: outermost)")
struct PythonFunctionTable {
  TRACEDOC_TABLE(PythonFunctionTable, TRACEDOC_PYTHON_FUNCTION_COLUMNS)
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
  std::vector<uint32_t> steps;           // rows of Trace::ranges named ProfilerStep#N, in time order
};

}  // namespace tracedoc
