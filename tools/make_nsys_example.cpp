// Writes examples/toy_training.sqlite-style exports: a small, deterministic PyTorch-like training
// loop (data loading on the CPU, forward/backward kernels, copies, a memset, stream syncs, NVTX
// ranges, OS runtime calls) as a valid Nsight Systems SQLite export. Used for the README quick start
// and tests; the real `nsys stats` accepts these files.
//
//   make_nsys_example OUTPUT.sqlite [STEPS]
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "model/trace.h"
#include "report/nsys_sqlite_writer.h"

namespace {

using namespace tracedoc;

constexpr int64_t kPid = 4242;
constexpr int64_t kMainTid = 4242;
constexpr int64_t kLoaderTid = 4250;

// Small deterministic jitter so durations differ like real ones do.
class Jitter {
 public:
  int64_t operator()(int64_t base, int percent) {
    state_ = state_ * 6364136223846793005ULL + 1442695040888963407ULL;
    const int64_t span = base * percent / 100;
    return base + static_cast<int64_t>((state_ >> 33) % static_cast<uint64_t>(2 * span + 1)) - span;
  }

 private:
  uint64_t state_ = 0x9E3779B97F4A7C15ULL;
};

struct Builder {
  Trace t;
  Jitter jitter;
  int64_t correlation = 100;
  const int64_t main_tid = make_global_tid(0, kPid, kMainTid);
  const int64_t loader_tid = make_global_tid(0, kPid, kLoaderTid);
  const int64_t gpid = make_global_tid(0, kPid, 0);
  TimeNs gpu_free = 0;  // when the (single) stream is idle again

  StrId s(const std::string& v) { return t.strings.intern(v); }

