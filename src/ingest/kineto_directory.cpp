// Rank directories (torch.profiler.tensorboard_trace_handler writes one file per rank and step
// window): every trace file is read on its own thread and the ranks are merged into one Trace.
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <optional>
#include <thread>
#include <vector>

#include "ingest/kineto_events.h"
#include "ingest/kineto_reader.h"

namespace tracedoc {

namespace {

bool ends_with(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Appends `src` to `dst`: strings re-interned, CPU thread ids tagged with `vm` (the rank) in their
// upper bits so that equal pids of different hosts stay apart, times moved by `shift` ns.
class TraceAppender {
 public:
  TraceAppender(Trace& dst, const Trace& src, int64_t vm, TimeNs shift)
      : dst_(dst), src_(src), tag_(vm << 48), shift_(shift), ids_(src.strings.size(), kNoStr) {}

  void run() {
    append_gpu_tables();
    const auto& s = src_.api;
    auto& d = dst_.api;
    for (size_t i = 0; i < s.size(); ++i) {
      d.start.push_back(s.start[i] + shift_);
      d.end.push_back(s.end[i] + shift_);
      d.global_tid.push_back(s.global_tid[i] | tag_);
      d.correlation.push_back(s.correlation[i]);
      d.return_value.push_back(s.return_value[i]);
      d.name.push_back(str(s.name[i]));
      d.api_class.push_back(s.api_class[i]);
    }
    const auto& r = src_.ranges;
    auto& dr = dst_.ranges;
    for (size_t i = 0; i < r.size(); ++i) {
      dr.start.push_back(r.start[i] + shift_);
      dr.end.push_back(r.end[i] == kNoTime ? kNoTime : r.end[i] + shift_);
      dr.global_tid.push_back(r.global_tid[i] | tag_);
      dr.end_global_tid.push_back(r.end_global_tid[i]);
      dr.kind.push_back(r.kind[i]);
      dr.text.push_back(str(r.text[i]));
      dr.domain_id.push_back(r.domain_id[i]);
      dr.range_id.push_back(r.range_id[i]);
      dr.row_id.push_back(static_cast<int64_t>(dr.row_id.size()) + 1);
    }
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

  void append_gpu_tables() {
    const auto& k = src_.kernels;
    auto& dk = dst_.kernels;
    const uint32_t kernel_base = static_cast<uint32_t>(dk.size());
    for (size_t i = 0; i < k.size(); ++i) {
      dk.start.push_back(k.start[i] + shift_);
      dk.end.push_back(k.end[i] + shift_);
      dk.global_pid.push_back(k.global_pid[i] | tag_);
      dk.correlation.push_back(k.correlation[i]);
      dk.device.push_back(k.device[i]);
      dk.context.push_back(k.context[i]);
      dk.green_context.push_back(k.green_context[i]);
      dk.stream.push_back(k.stream[i]);
      dk.name.push_back(str(k.name[i]));
      dk.short_name.push_back(str(k.short_name[i]));
      dk.mangled_name.push_back(str(k.mangled_name[i]));
      dk.grid_x.push_back(k.grid_x[i]);
      dk.grid_y.push_back(k.grid_y[i]);
      dk.grid_z.push_back(k.grid_z[i]);
      dk.block_x.push_back(k.block_x[i]);
      dk.block_y.push_back(k.block_y[i]);
      dk.block_z.push_back(k.block_z[i]);
      dk.registers_per_thread.push_back(k.registers_per_thread[i]);
      dk.static_smem.push_back(k.static_smem[i]);
      dk.dynamic_smem.push_back(k.dynamic_smem[i]);
      dk.graph_node_id.push_back(k.graph_node_id[i]);
    }
    const auto& c = src_.pytorch.collectives;
    auto& dc = dst_.pytorch.collectives;
    for (size_t i = 0; i < c.size(); ++i) {
      dc.kernel.push_back(c.kernel[i] + kernel_base);
      dc.collective.push_back(str(c.collective[i]));
      dc.dtype.push_back(str(c.dtype[i]));
      dc.group_name.push_back(str(c.group_name[i]));
      dc.in_nelems.push_back(c.in_nelems[i]);
      dc.out_nelems.push_back(c.out_nelems[i]);
      dc.group_size.push_back(c.group_size[i]);
    }
    const auto& m = src_.memcpys;
    auto& dm = dst_.memcpys;
    for (size_t i = 0; i < m.size(); ++i) {
      dm.start.push_back(m.start[i] + shift_);
      dm.end.push_back(m.end[i] + shift_);
      dm.global_pid.push_back(m.global_pid[i] | tag_);
      dm.correlation.push_back(m.correlation[i]);
      dm.bytes.push_back(m.bytes[i]);
      dm.device.push_back(m.device[i]);
      dm.context.push_back(m.context[i]);
      dm.green_context.push_back(m.green_context[i]);
      dm.stream.push_back(m.stream[i]);
      dm.src_device.push_back(m.src_device[i]);
      dm.dst_device.push_back(m.dst_device[i]);
      dm.copy_kind.push_back(m.copy_kind[i]);
      dm.src_kind.push_back(m.src_kind[i]);
      dm.dst_kind.push_back(m.dst_kind[i]);
    }
    const auto& ms = src_.memsets;
    auto& dms = dst_.memsets;
    for (size_t i = 0; i < ms.size(); ++i) {
      dms.start.push_back(ms.start[i] + shift_);
      dms.end.push_back(ms.end[i] + shift_);
      dms.global_pid.push_back(ms.global_pid[i] | tag_);
      dms.correlation.push_back(ms.correlation[i]);
      dms.bytes.push_back(ms.bytes[i]);
      dms.value.push_back(ms.value[i]);
      dms.device.push_back(ms.device[i]);
      dms.context.push_back(ms.context[i]);
      dms.green_context.push_back(ms.green_context[i]);
      dms.stream.push_back(ms.stream[i]);
      dms.mem_kind.push_back(ms.mem_kind[i]);
    }
    const auto& s = src_.syncs;
    auto& ds = dst_.syncs;
    for (size_t i = 0; i < s.size(); ++i) {
      ds.start.push_back(s.start[i] + shift_);
      ds.end.push_back(s.end[i] + shift_);
      ds.global_pid.push_back(s.global_pid[i] | tag_);
      ds.correlation.push_back(s.correlation[i]);
      ds.event_id.push_back(s.event_id[i]);
      ds.device.push_back(s.device[i]);
      ds.context.push_back(s.context[i]);
      ds.stream.push_back(s.stream[i]);
      ds.sync_type.push_back(s.sync_type[i]);
    }
  }

  void append_pytorch() {
    const auto& sp = src_.pytorch;
    auto& dp = dst_.pytorch;
    const auto& o = sp.ops;
    for (size_t i = 0; i < o.size(); ++i) {
      dp.ops.start.push_back(o.start[i] + shift_);
      dp.ops.end.push_back(o.end[i] + shift_);
      dp.ops.global_tid.push_back(o.global_tid[i] | tag_);
      dp.ops.name.push_back(str(o.name[i]));
      dp.ops.external_id.push_back(o.external_id[i]);
      dp.ops.sequence_number.push_back(o.sequence_number[i]);
      dp.ops.fwd_thread_id.push_back(o.fwd_thread_id[i]);
      dp.ops.input_dims.push_back(str(o.input_dims[i]));
    }
    const auto& g = sp.gpu_annotations;
    for (size_t i = 0; i < g.size(); ++i) {
      dp.gpu_annotations.start.push_back(g.start[i] + shift_);
      dp.gpu_annotations.end.push_back(g.end[i] + shift_);
      dp.gpu_annotations.device.push_back(g.device[i]);
      dp.gpu_annotations.stream.push_back(g.stream[i]);
      dp.gpu_annotations.name.push_back(str(g.name[i]));
      dp.gpu_annotations.external_id.push_back(g.external_id[i]);
    }
    const auto& m = sp.allocator;
    for (size_t i = 0; i < m.size(); ++i) {
      dp.allocator.time.push_back(m.time[i] + shift_);
      dp.allocator.global_tid.push_back(m.global_tid[i] | tag_);
      dp.allocator.address.push_back(m.address[i]);
      dp.allocator.bytes.push_back(m.bytes[i]);
      dp.allocator.total_allocated.push_back(m.total_allocated[i]);
      dp.allocator.total_reserved.push_back(m.total_reserved[i]);
      dp.allocator.device_type.push_back(m.device_type[i]);
      dp.allocator.device_id.push_back(m.device_id[i]);
    }
    const auto& f = sp.forward_backward;
    for (size_t i = 0; i < f.size(); ++i) {
      dp.forward_backward.id.push_back(f.id[i]);
      dp.forward_backward.time.push_back(f.time[i] + shift_);
      dp.forward_backward.global_tid.push_back(f.global_tid[i] | tag_);
      dp.forward_backward.phase.push_back(f.phase[i]);
    }
    dp.event_count += sp.event_count;
    dp.python_function_count += sp.python_function_count;
    dp.flow_count += sp.flow_count;
    dp.warnings.negative_durations += sp.warnings.negative_durations;
    dp.warnings.absurd_durations += sp.warnings.absurd_durations;
    dp.warnings.missing_times += sp.warnings.missing_times;
    dp.warnings.unknown_events += sp.warnings.unknown_events;
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
  }
  merged.source.session_start_utc_ns = merged.pytorch.base_time_ns;
  kineto::sort_by_time(merged);
  kineto::find_steps(merged);
  return merged;
}

}  // namespace tracedoc
