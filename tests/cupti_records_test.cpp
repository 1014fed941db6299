// CUPTI activity records, laid out by the real CUPTI headers of the CUDA toolkit (the structs CUPTI
// fills on a GPU: CUpti_ActivityKernel10, CUpti_ActivityMemcpy6, ...), converted by the injection
// library's converter, written as a capture file and read back into the model: what a GPU run
// would give, checked without a GPU. Built when the toolkit's CUPTI headers are present.
#include <gtest/gtest.h>

#ifdef TRACEDOC_WITH_CUPTI

#include <climits>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <vector>

#include "ingest/capture_format.h"
#include "ingest/capture_reader.h"
#include "analysis/summary.h"
#include "ingest/nsys_sqlite_reader.h"
#include "inject/cupti_records.h"
#include "report/nsys_sqlite_writer.h"
#include "view/timeline.h"
#include "test_support.h"

namespace tracedoc::testing {
namespace {

using capture::RecordType;
namespace fs = std::filesystem;

// Collects the converted records and the strings, as the process's writer would.
class FileSink final : public inject::RecordSink {
 public:
  void emit(RecordType type, std::string_view body) override { capture::append_record(payload, type, body); }
  uint32_t intern(std::string_view text) override {
    auto [it, added] = ids_.try_emplace(std::string(text), static_cast<uint32_t>(ids_.size() + 1));
    if (added) {
      std::string body;
      capture::BodyWriter(body).put(it->second).bytes(text);
      capture::append_record(payload, RecordType::kString, body);
    }
    return it->second;
  }
  std::string payload;