  void range(TimeNs start, TimeNs end, const std::string& text, int64_t tid) {
    auto& r = t.ranges;
    r.start.push_back(start);
    r.end.push_back(end);
    r.global_tid.push_back(tid);
    r.end_global_tid.push_back(kNoValue);
    r.kind.push_back(static_cast<uint16_t>(RangeKind::kNvtxPushPop));
    r.text.push_back(s(text));
    r.domain_id.push_back(kNoValue);
    r.range_id.push_back(kNoValue);
  }
  int64_t api(TimeNs start, TimeNs duration, const std::string& name) {
    auto& a = t.api;
    a.start.push_back(start);
    a.end.push_back(start + duration);
    a.global_tid.push_back(main_tid);
    a.correlation.push_back(++correlation);
    a.name.push_back(s(name));
    a.return_value.push_back(0);
    a.api_class.push_back(0);
    return correlation;
  }
  void os_call(TimeNs start, TimeNs duration, const std::string& name, int64_t tid) {
    auto& o = t.os_calls;
    o.start.push_back(start);
    o.end.push_back(start + duration);
    o.global_tid.push_back(tid);
    o.name.push_back(s(name));
    o.return_value.push_back(0);
    o.event_class.push_back(27);
    o.nesting_level.push_back(0);
  }
  // A kernel launch at CPU time `cpu`; returns the CPU time after the launch call.
  TimeNs launch(TimeNs cpu, const std::string& name, const std::string& short_name, int gx, int gy, int bx, int regs,
                int smem, TimeNs gpu_duration) {
    const TimeNs call = jitter(5200, 30);
    const int64_t corr = api(cpu, call, "cudaLaunchKernel_v7000");
    const TimeNs start = std::max(gpu_free, cpu + call + jitter(3000, 20));
    const TimeNs end = start + jitter(gpu_duration, 8);
    auto& k = t.kernels;
    k.start.push_back(start);
    k.end.push_back(end);
    k.global_pid.push_back(gpid);
    k.correlation.push_back(corr);
    k.device.push_back(0);
    k.context.push_back(1);
    k.green_context.push_back(kNoGreen);
    k.stream.push_back(7);
    k.name.push_back(s(name));
    k.short_name.push_back(s(short_name));
    k.mangled_name.push_back(kNoStr);
    k.grid_x.push_back(gx);
    k.grid_y.push_back(gy);
    k.grid_z.push_back(1);
    k.block_x.push_back(bx);
    k.block_y.push_back(1);
    k.block_z.push_back(1);
    k.registers_per_thread.push_back(regs);
    k.static_smem.push_back(smem);
    k.dynamic_smem.push_back(0);
    k.graph_node_id.push_back(kNoValue);
    gpu_free = end;
    return cpu + call + jitter(1500, 30);
  }
  TimeNs memcpy(TimeNs cpu, const std::string& api_name, CopyKind kind, MemKind src, MemKind dst, int64_t bytes,
                double gb_per_s, bool blocking) {
    const TimeNs gpu_duration = static_cast<TimeNs>(static_cast<double>(bytes) / gb_per_s) + 1500;
    const TimeNs start = std::max(gpu_free, cpu + 4000);
    const TimeNs end = start + jitter(gpu_duration, 5);
    const TimeNs call = blocking ? end - cpu + 2500 : jitter(9000, 20);
    const int64_t corr = api(cpu, call, api_name);
    auto& m = t.memcpys;
    m.start.push_back(start);
    m.end.push_back(end);
    m.global_pid.push_back(gpid);
    m.correlation.push_back(corr);
    m.bytes.push_back(bytes);
    m.device.push_back(0);
    m.context.push_back(1);
    m.green_context.push_back(kNoGreen);
    m.stream.push_back(7);
    m.src_device.push_back(kNoGreen);
    m.dst_device.push_back(kNoGreen);
    m.copy_kind.push_back(static_cast<uint8_t>(kind));
    m.src_kind.push_back(static_cast<uint8_t>(src));
    m.dst_kind.push_back(static_cast<uint8_t>(dst));
    gpu_free = end;
    return cpu + call + jitter(2000, 30);
  }
  TimeNs memset(TimeNs cpu, int64_t bytes) {
    const TimeNs call = jitter(6000, 20);
    const int64_t corr = api(cpu, call, "cudaMemsetAsync_v3020");
    const TimeNs start = std::max(gpu_free, cpu + call + 2500);
    const TimeNs end = start + jitter(bytes / 400 + 900, 5);
    auto& m = t.memsets;
    m.start.push_back(start);
    m.end.push_back(end);
    m.global_pid.push_back(gpid);
    m.correlation.push_back(corr);
    m.bytes.push_back(bytes);
    m.value.push_back(0);
    m.device.push_back(0);
    m.context.push_back(1);
    m.green_context.push_back(kNoGreen);
    m.stream.push_back(7);
    m.mem_kind.push_back(static_cast<uint8_t>(MemKind::kDevice));
    gpu_free = end;
    return cpu + call + jitter(1500, 30);
  }
  TimeNs sync(TimeNs cpu) {
    const TimeNs end = std::max(gpu_free, cpu + 3000) + jitter(4000, 20);
    api(cpu, end - cpu, "cudaStreamSynchronize_v3020");
    return end + jitter(2000, 20);
  }

