#include "synth/timeline.h"

#include <algorithm>
#include <numeric>

#include "model/kernel_names.h"

namespace tracedoc::synth {

namespace {

constexpr int64_t kBlock = 512;                 // the caching allocator's rounding
constexpr int64_t kSegment = int64_t{2} << 20;  // reserved memory grows by segments
constexpr int64_t kAddressBase = 0x7f2a00000000;

int64_t round_up(int64_t x, int64_t to) { return (x + to - 1) / to * to; }

}  // namespace

uint64_t Rng::next() {
  uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

TimeNs Rng::jitter(TimeNs base, int per_mille) {
  const TimeNs span = base * per_mille / 1000;
  if (span <= 0) return base;
  return base + static_cast<TimeNs>(next() % static_cast<uint64_t>(2 * span + 1)) - span;
}

Timeline::Timeline(Trace& trace, int64_t pid, int32_t device, int32_t sm_count, uint64_t seed)
    : t_(trace), rng_(seed), pid_(pid), device_(device), sm_count_(sm_count) {
  // Kineto's correlation ids start where CUPTI's count is after the warm-up steps; any start works.
  correlation_ = 1000 + static_cast<int64_t>(rng_.below(9000));
}

void Timeline::begin_range(CpuThread& th, std::string_view name) {
  auto& r = t_.ranges;
  th.open_ranges.push_back(static_cast<uint32_t>(r.start.size()));
  r.start.push_back(th.now);
  r.end.push_back(th.now);
  r.global_tid.push_back(th.global_tid);
  r.end_global_tid.push_back(kNoValue);
  r.kind.push_back(static_cast<uint16_t>(RangeKind::kNvtxPushPop));  // record_function is a scope
  r.text.push_back(t_.strings.intern(name));
  r.domain_id.push_back(kNoValue);
  r.range_id.push_back(kNoValue);
  r.row_id.push_back(static_cast<int64_t>(r.row_id.size()) + 1);
  th.now += rng_.jitter(1500, 300);  // record_function's own cost
}

void Timeline::end_range(CpuThread& th) {
  th.now += rng_.jitter(1000, 300);
  t_.ranges.end[th.open_ranges.back()] = th.now;
  th.open_ranges.pop_back();
}

uint32_t Timeline::begin_op(CpuThread& th, std::string_view name, std::string_view input_dims, int64_t sequence_number,
                            int64_t fwd_thread_id, std::string_view input_types) {
  auto& o = t_.pytorch.ops;
  const auto row = static_cast<uint32_t>(o.start.size());
  th.open_ops.push_back(row);
  o.start.push_back(th.now);
  o.end.push_back(th.now);
  o.global_tid.push_back(th.global_tid);
  o.name.push_back(t_.strings.intern(name));
  o.external_id.push_back(++external_id_);
  o.sequence_number.push_back(sequence_number);
  o.fwd_thread_id.push_back(fwd_thread_id);
  o.input_dims.push_back(input_dims.empty() ? kNoStr : t_.strings.intern(input_dims));
  o.input_types.push_back(input_types.empty() ? kNoStr : t_.strings.intern(input_types));
  o.concrete_inputs.push_back(kNoStr), o.flops.push_back(kNoValue);
  th.now += rng_.jitter(4000, 300);  // dispatch: argument parsing, dispatcher, output allocation
  return row;
}

void Timeline::end_op(CpuThread& th) {
  th.now += rng_.jitter(1500, 300);
  t_.pytorch.ops.end[th.open_ops.back()] = th.now;
  th.open_ops.pop_back();
}

void Timeline::link_backward(uint32_t forward_op, uint32_t backward_op) {
  auto& f = t_.pytorch.forward_backward;
  const int64_t id = static_cast<int64_t>(f.size() / 2) + 1;
  const auto& o = t_.pytorch.ops;
  for (const auto& [row, phase] : {std::pair{forward_op, 's'}, std::pair{backward_op, 'f'}}) {
    f.id.push_back(id);
    f.time.push_back(o.start[row]);
    f.global_tid.push_back(o.global_tid[row]);
    f.phase.push_back(phase);
  }
}

int64_t Timeline::api(CpuThread& th, std::string_view name, TimeNs start, TimeNs end) {
  auto& a = t_.api;
  const int64_t correlation = next_correlation();
  a.start.push_back(start);
  a.end.push_back(end);
  a.global_tid.push_back(th.global_tid);
  a.correlation.push_back(correlation);
  a.return_value.push_back(0);
  a.name.push_back(t_.strings.intern(name));
  a.api_class.push_back(static_cast<uint8_t>(ApiClass::kCudaRuntime));
  return correlation;
}

TimeNs Timeline::stream_free(int32_t stream) const {
  auto it = stream_free_.find(stream);
  return it == stream_free_.end() ? 0 : it->second;
}

void Timeline::stream_wait(int32_t stream, TimeNs until) {
  TimeNs& f = stream_free_[stream];
  f = std::max(f, until);
}

GpuOp Timeline::launch(CpuThread& th, const KernelShape& ks, int32_t stream, TimeNs not_before,
                       std::string_view api_name, TimeNs api_ns) {
  const TimeNs call = api_ns > 0 ? api_ns : rng_.jitter(5000, 200);
  const TimeNs api_start = th.now;
  th.now += call;
  const int64_t correlation = api(th, api_name, api_start, th.now);
  GpuOp op;
  op.correlation = correlation;
  op.start = std::max({stream_free(stream), th.now + rng_.jitter(1500, 300), not_before});
  op.end = op.start + std::max<TimeNs>(ks.duration, 1);
  stream_free_[stream] = op.end;
  auto& k = t_.kernels;
  op.row = static_cast<uint32_t>(k.start.size());
  const StrId name = t_.strings.intern(ks.name);
  k.start.push_back(op.start);
  k.end.push_back(op.end);
  k.global_pid.push_back(make_global_tid(0, pid_, 0));
  k.correlation.push_back(correlation);
  k.device.push_back(device_);
  k.context.push_back(1);
  k.green_context.push_back(kNoGreen);
  k.stream.push_back(stream);
  k.name.push_back(name);
  k.short_name.push_back(t_.strings.intern(short_kernel_name(ks.name)));
  k.mangled_name.push_back(name);  // Kineto records demangled names only
  k.grid_x.push_back(ks.grid_x);
  k.grid_y.push_back(ks.grid_y);
  k.grid_z.push_back(ks.grid_z);
  k.block_x.push_back(ks.block_x);
  k.block_y.push_back(ks.block_y);
  k.block_z.push_back(ks.block_z);
  k.registers_per_thread.push_back(ks.registers);
  k.static_smem.push_back(ks.shared_memory);
  k.dynamic_smem.push_back(0);
  k.graph_node_id.push_back(kNoValue);
  k.est_occupancy.push_back(estimated_occupancy(ks, sm_count_));
  return op;
}

void Timeline::place_kernel(uint32_t row, TimeNs start, TimeNs end, int32_t stream) {
  t_.kernels.start[row] = start;
  t_.kernels.end[row] = end;
  stream_wait(stream, end);
}

GpuOp Timeline::copy(CpuThread& th, CopyKind kind, MemKind src, MemKind dst, int64_t bytes, int64_t bytes_per_us,
                     bool blocking, int32_t stream) {
  // A copy to or from pageable memory is staged by the driver: the call returns only when the copy
  // is done, cudaMemcpyAsync included.
  const bool host_waits = blocking || src == MemKind::kPageable || dst == MemKind::kPageable;
  const TimeNs api_start = th.now;
  const TimeNs copy_ns = rng_.jitter(bytes * 1000 / std::max<int64_t>(bytes_per_us, 1) + 1500, 30);
  GpuOp op;
  TimeNs api_end = 0;
  if (host_waits) {
    op.start = std::max(stream_free(stream), api_start + rng_.jitter(4000, 300));
    op.end = op.start + copy_ns;
    api_end = op.end + rng_.jitter(3000, 300);
  } else {
    api_end = api_start + rng_.jitter(6000, 200);
    op.start = std::max(stream_free(stream), api_end + rng_.jitter(1500, 300));
    op.end = op.start + copy_ns;
  }
  stream_free_[stream] = op.end;
  th.now = api_end;
  op.correlation = api(th, blocking ? "cudaMemcpy" : "cudaMemcpyAsync", api_start, api_end);
  auto& m = t_.memcpys;
  op.row = static_cast<uint32_t>(m.start.size());
  m.start.push_back(op.start);
  m.end.push_back(op.end);
  m.global_pid.push_back(make_global_tid(0, pid_, 0));
  m.correlation.push_back(op.correlation);
  m.bytes.push_back(bytes);
  m.device.push_back(device_);
  m.context.push_back(1);
  m.green_context.push_back(kNoGreen);
  m.stream.push_back(stream);
  m.src_device.push_back(kNoGreen);  // as the Kineto reader leaves them (CUPTI fills them for peer copies only)
  m.dst_device.push_back(kNoGreen);
  m.copy_kind.push_back(static_cast<uint8_t>(kind));
  m.src_kind.push_back(static_cast<uint8_t>(src));
  m.dst_kind.push_back(static_cast<uint8_t>(dst));
  return op;
}

void Timeline::api_call(CpuThread& th, std::string_view name, TimeNs duration) {
  const TimeNs start = th.now;
  th.now += duration;
  api(th, name, start, th.now);
}

void Timeline::stream_sync(CpuThread& th, int32_t stream) {
  const TimeNs start = th.now;
  th.now = std::max(start + rng_.jitter(2500, 300), stream_free(stream) + rng_.jitter(3000, 300));
  api(th, "cudaStreamSynchronize", start, th.now);
}

void Timeline::device_sync(CpuThread& th) {
  const TimeNs start = th.now;
  TimeNs drained = 0;
  for (const auto& [stream, free] : stream_free_) drained = std::max(drained, free);
  th.now = std::max(start + rng_.jitter(2500, 300), drained + rng_.jitter(3000, 300));
  api(th, "cudaDeviceSynchronize", start, th.now);
}

void Timeline::preallocated(int64_t bytes) {
  allocated_ += round_up(bytes, kBlock);
  reserved_ = std::max(reserved_, round_up(allocated_, kSegment));
  next_address_ += round_up(bytes, kSegment);
}

int64_t Timeline::allocate(CpuThread& th, int64_t bytes) {
  const int64_t size = round_up(std::max<int64_t>(bytes, 1), kBlock);
  int64_t address = 0;
  auto& cached = free_blocks_[size];
  if (!cached.empty()) {
    address = cached.back();  // the caching allocator hands out the block it just got back
    cached.pop_back();
  } else {
    address = kAddressBase + next_address_;
    next_address_ += size;
  }
  allocated_ += size;
  reserved_ = std::max(reserved_, round_up(allocated_, kSegment));
  const int64_t handle = ++next_handle_;
  live_[handle] = {address, size};
  memory_event(th, address, size);
  return handle;
}

void Timeline::release(CpuThread& th, int64_t handle) {
  auto it = live_.find(handle);
  if (it == live_.end()) return;
  const auto [address, size] = it->second;
  live_.erase(it);
  allocated_ -= size;
  free_blocks_[size].push_back(address);
  memory_event(th, address, -size);
}

void Timeline::memory_event(CpuThread& th, int64_t address, int64_t bytes) {
  auto& m = t_.pytorch.allocator;
  m.time.push_back(th.now);
  m.global_tid.push_back(th.global_tid);
  m.address.push_back(address);
  m.bytes.push_back(bytes);
  m.total_allocated.push_back(allocated_);
  m.total_reserved.push_back(reserved_);
  m.device_type.push_back(1);  // CUDA
  m.device_id.push_back(device_);
}

}  // namespace tracedoc::synth
