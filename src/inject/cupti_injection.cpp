// CUDA activity capture: the CUDA driver loads $CUDA_INJECTION64_PATH when the program initializes
// CUDA and calls InitializeInjection. Here CUPTI (loaded with dlopen: $TRACEDOC_CUPTI_LIB, else
// libcupti.so.<major> / libcupti.so, so the library loads on machines without it and NVTX capture
// still works) is asked for activity records: concurrent kernels, memcpy (and peer-to-peer), memset,
// runtime and driver API calls, synchronization, CUDA event records, devices and contexts, profiler
// overhead, GPU memory allocations when $TRACEDOC_CAPTURE_CUDA_MEMORY=1, and whole graph launches
// (instead of their nodes) when $TRACEDOC_CAPTURE_GRAPH_TRACE=1. Each completed activity buffer is
// converted (cupti_records.h) and written as frames at once, so a crash loses at most the buffers
// CUPTI still holds; at exit and on SIGTERM the writer's final-flush hook makes CUPTI hand them over.
// CUPTI's timestamps are put on CLOCK_REALTIME (the clock of the NVTX records) through
// cuptiActivityRegisterTimestampCallback.
//
// The records' layouts are those of the CUPTI headers this is built with; a libcupti of another
// major version is refused with a message (its records could be laid out differently).
#include <cupti.h>
#include <dlfcn.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "inject/capture_hooks.h"
#include "inject/capture_writer.h"
#include "inject/cupti_records.h"

namespace tracedoc::inject {

namespace {

constexpr size_t kBufferBytes = 8u << 20;

struct Cupti {
  decltype(&cuptiGetVersion) get_version = nullptr;
  decltype(&cuptiActivityRegisterCallbacks) register_callbacks = nullptr;
  decltype(&cuptiActivityEnable) enable = nullptr;
  decltype(&cuptiActivityFlushAll) flush_all = nullptr;
  decltype(&cuptiActivityGetNextRecord) next_record = nullptr;
  decltype(&cuptiActivityGetNumDroppedRecords) dropped = nullptr;
  decltype(&cuptiGetCallbackName) callback_name = nullptr;
  decltype(&cuptiActivityRegisterTimestampCallback) timestamp_callback = nullptr;
  decltype(&cuptiSubscribe) subscribe = nullptr;
  decltype(&cuptiEnableCallback) enable_callback = nullptr;
};
Cupti g_cupti;

class WriterSink final : public RecordSink {
 public:
  void emit(capture::RecordType type, std::string_view body) override { CaptureWriter::get().record(type, body); }
  uint32_t intern(std::string_view text) override { return CaptureWriter::get().string_id(text); }
  bool keep(int64_t t) override { return CaptureWriter::get().recording(t); }
};

const char* api_name(bool driver, uint32_t cbid) {
  const char* name = nullptr;
  if (g_cupti.callback_name == nullptr) return nullptr;
  const CUpti_CallbackDomain domain = driver ? CUPTI_CB_DOMAIN_DRIVER_API : CUPTI_CB_DOMAIN_RUNTIME_API;
  return g_cupti.callback_name(domain, cbid, &name) == CUPTI_SUCCESS ? name : nullptr;
}

WriterSink g_sink;
ActivityConverter* g_converter = nullptr;

uint64_t CUPTIAPI realtime_ns() { return static_cast<uint64_t>(now_ns()); }

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, kBufferBytes));
  *size = *buffer != nullptr ? kBufferBytes : 0;
  *max_records = 0;
}

void CUPTIAPI buffer_completed(CUcontext context, uint32_t stream, uint8_t* buffer, size_t size, size_t valid) {
  RecorderScope busy;
  CUpti_Activity* record = nullptr;
  while (g_converter != nullptr && g_cupti.next_record(buffer, valid, &record) == CUPTI_SUCCESS)
    g_converter->convert(record);
  size_t dropped = 0;
  if (g_cupti.dropped != nullptr && g_cupti.dropped(context, stream, &dropped) == CUPTI_SUCCESS && dropped > 0) {
    std::string body;
    capture::BodyWriter(body).put(static_cast<uint64_t>(dropped));
    CaptureWriter::get().record(capture::RecordType::kDropped, body);
  }
  std::free(buffer);
  CaptureWriter::get().flush();  // one CUPTI buffer, one frame: on disk before the next fills
}

void flush_cupti() {
  if (g_cupti.flush_all != nullptr) g_cupti.flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
}

// --capture-range=cudaProfilerApi: cudaProfilerStart / cudaProfilerStop open and close the range.
void CUPTIAPI on_runtime_api(void*, CUpti_CallbackDomain, CUpti_CallbackId cbid, const void* data) {
  const auto* info = static_cast<const CUpti_CallbackData*>(data);
  if (info->callbackSite != CUPTI_API_ENTER) return;
  if (cbid == CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStart_v4000) CaptureWriter::get().profiler_api(true, now_ns());
  if (cbid == CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStop_v4000) CaptureWriter::get().profiler_api(false, now_ns());
}

