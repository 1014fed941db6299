// CUPTI activity records, laid out by the real CUPTI headers of the CUDA toolkit (the structs CUPTI
// fills on a GPU: CUpti_ActivityKernel10, CUpti_ActivityMemcpy6, ...), converted by the injection
// library's converter, written as a capture file and read back into the model: what a GPU run
// would give, checked without a GPU. Built when the toolkit's CUPTI headers are present.
#include <gtest/gtest.h>

#ifdef TRACEDOC_WITH_CUPTI

#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <vector>

#include "ingest/capture_format.h"
#include "ingest/capture_reader.h"
#include "inject/cupti_records.h"
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
  if (!driver && cbid == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000) return "cudaLaunchKernel_v7000";
  if (!driver && cbid == CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020) return "cudaMemcpyAsync_v3020";
  return nullptr;
}

constexpr uint64_t kT0 = 1'764'590'400'000'000'000ull;  // 2025-12-01 12:00:00 UTC, CLOCK_REALTIME ns

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

  CUpti_ActivityAPI launch{};
  launch.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
  launch.cbid = CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000;
  launch.start = kT0 + 500, launch.end = kT0 + 1'700, launch.processId = 4242, launch.threadId = 4242, launch.correlationId = 42;
  EXPECT_TRUE(convert.convert(reinterpret_cast<CUpti_Activity*>(&launch)));
  CUpti_ActivityAPI copy_call = launch;
  copy_call.cbid = CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020, copy_call.start = kT0 + 10'000, copy_call.end = kT0 + 11'000;
  copy_call.correlationId = 43;
  EXPECT_TRUE(convert.convert(reinterpret_cast<CUpti_Activity*>(&copy_call)));

  CUpti_ActivityMemcpy6 copy{};
  copy.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
  copy.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, copy.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PINNED, copy.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  copy.bytes = 4u << 20, copy.start = kT0 + 11'500, copy.end = kT0 + 200'000, copy.deviceId = 0, copy.contextId = 1, copy.streamId = 7;
  copy.correlationId = 43;
  EXPECT_TRUE(convert.convert(reinterpret_cast<CUpti_Activity*>(&copy)));

  CUpti_ActivityMemset4 memset{};
  memset.kind = CUPTI_ACTIVITY_KIND_MEMSET;
  memset.value = 0, memset.bytes = 1u << 20, memset.start = kT0 + 210'000, memset.end = kT0 + 215'000;
  memset.deviceId = 0, memset.contextId = 1, memset.streamId = 7, memset.correlationId = 44, memset.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  EXPECT_TRUE(convert.convert(reinterpret_cast<CUpti_Activity*>(&memset)));

  CUpti_ActivitySynchronization2 sync{};
  sync.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
  sync.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE;
  sync.start = kT0 + 215'500, sync.end = kT0 + 216'000, sync.correlationId = 45, sync.contextId = 1, sync.streamId = 7;
  sync.cudaEventId = CUPTI_SYNCHRONIZATION_INVALID_VALUE;
  EXPECT_TRUE(convert.convert(reinterpret_cast<CUpti_Activity*>(&sync)));

  for (auto [op, at] : {std::pair{CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION, 100u}, std::pair{CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE, 300'000u}}) {
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

  // The file the injection library would have written: the process record, then one frame.
  ScratchDir dir;
  std::string process;
  capture::BodyWriter(process).put<int64_t>(4242).put<int64_t>(1).put<int64_t>(static_cast<int64_t>(kT0)).bytes("python");
  std::string first;
  capture::append_record(first, RecordType::kProcess, process);
  const fs::path file = dir.path() / "pid4242.tdcap";
  {
    std::ofstream out(file, std::ios::binary);
    out.write(capture::kFileMagic, sizeof(capture::kFileMagic));
    out << capture::frame_of(first) << capture::frame_of(sink.payload);
  }
  auto trace = read_capture(file.string());
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

}  // namespace
}  // namespace tracedoc::testing

#else

TEST(CuptiRecords, RealLayoutsBecomeTheModel) { GTEST_SKIP() << "built without the CUDA toolkit's CUPTI headers"; }

#endif
