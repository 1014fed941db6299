// Rank directories (torch.profiler.tensorboard_trace_handler writes one file per rank and step
// window): every trace file is read on its own thread and the ranks are merged into one Trace.
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <optional>
#include <thread>
#include <vector>

#include "common/memory_budget.h"
#include "ingest/kineto_events.h"
#include "ingest/kineto_reader.h"

namespace tracedoc {

namespace {

bool ends_with(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Column appenders: a plain copy, times moved by the rank's clock offset, thread/process ids tagged
// with the rank, string ids re-interned.
template <typename T>
void extend(std::vector<T>& dst, const std::vector<T>& src) {
  dst.insert(dst.end(), src.begin(), src.end());
}
void extend_times(std::vector<TimeNs>& dst, const std::vector<TimeNs>& src, TimeNs shift) {
  for (TimeNs t : src) dst.push_back(t == kNoTime ? kNoTime : t + shift);
}
void extend_ids(std::vector<int64_t>& dst, const std::vector<int64_t>& src, int64_t tag) {
  for (int64_t id : src) dst.push_back(id | tag);
}

// Appends `src` to `dst`: strings re-interned, CPU thread ids tagged with `vm` (the rank) in their
// upper bits so that equal pids of different hosts stay apart, times moved by `shift` ns.
class TraceAppender {
 public:
  TraceAppender(Trace& dst, const Trace& src, int64_t vm, TimeNs shift)
      : dst_(dst), src_(src), tag_(vm << 48), shift_(shift), ids_(src.strings.size(), kNoStr) {}

  void run() {
    auto& dk = dst_.kernels;
    const auto& k = src_.kernels;
    const uint32_t kernel_base = static_cast<uint32_t>(dk.size());
    times(dk.start, k.start), times(dk.end, k.end), extend_ids(dk.global_pid, k.global_pid, tag_);
    extend(dk.correlation, k.correlation), extend(dk.device, k.device), extend(dk.context, k.context);
    extend(dk.green_context, k.green_context), extend(dk.stream, k.stream);
    strings(dk.name, k.name), strings(dk.short_name, k.short_name), strings(dk.mangled_name, k.mangled_name);
    extend(dk.grid_x, k.grid_x), extend(dk.grid_y, k.grid_y), extend(dk.grid_z, k.grid_z);
    extend(dk.block_x, k.block_x), extend(dk.block_y, k.block_y), extend(dk.block_z, k.block_z);
    extend(dk.registers_per_thread, k.registers_per_thread), extend(dk.static_smem, k.static_smem);
    extend(dk.dynamic_smem, k.dynamic_smem), extend(dk.graph_node_id, k.graph_node_id);

    auto& dc = dst_.pytorch.collectives;
    const auto& c = src_.pytorch.collectives;
    for (uint32_t row : c.kernel) dc.kernel.push_back(row + kernel_base);
    strings(dc.collective, c.collective), strings(dc.dtype, c.dtype), strings(dc.group_name, c.group_name);
    extend(dc.in_nelems, c.in_nelems), extend(dc.out_nelems, c.out_nelems), extend(dc.group_size, c.group_size);

    auto& dm = dst_.memcpys;
    const auto& m = src_.memcpys;
    times(dm.start, m.start), times(dm.end, m.end), extend_ids(dm.global_pid, m.global_pid, tag_);
    extend(dm.correlation, m.correlation), extend(dm.bytes, m.bytes), extend(dm.device, m.device);
    extend(dm.context, m.context), extend(dm.green_context, m.green_context), extend(dm.stream, m.stream);
    extend(dm.src_device, m.src_device), extend(dm.dst_device, m.dst_device), extend(dm.copy_kind, m.copy_kind);
    extend(dm.src_kind, m.src_kind), extend(dm.dst_kind, m.dst_kind);

    auto& ds = dst_.memsets;
    const auto& ms = src_.memsets;
    times(ds.start, ms.start), times(ds.end, ms.end), extend_ids(ds.global_pid, ms.global_pid, tag_);
    extend(ds.correlation, ms.correlation), extend(ds.bytes, ms.bytes), extend(ds.value, ms.value);
    extend(ds.device, ms.device), extend(ds.context, ms.context), extend(ds.green_context, ms.green_context);
    extend(ds.stream, ms.stream), extend(ds.mem_kind, ms.mem_kind);

    auto& dy = dst_.syncs;
    const auto& y = src_.syncs;
    times(dy.start, y.start), times(dy.end, y.end), extend_ids(dy.global_pid, y.global_pid, tag_);
    extend(dy.correlation, y.correlation), extend(dy.event_id, y.event_id), extend(dy.device, y.device);
    extend(dy.context, y.context), extend(dy.stream, y.stream), extend(dy.sync_type, y.sync_type);

    auto& da = dst_.api;
    const auto& a = src_.api;
    times(da.start, a.start), times(da.end, a.end), extend_ids(da.global_tid, a.global_tid, tag_);
    extend(da.correlation, a.correlation), extend(da.return_value, a.return_value), strings(da.name, a.name);
    extend(da.api_class, a.api_class);

    auto& dr = dst_.ranges;
    const auto& r = src_.ranges;
    times(dr.start, r.start), times(dr.end, r.end), extend_ids(dr.global_tid, r.global_tid, tag_);
    extend(dr.end_global_tid, r.end_global_tid), extend(dr.kind, r.kind), strings(dr.text, r.text);
    extend(dr.domain_id, r.domain_id), extend(dr.range_id, r.range_id);
    dr.row_id.resize(dr.start.size());  // renumbered when the merged trace is sorted

    append_pytorch();
    for (const auto& th : src_.threads) dst_.threads.push_back({th.global_tid | tag_, str(th.name), th.priority});
    for (const auto& p : src_.processes) dst_.processes.push_back({p.global_pid | tag_, p.pid, str(p.name)});
    for (const auto& dev : src_.devices) {
      const bool known = std::any_of(dst_.devices.begin(), dst_.devices.end(), [&](const DeviceInfo& x) { return x.id == dev.id; });
      if (!known) {
        DeviceInfo copy = dev;
        copy.name = str(dev.name);
        dst_.devices.push_back(copy);
      }
    }
    dst_.source.tables.insert(src_.source.tables.begin(), src_.source.tables.end());
  }

 private:
  StrId str(StrId id) {
    if (id == kNoStr) return kNoStr;
    if (ids_[id] == kNoStr) ids_[id] = dst_.strings.intern(src_.strings.get(id));
    return ids_[id];
  }
  void strings(std::vector<StrId>& dst, const std::vector<StrId>& src) {
    for (StrId id : src) dst.push_back(str(id));
  }
  void times(std::vector<TimeNs>& dst, const std::vector<TimeNs>& src) { extend_times(dst, src, shift_); }

  void append_pytorch() {
    const auto& sp = src_.pytorch;
    auto& dp = dst_.pytorch;
    const auto& o = sp.ops;
    times(dp.ops.start, o.start), times(dp.ops.end, o.end), extend_ids(dp.ops.global_tid, o.global_tid, tag_);
    strings(dp.ops.name, o.name), extend(dp.ops.external_id, o.external_id);
    extend(dp.ops.sequence_number, o.sequence_number), extend(dp.ops.fwd_thread_id, o.fwd_thread_id);
    strings(dp.ops.input_dims, o.input_dims);

    const auto& g = sp.gpu_annotations;
    times(dp.gpu_annotations.start, g.start), times(dp.gpu_annotations.end, g.end);
    extend(dp.gpu_annotations.device, g.device), extend(dp.gpu_annotations.stream, g.stream);
    strings(dp.gpu_annotations.name, g.name), extend(dp.gpu_annotations.external_id, g.external_id);

    const auto& m = sp.allocator;
    times(dp.allocator.time, m.time), extend_ids(dp.allocator.global_tid, m.global_tid, tag_);
    extend(dp.allocator.address, m.address), extend(dp.allocator.bytes, m.bytes);
    extend(dp.allocator.total_allocated, m.total_allocated), extend(dp.allocator.total_reserved, m.total_reserved);
    extend(dp.allocator.device_type, m.device_type), extend(dp.allocator.device_id, m.device_id);

    const auto& f = sp.forward_backward;
    extend(dp.forward_backward.id, f.id), times(dp.forward_backward.time, f.time);
    extend_ids(dp.forward_backward.global_tid, f.global_tid, tag_), extend(dp.forward_backward.phase, f.phase);

    dp.event_count += sp.event_count;
    dp.python_function_count += sp.python_function_count;
    dp.flow_count += sp.flow_count;
    dst_.warnings.negative_durations += src_.warnings.negative_durations;
    dst_.warnings.absurd_durations += src_.warnings.absurd_durations;
    dst_.warnings.missing_times += src_.warnings.missing_times;
    dst_.warnings.unknown_events += src_.warnings.unknown_events;
  }

  Trace& dst_;
  const Trace& src_;
  int64_t tag_;
  TimeNs shift_;
  std::vector<StrId> ids_;
};

}  // namespace

std::vector<std::string> kineto_files_in(const std::string& dir) {
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (!entry.is_regular_file(ec)) continue;
    const std::string name = entry.path().filename().string();
    if (ends_with(name, ".json") || ends_with(name, ".json.gz")) files.push_back(entry.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

Result<Trace> read_kineto_directory(const std::string& dir, int64_t only_rank, int threads) {
  const auto files = kineto_files_in(dir);
  if (files.empty()) return BadInput(fmt::format("{}: no PyTorch profiler traces (*.json, *.json.gz) in this directory", dir));

  std::vector<std::optional<Result<Trace>>> results(files.size());
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i; (i = next.fetch_add(1)) < files.size();) results[i].emplace(read_kineto_trace(files[i]));
  };
  std::vector<std::thread> pool;
  const int n = std::max(1, std::min<int>(threads, static_cast<int>(files.size())));
  for (int i = 1; i < n; ++i) pool.emplace_back(worker);
  worker();
  for (auto& th : pool) th.join();

  // Files that are JSON but not traces (e.g. a run's metadata beside its traces) are passed over.
  std::vector<Trace> ranks;
  for (size_t i = 0; i < files.size(); ++i) {
    auto& r = *results[i];
    if (!r.ok()) {
      if (r.status().message().find("not a PyTorch profiler trace") != std::string::npos) continue;
      return r.status();
    }
    Trace t = std::move(r).value();
    if (t.pytorch.rank < 0) t.pytorch.rank = static_cast<int64_t>(ranks.size());
    if (only_rank >= 0 && t.pytorch.rank != only_rank) continue;
    ranks.push_back(std::move(t));
  }
  if (ranks.empty()) {
    if (only_rank >= 0) return UsageError(fmt::format("{}: no trace of rank {} in this directory", dir, only_rank));
    return BadInput(fmt::format("{}: no PyTorch profiler traces in this directory", dir));
  }
  if (ranks.size() == 1) {
    ranks[0].source.path = dir;
    return std::move(ranks[0]);
  }
  std::sort(ranks.begin(), ranks.end(), [](const Trace& a, const Trace& b) { return a.pytorch.rank < b.pytorch.rank; });

  // Ranks started in different quarters have different bases: express all times on the earliest.
  int64_t base = INT64_MAX;
  for (const auto& t : ranks) if (t.pytorch.base_time_ns > 0) base = std::min(base, t.pytorch.base_time_ns);
  Trace merged;
  merged.source.path = dir;
  merged.source.format = "kineto-json";
  merged.pytorch.era = ranks[0].pytorch.era;
  merged.pytorch.base_time_ns = base == INT64_MAX ? 0 : base;
  merged.pytorch.world_size = ranks[0].pytorch.world_size;
  merged.pytorch.backend = ranks[0].pytorch.backend;
  for (const auto& t : ranks) {
    const TimeNs shift = t.pytorch.base_time_ns > 0 ? t.pytorch.base_time_ns - base : 0;
    TraceAppender(merged, t, t.pytorch.rank + 1, shift).run();
    TRACEDOC_RETURN_IF_ERROR(MemoryBudget::check(dir));
  }
  merged.source.session_start_utc_ns = merged.pytorch.base_time_ns;
  kineto::sort_by_time(merged);
  kineto::find_steps(merged);
  return merged;
}

}  // namespace tracedoc