  // One training step: the loader thread prepares a batch while the main thread waits, then the
  // batch is copied from pageable memory and the model runs forward, backward and the optimizer.
  TimeNs step(TimeNs cpu, int index) {
    const TimeNs step_start = cpu;
    const TimeNs load_end = cpu + jitter(18'000'000, 15);
    range(cpu + 20'000, load_end - 30'000, "DataLoader::next", loader_tid);
    for (TimeNs tcpu = cpu + 40'000; tcpu + 1'200'000 < load_end; tcpu += 1'500'000) {
      os_call(tcpu, jitter(900'000, 20), "read", loader_tid);
    }
    os_call(cpu + 10'000, load_end - cpu - 20'000, "pthread_cond_wait", main_tid);
    range(cpu, load_end, "data_wait", main_tid);
    cpu = load_end + 5'000;

    const TimeNs copy_start = cpu;
    cpu = memcpy(cpu, "cudaMemcpyAsync_v3020", CopyKind::kHtoD, MemKind::kPageable, MemKind::kDevice, 12'582'912, 11.5,
                 false);
    range(copy_start - 2'000, cpu, "batch_to_gpu", main_tid);

    const TimeNs fwd = cpu;
    for (int layer = 0; layer < 3; ++layer) {
      cpu = launch(cpu, "ampere_sgemm_128x64_tn", "ampere_sgemm_128x64_tn", 64, 8, 128, 122, 32768, 410'000);
      cpu = launch(cpu, "void at::native::vectorized_elementwise_kernel<4, at::native::relu_kernel>(int, T1)",
                   "vectorized_elementwise_kernel", 4096, 1, 128, 24, 0, 38'000);
    }
    cpu = launch(cpu, "void softmax_warp_forward<float, float, float, 10, true>(T2 *, const T1 *, int, int, int)",
                 "softmax_warp_forward", 256, 1, 128, 40, 0, 21'000);
    range(fwd, cpu, "forward", main_tid);

    const TimeNs bwd = cpu;
    for (int layer = 0; layer < 3; ++layer) {
      cpu = launch(cpu, "ampere_sgemm_64x64_nn", "ampere_sgemm_64x64_nn", 128, 4, 128, 90, 16384, 385'000);
      cpu = launch(cpu, "ampere_sgemm_64x64_nn", "ampere_sgemm_64x64_nn", 128, 4, 128, 90, 16384, 372'000);
      cpu = launch(cpu, "void at::native::vectorized_elementwise_kernel<4, at::native::threshold_backward>(int, T1)",
                   "vectorized_elementwise_kernel", 4096, 1, 128, 26, 0, 41'000);
    }
    range(bwd, cpu, "backward", main_tid);

    const TimeNs opt = cpu;
    cpu = memset(cpu, 4'194'304);
    cpu = launch(cpu, "void multi_tensor_apply_kernel<TensorListMetadata<4>, AdamFunctor<float>>(int, T1, T2)",
                 "multi_tensor_apply_kernel", 320, 1, 512, 64, 0, 95'000);
    range(opt, cpu, "optimizer", main_tid);

    cpu = memcpy(cpu, "cudaMemcpy_v3020", CopyKind::kDtoH, MemKind::kDevice, MemKind::kPageable, 4, 1.0, true);
    cpu = sync(cpu);
    range(step_start, cpu, "train_step " + std::to_string(index), main_tid);
    return cpu + jitter(60'000, 20);
  }
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: make_nsys_example OUTPUT.sqlite [STEPS]\n");
    return 2;
  }
  const int steps = argc > 2 ? std::atoi(argv[2]) : 4;
  if (steps <= 0 || steps > 100000) {
    std::fprintf(stderr, "make_nsys_example: STEPS must be between 1 and 100000\n");
    return 2;
  }
  Builder b;
  Trace& t = b.t;
  t.source.session_start_utc_ns = 1764547200000000000;  // 2025-12-01T00:00:00Z
  t.source.product_version = "2024.5.1.113";
  t.devices.push_back({0, b.s("NVIDIA A100-SXM4-80GB"), 108, 85'899'345'920, 8, 0});
  t.processes.push_back({b.gpid, kPid, b.s("python3")});
  t.threads.push_back({b.main_tid, b.s("python3"), 20});
  t.threads.push_back({b.loader_tid, b.s("pt_data_worker"), 20});

  TimeNs cpu = 1'200'000'000;
  cpu =
      b.memcpy(cpu, "cudaMemcpy_v3020", CopyKind::kHtoD, MemKind::kPageable, MemKind::kDevice, 47'185'920, 10.0, true);
  for (int i = 0; i < steps; ++i) cpu = b.step(cpu, i);

  tracedoc::Status st = tracedoc::write_nsys_sqlite(t, argv[1]);
  if (!st.ok()) {
    std::fprintf(stderr, "make_nsys_example: %s\n", st.message().c_str());
    return 2;
  }
  return 0;
}