void* open_cupti() {
  if (const char* path = std::getenv("TRACEDOC_CUPTI_LIB"); path != nullptr && *path != 0) {
    if (void* h = dlopen(path, RTLD_NOW | RTLD_LOCAL)) return h;
  }
  const std::string versioned = "libcupti.so." + std::to_string(CUPTI_API_VERSION / 10000);
  for (const char* name : {versioned.c_str(), "libcupti.so"}) {
    if (void* h = dlopen(name, RTLD_NOW | RTLD_LOCAL)) return h;
  }
  return nullptr;
}

template <typename Fn>
bool bind(void* lib, Fn& fn, const char* name) {
  fn = reinterpret_cast<Fn>(dlsym(lib, name));
  return fn != nullptr;
}

void say(const std::string& text) { std::fprintf(stderr, "tracedoc capture: %s\n", text.c_str()); }

}  // namespace

}  // namespace tracedoc::inject

extern "C" __attribute__((visibility("default"))) int InitializeInjection(void) {
  using namespace tracedoc::inject;
  static std::atomic<bool> done{false};
  if (done.exchange(true)) return 1;
  CaptureWriter& writer = CaptureWriter::get();
  if (!writer.enabled()) return 1;
  void* lib = open_cupti();
  if (lib == nullptr) {
    say(std::string("CUDA activity is not recorded: libcupti could not be loaded (") + dlerror() +
        "); set TRACEDOC_CUPTI_LIB");
    return 1;
  }
  Cupti& c = g_cupti;
  const bool bound = bind(lib, c.get_version, "cuptiGetVersion") &&
                     bind(lib, c.register_callbacks, "cuptiActivityRegisterCallbacks") &&
                     bind(lib, c.enable, "cuptiActivityEnable") && bind(lib, c.flush_all, "cuptiActivityFlushAll") &&
                     bind(lib, c.next_record, "cuptiActivityGetNextRecord");
  if (!bound) {
    say("CUDA activity is not recorded: the CUPTI library lacks the activity API");
    return 1;
  }
  bind(lib, c.dropped, "cuptiActivityGetNumDroppedRecords");
  bind(lib, c.callback_name, "cuptiGetCallbackName");
  bind(lib, c.timestamp_callback, "cuptiActivityRegisterTimestampCallback");
  bind(lib, c.subscribe, "cuptiSubscribe");
  bind(lib, c.enable_callback, "cuptiEnableCallback");
  uint32_t version = 0;
  if (c.get_version(&version) != CUPTI_SUCCESS || version / 10000 != CUPTI_API_VERSION / 10000) {
    say("CUDA activity is not recorded: libcupti API version " + std::to_string(version) + ", built for " +
        std::to_string(CUPTI_API_VERSION) + " (use the CUPTI of the same CUDA major version: TRACEDOC_CUPTI_LIB)");
    return 1;
  }
  static ActivityConverter converter(g_sink, api_name);
  g_converter = &converter;
  if (c.timestamp_callback != nullptr) c.timestamp_callback(realtime_ns);
  if (c.register_callbacks(buffer_requested, buffer_completed) != CUPTI_SUCCESS) {
    say("CUDA activity is not recorded: CUPTI refused the activity buffers");
    return 1;
  }
  auto enable = [&](CUpti_ActivityKind kind, const char* what) {
    if (const CUptiResult rc = c.enable(kind); rc != CUPTI_SUCCESS) {
      say(std::string(what) + " not recorded: CUPTI refused activity kind " + std::to_string(static_cast<int>(kind)) +
          " (error " + std::to_string(static_cast<int>(rc)) + ")");
    }
  };
  // Graph-level tracing first: it replaces the per-node records of graph launches.
  if (env_int("TRACEDOC_CAPTURE_GRAPH_TRACE", 0) == 1)
    enable(CUPTI_ACTIVITY_KIND_GRAPH_TRACE, "CUDA graph launches are");
  enable(CUPTI_ACTIVITY_KIND_DEVICE, "GPU devices are");
  enable(CUPTI_ACTIVITY_KIND_CONTEXT, "CUDA contexts are");
  enable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, "kernels are");
  enable(CUPTI_ACTIVITY_KIND_MEMCPY, "memory copies are");
  enable(CUPTI_ACTIVITY_KIND_MEMCPY2, "peer-to-peer copies are");
  enable(CUPTI_ACTIVITY_KIND_MEMSET, "memsets are");
  enable(CUPTI_ACTIVITY_KIND_RUNTIME, "CUDA runtime calls are");
  enable(CUPTI_ACTIVITY_KIND_DRIVER, "CUDA driver calls are");
  enable(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, "synchronizations are");
  enable(CUPTI_ACTIVITY_KIND_CUDA_EVENT, "CUDA event records are");
  enable(CUPTI_ACTIVITY_KIND_OVERHEAD, "profiler overhead is");
  if (env_int("TRACEDOC_CAPTURE_CUDA_MEMORY", 0) == 1)
    enable(CUPTI_ACTIVITY_KIND_MEMORY2, "GPU memory allocations are");
  if (writer.uses_profiler_api() && c.subscribe != nullptr && c.enable_callback != nullptr) {
    CUpti_SubscriberHandle subscriber = nullptr;
    if (c.subscribe(&subscriber, on_runtime_api, nullptr) == CUPTI_SUCCESS) {
      c.enable_callback(1, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStart_v4000);
      c.enable_callback(1, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStop_v4000);
    }
  }
  add_final_flush_hook(flush_cupti);
  return 1;
}
