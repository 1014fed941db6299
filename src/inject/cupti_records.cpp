#include "inject/cupti_records.h"

#include <climits>
#include <cstdint>
#include <string>

namespace tracedoc::inject {

using capture::BodyWriter;
using capture::RecordType;

int32_t ActivityConverter::device_of_context(uint32_t context, int32_t fallback) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = context_device_.find(context);
  return it != context_device_.end() ? it->second : fallback;
}

void ActivityConverter::learn_context(uint32_t context, uint32_t device) {
  // Every kernel and copy tells its context's device again: only a new pair takes the lock.
  const uint64_t pair = (static_cast<uint64_t>(context) << 32) | device;
  if (last_learned_.load(std::memory_order_relaxed) == pair) return;
  last_learned_.store(pair, std::memory_order_relaxed);
  std::lock_guard<std::mutex> lock(mutex_);
  context_device_[context] = static_cast<int32_t>(device);
}

uint32_t ActivityConverter::api_name_id(bool driver, uint32_t cbid) {
  const uint64_t key = (static_cast<uint64_t>(driver) << 32) | cbid;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (auto it = api_names_.find(key); it != api_names_.end()) return it->second;
  }
  const char* name = api_name_ != nullptr ? api_name_(driver, cbid) : nullptr;
  const std::string text =
      name != nullptr ? std::string(name) : (driver ? "cuDriverCall_" : "cudaRuntimeCall_") + std::to_string(cbid);
  const uint32_t id = sink_.intern(text);
  std::lock_guard<std::mutex> lock(mutex_);
  api_names_[key] = id;
  return id;
}

namespace {

// The fields CUpti_ActivityMemcpy6 and CUpti_ActivityMemcpyPtoP4 share.
template <typename Copy>
capture::MemcpyBody copy_body(const Copy& m) {
  capture::MemcpyBody b;
  b.start = static_cast<int64_t>(m.start), b.end = static_cast<int64_t>(m.end), b.correlation = m.correlationId;
  b.bytes = static_cast<int64_t>(m.bytes), b.device = static_cast<int32_t>(m.deviceId),
  b.context = static_cast<int32_t>(m.contextId);
  b.stream = static_cast<int32_t>(m.streamId), b.copy_kind = m.copyKind;
  b.src_kind = nsys_mem_kind(m.srcKind), b.dst_kind = nsys_mem_kind(m.dstKind);
  return b;
}

}  // namespace