 private:
  std::map<std::string, uint32_t> ids_;
};

// The names CUPTI gives these callback ids (cuptiGetCallbackName), from cupti_runtime_cbid.h.
const char* api_names(bool driver, uint32_t cbid) {
  if (!driver && cbid == CUPTI_RUNTIME_TRACE_CBID_cudaEventRecord_v3020) return "cudaEventRecord_v3020";
  if (!driver && cbid == CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000) return "cudaGraphLaunch_v10000";
  if (!driver && cbid == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000) return "cudaLaunchKernel_v7000";
  if (!driver && cbid == CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020) return "cudaMemcpyAsync_v3020";
  return nullptr;
}

constexpr uint64_t kT0 = 1'764'590'400'000'000'000ull;  // 2025-12-01 12:00:00 UTC, CLOCK_REALTIME ns

// A runtime API record of process and thread 4242, start and end relative to kT0.
CUpti_ActivityAPI runtime_call(CUpti_runtime_api_trace_cbid cbid, uint64_t start, uint64_t end, uint32_t correlation) {
  CUpti_ActivityAPI a{};
  a.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
  a.cbid = cbid;
  a.start = kT0 + start, a.end = kT0 + end, a.processId = 4242, a.threadId = 4242, a.correlationId = correlation;
  return a;
}

// The file the injection library would have written for process 4242 ("python"): the process
// record, then one frame of the converted records; read back as every command reads it.
Result<Trace> read_converted(const FileSink& sink, const ScratchDir& dir) {
  std::string process;
  capture::BodyWriter(process)
      .put<int64_t>(4242)
      .put<int64_t>(1)
      .put<int64_t>(static_cast<int64_t>(kT0))
      .bytes("python");
  std::string first;
  capture::append_record(first, RecordType::kProcess, process);
  const fs::path file = dir.path() / "pid4242.tdcap";
  {
    std::ofstream out(file, std::ios::binary);
    out.write(capture::kFileMagic, sizeof(capture::kFileMagic));
    out << capture::frame_of(first) << capture::frame_of(sink.payload);
  }
  return read_capture(file.string());
}

TRACEDOC_TEST_LABELS(CuptiRecords, capture sanitize);

TEST(CuptiRecords, RealLayoutsBecomeTheModel) {
  FileSink sink;
  inject::ActivityConverter convert(sink, api_names);

  CUpti_ActivityDevice5 device{};
  device.kind = CUPTI_ACTIVITY_KIND_DEVICE;
  device.id = 0, device.numMultiprocessors = 132, device.computeCapabilityMajor = 9, device.computeCapabilityMinor = 0;
  device.globalMemorySize = 150'754'820'096ull, device.name = "NVIDIA H200";
  EXPECT_TRUE(convert.convert(reinterpret_cast<CUpti_Activity*>(&device)));

  CUpti_ActivityKernel10 kernel{};
  kernel.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  kernel.start = kT0 + 2'000, kernel.end = kT0 + 9'500, kernel.deviceId = 0, kernel.contextId = 1, kernel.streamId = 7;
  kernel.gridX = 128, kernel.gridY = 1, kernel.gridZ = 1, kernel.blockX = 256, kernel.blockY = 1, kernel.blockZ = 1;
  kernel.registersPerThread = 16, kernel.staticSharedMemory = 0, kernel.dynamicSharedMemory = 1024;
  kernel.correlationId = 42, kernel.name = "_Z9vectorAddPKfS0_Pfi", kernel.graphNodeId = 0;
  EXPECT_TRUE(convert.convert(reinterpret_cast<CUpti_Activity*>(&kernel)));

  CUpti_ActivityAPI launch = runtime_call(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 500, 1'700, 42);
  EXPECT_TRUE(convert.convert(reinterpret_cast<CUpti_Activity*>(&launch)));
  CUpti_ActivityAPI copy_call = runtime_call(CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020, 10'000, 11'000, 43);
  EXPECT_TRUE(convert.convert(reinterpret_cast<CUpti_Activity*>(&copy_call)));

  CUpti_ActivityMemcpy6 copy{};
  copy.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
  copy.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, copy.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PINNED,
  copy.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  copy.bytes = 4u << 20, copy.start = kT0 + 11'500, copy.end = kT0 + 200'000, copy.deviceId = 0, copy.contextId = 1,
  copy.streamId = 7;
  copy.correlationId = 43;
  EXPECT_TRUE(convert.convert(reinterpret_cast<CUpti_Activity*>(&copy)));

  CUpti_ActivityMemset4 memset{};
  memset.kind = CUPTI_ACTIVITY_KIND_MEMSET;
  memset.value = 0, memset.bytes = 1u << 20, memset.start = kT0 + 210'000, memset.end = kT0 + 215'000;
  memset.deviceId = 0, memset.contextId = 1, memset.streamId = 7, memset.correlationId = 44,
  memset.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  EXPECT_TRUE(convert.convert(reinterpret_cast<CUpti_Activity*>(&memset)));

  CUpti_ActivitySynchronization2 sync{};
  sync.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
  sync.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE;
  sync.start = kT0 + 215'500, sync.end = kT0 + 216'000, sync.correlationId = 45, sync.contextId = 1, sync.streamId = 7;
  sync.cudaEventId = CUPTI_SYNCHRONIZATION_INVALID_VALUE;
  EXPECT_TRUE(convert.convert(reinterpret_cast<CUpti_Activity*>(&sync)));

  for (auto [op, at] : {std::pair{CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION, 100u},
                        std::pair{CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE, 300'000u}}) {
    CUpti_ActivityMemory4 mem{};
    mem.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
    mem.memoryOperationType = op, mem.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, mem.address = 0x7f0000000000ull;
    mem.bytes = 8u << 20, mem.timestamp = kT0 + at, mem.deviceId = 0, mem.contextId = 1;
    EXPECT_TRUE(convert.convert(reinterpret_cast<CUpti_Activity*>(&mem)));
  }
  CUpti_ActivityMarker2 marker{};  // a kind tracedoc does not keep (NVTX comes through its own injection)
  marker.kind = CUPTI_ACTIVITY_KIND_MARKER;
  EXPECT_FALSE(convert.convert(reinterpret_cast<CUpti_Activity*>(&marker)));
  EXPECT_EQ(convert.converted(), 9);
  EXPECT_EQ(convert.skipped(), 1);

  ScratchDir dir;
  auto trace = read_converted(sink, dir);
  ASSERT_TRUE(trace.ok()) << trace.status().message();
  const Trace& t = *trace;
  EXPECT_EQ(t.source.session_start_utc_ns, static_cast<int64_t>(kT0));
  ASSERT_EQ(t.kernels.size(), 1u);
  EXPECT_EQ(t.str(t.kernels.name[0]), "_Z9vectorAddPKfS0_Pfi");
  EXPECT_EQ(t.kernels.start[0], 2'000);
  EXPECT_EQ(t.kernels.end[0], 9'500);
  EXPECT_EQ(t.kernels.grid_x[0], 128);
  EXPECT_EQ(t.kernels.block_x[0], 256);
  EXPECT_EQ(t.kernels.registers_per_thread[0], 16);
  EXPECT_EQ(t.kernels.dynamic_smem[0], 1024);
  EXPECT_EQ(t.kernels.stream[0], 7);
  EXPECT_EQ(t.kernels.correlation[0], 42);
  EXPECT_EQ(pid_of(t.kernels.global_pid[0]), 4242);
  ASSERT_EQ(t.api.size(), 2u);
  EXPECT_EQ(t.str(t.api.name[0]), "cudaLaunchKernel_v7000");
  EXPECT_EQ(tid_of(t.api.global_tid[0]), 4242);
  ASSERT_EQ(t.memcpys.size(), 1u);
  EXPECT_EQ(t.memcpys.copy_kind[0], static_cast<uint8_t>(CopyKind::kHtoD));
  EXPECT_EQ(t.memcpys.src_kind[0], static_cast<uint8_t>(MemKind::kPinned));
  EXPECT_EQ(t.memcpys.dst_kind[0], static_cast<uint8_t>(MemKind::kDevice));
  EXPECT_EQ(t.memcpys.bytes[0], 4 << 20);
  ASSERT_EQ(t.memsets.size(), 1u);
  EXPECT_EQ(t.memsets.mem_kind[0], static_cast<uint8_t>(MemKind::kDevice));
  ASSERT_EQ(t.syncs.size(), 1u);
  EXPECT_EQ(t.syncs.sync_type[0], 3);
  EXPECT_EQ(t.syncs.device[0], 0);  // from the kernel's context
  EXPECT_EQ(t.syncs.event_id[0], kNoValue);
  ASSERT_EQ(t.memory.size(), 2u);
  EXPECT_EQ(t.memory.operation[0], 0);
  EXPECT_EQ(t.memory.operation[1], 1);
  ASSERT_EQ(t.devices.size(), 1u);
  EXPECT_EQ(t.str(t.devices[0].name), "NVIDIA H200");
  EXPECT_EQ(t.devices[0].sm_count, 132);

  // The nsys reports on it, as on an export: names without the version suffix, copy sizes.
  auto api = report_csv(t, "cuda_api_sum");
  ASSERT_TRUE(api.has_value());
  EXPECT_NE(api->find(",cudaLaunchKernel\n"), std::string::npos) << *api;
  EXPECT_NE(api->find(",cudaMemcpyAsync\n"), std::string::npos) << *api;
  auto kern = report_csv(t, "cuda_gpu_kern_sum");
  ASSERT_TRUE(kern.has_value());
  EXPECT_NE(kern->find("100.0,7500,1,7500.0,7500.0,7500,7500,0.0,_Z9vectorAddPKfS0_Pfi"), std::string::npos) << *kern;
  auto sizes = report_csv(t, "cuda_gpu_mem_size_sum");
  ASSERT_TRUE(sizes.has_value());
  EXPECT_NE(sizes->find("[CUDA memcpy Host-to-Device]"), std::string::npos) << *sizes;
  EXPECT_NE(sizes->find("4.194"), std::string::npos) << *sizes;
}

// Graph-level records and CUDA event records: a graph launched from the host (CUPTI gives INT_MAX
// for the first node's device and context) lands on its last node's device; an event record whose
// cudaEventRecord call was not captured is dropped; the stream a wait waited for is found.
TEST(CuptiRecords, GraphLaunchesAndEventRecords) {
  FileSink sink;
  inject::ActivityConverter convert(sink, api_names);
  CUpti_ActivityAPI record_call = runtime_call(CUPTI_RUNTIME_TRACE_CBID_cudaEventRecord_v3020, 1'000, 1'400, 50);
  EXPECT_TRUE(convert.convert(reinterpret_cast<CUpti_Activity*>(&record_call)));
  CUpti_ActivityAPI graph_call = runtime_call(CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000, 2'000, 2'600, 51);
  EXPECT_TRUE(convert.convert(reinterpret_cast<CUpti_Activity*>(&graph_call)));

  CUpti_ActivityCudaEvent2 event{};
  event.kind = CUPTI_ACTIVITY_KIND_CUDA_EVENT;
  event.correlationId = 50, event.contextId = 1, event.streamId = 21, event.eventId = 41, event.deviceId = 0;
  event.cudaEventSyncId = 7;
  EXPECT_TRUE(convert.convert(reinterpret_cast<CUpti_Activity*>(&event)));
  CUpti_ActivityCudaEvent2 uncaptured = event;  // its record call lies outside the capture
  uncaptured.correlationId = 49, uncaptured.streamId = 22;
  EXPECT_TRUE(convert.convert(reinterpret_cast<CUpti_Activity*>(&uncaptured)));

  CUpti_ActivityGraphTrace2 graph{};
  graph.kind = CUPTI_ACTIVITY_KIND_GRAPH_TRACE;
  graph.correlationId = 51, graph.start = kT0 + 3'000, graph.end = kT0 + 503'000, graph.graphId = 5,
  graph.streamId = 14;
  graph.deviceId = static_cast<uint32_t>(INT32_MAX), graph.contextId = static_cast<uint32_t>(INT32_MAX);
  graph.endDeviceId = 1, graph.endContextId = 2;
  EXPECT_TRUE(convert.convert(reinterpret_cast<CUpti_Activity*>(&graph)));

  CUpti_ActivitySynchronization2 wait{};
  wait.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
  wait.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT;
  wait.start = kT0 + 1'500, wait.end = kT0 + 1'600, wait.correlationId = 52, wait.contextId = 1, wait.streamId = 7;
  wait.cudaEventId = 41;
  EXPECT_TRUE(convert.convert(reinterpret_cast<CUpti_Activity*>(&wait)));

  ScratchDir dir;
  auto trace = read_converted(sink, dir);
  ASSERT_TRUE(trace.ok()) << trace.status().message();
  const Trace& t = *trace;
  ASSERT_EQ(t.cuda_events.size(), 1u);
  EXPECT_EQ(t.cuda_events.stream[0], 21);
  EXPECT_EQ(t.cuda_events.event_id[0], 41);
  EXPECT_EQ(t.cuda_events.sync_id[0], 7);
  EXPECT_EQ(t.cuda_events.time[0], kNoTime);  // device timestamps are off by default
  ASSERT_EQ(t.graph_traces.size(), 1u);
  EXPECT_EQ(t.graph_traces.device[0], 1);
  EXPECT_EQ(t.graph_traces.context[0], 2);
  EXPECT_EQ(t.graph_traces.stream[0], 14);
  EXPECT_EQ(t.graph_traces.graph_id[0], 5);
  EXPECT_EQ(t.graph_traces.start[0], 3'000);
  EXPECT_EQ(t.graph_traces.end[0], 503'000);

  // The summary counts the graph as GPU work (500 µs busy on GPU 1), and the view's hover of the
  // wait names the stream whose event it waited for.
  const TraceSummary summary = summarize(t);
  ASSERT_EQ(summary.devices.size(), 1u);
  EXPECT_EQ(summary.devices[0].device, 1);
  EXPECT_EQ(summary.devices[0].graphs, 1);
  EXPECT_EQ(summary.devices[0].graph_ns, 500'000);
  EXPECT_EQ(summary.devices[0].busy_ns, 500'000);
  const view::EventRecords events(t);
  view::TrackItem item;
  item.category = view::Category::kSync, item.row = 0;
  EXPECT_EQ(view::item_detail(t, item, &events), "event 41, recorded on GPU 0 stream 21");

  // Both tables go into the SQLite export in nsys's layout and come back the same.
  const fs::path sqlite = dir.path() / "graphs.sqlite";
  ASSERT_TRUE(write_nsys_sqlite(t, sqlite.string()).ok());
  auto back = read_nsys_sqlite(sqlite.string());
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->cuda_events.stream, t.cuda_events.stream);
  EXPECT_EQ(back->cuda_events.sync_id, t.cuda_events.sync_id);
  EXPECT_EQ(back->cuda_events.time, t.cuda_events.time);
  EXPECT_EQ(back->graph_traces.start, t.graph_traces.start);
  EXPECT_EQ(back->graph_traces.end, t.graph_traces.end);
  EXPECT_EQ(back->graph_traces.graph_id, t.graph_traces.graph_id);
  EXPECT_EQ(summarize(*back).devices[0].graph_ns, 500'000);
  // The real nsys reads the export and prints tracedoc's API summary, down to the 7-character
  // suffix it leaves on cudaGraphLaunch_v10000.
  if (const std::optional<std::string> api = real_nsys_stats("cuda_api_sum", sqlite)) {
    EXPECT_NE(api->find(",cudaGraphLaunch_v10000\n"), std::string::npos) << *api;
    EXPECT_EQ(*api, report_csv(*back, "cuda_api_sum").value_or(""));
  }
}

}  // namespace
}  // namespace tracedoc::testing

#else

TEST(CuptiRecords, RealLayoutsBecomeTheModel) { GTEST_SKIP() << "built without the CUDA toolkit's CUPTI headers"; }
TEST(CuptiRecords, GraphLaunchesAndEventRecords) { GTEST_SKIP() << "built without the CUDA toolkit's CUPTI headers"; }

#endif