bool ActivityConverter::convert(const CUpti_Activity* record) {
  // One body buffer per converting thread, reused: no allocation per record.
  __attribute__((tls_model("initial-exec"))) thread_local std::string body;
  body.clear();
  BodyWriter w(body);
  switch (record->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
      const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
      if (!sink_.keep(static_cast<int64_t>(k->start))) return true;
      learn_context(k->contextId, k->deviceId);
      capture::KernelBody b;
      b.start = static_cast<int64_t>(k->start), b.end = static_cast<int64_t>(k->end);
      b.correlation = k->correlationId, b.graph_node = static_cast<int64_t>(k->graphNodeId);
      b.device = static_cast<int32_t>(k->deviceId), b.context = static_cast<int32_t>(k->contextId),
      b.stream = static_cast<int32_t>(k->streamId);
      b.grid_x = k->gridX, b.grid_y = k->gridY, b.grid_z = k->gridZ;
      b.block_x = k->blockX, b.block_y = k->blockY, b.block_z = k->blockZ;
      b.registers = k->registersPerThread, b.static_smem = k->staticSharedMemory,
      b.dynamic_smem = k->dynamicSharedMemory;
      b.name = sink_.intern(k->name != nullptr ? k->name : "");
      capture::put_body(w, b);
      sink_.emit(RecordType::kKernel, body);
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
      const auto* m = reinterpret_cast<const CUpti_ActivityMemcpy6*>(record);
      if (!sink_.keep(static_cast<int64_t>(m->start))) return true;
      learn_context(m->contextId, m->deviceId);
      capture::put_body(w, copy_body(*m));
      sink_.emit(RecordType::kMemcpy, body);
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY2: {  // peer to peer
      const auto* m = reinterpret_cast<const CUpti_ActivityMemcpyPtoP4*>(record);
      if (!sink_.keep(static_cast<int64_t>(m->start))) return true;
      capture::MemcpyBody b = copy_body(*m);
      b.src_device = static_cast<int32_t>(m->srcDeviceId), b.dst_device = static_cast<int32_t>(m->dstDeviceId);
      capture::put_body(w, b);
      sink_.emit(RecordType::kMemcpy, body);
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
      const auto* m = reinterpret_cast<const CUpti_ActivityMemset4*>(record);
      if (!sink_.keep(static_cast<int64_t>(m->start))) return true;
      capture::MemsetBody b;
      b.start = static_cast<int64_t>(m->start), b.end = static_cast<int64_t>(m->end), b.correlation = m->correlationId;
      b.bytes = static_cast<int64_t>(m->bytes), b.value = m->value, b.device = static_cast<int32_t>(m->deviceId);
      b.context = static_cast<int32_t>(m->contextId), b.stream = static_cast<int32_t>(m->streamId);
      b.mem_kind = nsys_mem_kind(m->memoryKind);
      capture::put_body(w, b);
      sink_.emit(RecordType::kMemset, body);
      break;
    }
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER: {
      const auto* a = reinterpret_cast<const CUpti_ActivityAPI*>(record);
      if (!sink_.keep(static_cast<int64_t>(a->start))) return true;
      const bool driver = record->kind == CUPTI_ACTIVITY_KIND_DRIVER;
      capture::ApiBody b;
      b.tid = a->threadId, b.start = static_cast<int64_t>(a->start), b.end = static_cast<int64_t>(a->end);
      b.correlation = a->correlationId, b.return_value = a->returnValue, b.api_class = driver ? 1 : 0;
      b.name = api_name_id(driver, a->cbid);
      capture::put_body(w, b);
      sink_.emit(RecordType::kApi, body);
      break;
    }
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: {
      const auto* s = reinterpret_cast<const CUpti_ActivitySynchronization2*>(record);
      if (!sink_.keep(static_cast<int64_t>(s->start))) return true;
      capture::SyncBody b;
      b.start = static_cast<int64_t>(s->start), b.end = static_cast<int64_t>(s->end), b.correlation = s->correlationId;
      b.event = s->cudaEventId == CUPTI_SYNCHRONIZATION_INVALID_VALUE ? -1 : static_cast<int64_t>(s->cudaEventId);
      b.context = static_cast<int32_t>(s->contextId), b.device = device_of_context(s->contextId, 0);
      b.stream = s->streamId == CUPTI_SYNCHRONIZATION_INVALID_VALUE ? -1 : static_cast<int32_t>(s->streamId);
      b.sync_type = static_cast<int32_t>(s->type);
      capture::put_body(w, b);
      sink_.emit(RecordType::kSync, body);
      break;
    }
    case CUPTI_ACTIVITY_KIND_CUDA_EVENT: {
      // No host time of its own: the reader keeps it when its cudaEventRecord call was captured.
      const auto* e = reinterpret_cast<const CUpti_ActivityCudaEvent2*>(record);
      capture::CudaEventBody b;
      b.correlation = e->correlationId, b.event = e->eventId, b.sync_id = static_cast<int64_t>(e->cudaEventSyncId);
      b.device_time = static_cast<int64_t>(e->deviceTimestamp), b.device = static_cast<int32_t>(e->deviceId);
      b.context = static_cast<int32_t>(e->contextId), b.stream = static_cast<int32_t>(e->streamId);
      capture::put_body(w, b);
      sink_.emit(RecordType::kCudaEvent, body);
      break;
    }
    case CUPTI_ACTIVITY_KIND_GRAPH_TRACE: {
      const auto* g = reinterpret_cast<const CUpti_ActivityGraphTrace2*>(record);
      if (!sink_.keep(static_cast<int64_t>(g->start))) return true;
      capture::GraphTraceBody b;
      b.start = static_cast<int64_t>(g->start), b.end = static_cast<int64_t>(g->end), b.correlation = g->correlationId;
      b.graph_id = g->graphId, b.stream = static_cast<int32_t>(g->streamId);
      // INT_MAX device and context: the graph starts on the host; its last node's device is the GPU.
      const bool host_start = g->deviceId == static_cast<uint32_t>(INT32_MAX);
      b.device = static_cast<int32_t>(host_start ? g->endDeviceId : g->deviceId);
      b.context = static_cast<int32_t>(host_start ? g->endContextId : g->contextId);
      capture::put_body(w, b);
      sink_.emit(RecordType::kGraphTrace, body);
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMORY2: {
      const auto* m = reinterpret_cast<const CUpti_ActivityMemory4*>(record);
      capture::MemoryBody b;
      b.time = static_cast<int64_t>(m->timestamp), b.address = static_cast<int64_t>(m->address),
      b.bytes = static_cast<int64_t>(m->bytes);
      b.correlation = m->correlationId, b.device = static_cast<int32_t>(m->deviceId),
      b.mem_kind = nsys_mem_kind(m->memoryKind);
      b.operation = m->memoryOperationType == CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE ? 1 : 0;
      capture::put_body(w, b);
      sink_.emit(RecordType::kMemory, body);
      break;
    }
    case CUPTI_ACTIVITY_KIND_OVERHEAD: {
      const auto* o = reinterpret_cast<const CUpti_ActivityOverhead3*>(record);
      const int64_t tid =
          o->objectKind == CUPTI_ACTIVITY_OBJECT_THREAD ? static_cast<int64_t>(o->objectId.pt.threadId) : 0;
      w.put(tid)
          .put(static_cast<int64_t>(o->start))
          .put(static_cast<int64_t>(o->end))
          .put(static_cast<uint32_t>(o->overheadKind));
      sink_.emit(RecordType::kOverhead, body);
      break;
    }
    case CUPTI_ACTIVITY_KIND_DEVICE: {
      const auto* d = reinterpret_cast<const CUpti_ActivityDevice5*>(record);
      capture::DeviceBody b;
      b.id = static_cast<int32_t>(d->id), b.sm_count = static_cast<int32_t>(d->numMultiprocessors);
      b.compute_major = static_cast<int32_t>(d->computeCapabilityMajor),
      b.compute_minor = static_cast<int32_t>(d->computeCapabilityMinor);
      b.total_memory = static_cast<int64_t>(d->globalMemorySize),
      b.name = sink_.intern(d->name != nullptr ? d->name : "");
      capture::put_body(w, b);
      sink_.emit(RecordType::kDevice, body);
      break;
    }
    case CUPTI_ACTIVITY_KIND_CONTEXT: {
      const auto* c = reinterpret_cast<const CUpti_ActivityContext3*>(record);
      learn_context(c->contextId, c->deviceId);
      break;
    }
    default: ++skipped_; return false;
  }
  ++converted_;
  return true;
}

}  // namespace tracedoc::inject
