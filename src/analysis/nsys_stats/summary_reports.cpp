#include "analysis/nsys_stats/summary_reports.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <unordered_map>

#include "analysis/nsys_stats/naming.h"
#include "analysis/statistics.h"

namespace tracedoc::nsys_stats {

namespace {

// One output row of a summary: its labels, its values in input order, and how it sorts on ties.
struct Group {
  std::vector<std::string> labels;
  std::string tie_text;   // SQLite GROUP BY order for string keys
  int64_t tie_int = 0;    // ... or for integer keys (string ids)
  std::vector<int64_t> values;
  SummaryStats stats;
};

class Groups {
 public:
  // Returns the group for `key`, creating it with `init` the first time.
  Group& get(uint64_t key, const std::function<void(Group&)>& init) {
    auto [it, fresh] = index_.try_emplace(key, groups_.size());
    if (fresh) {
      groups_.emplace_back();
      init(groups_.back());
    }
    return groups_[it->second];
  }
  std::vector<Group>& finish() {
    for (auto& g : groups_) g.stats = summarize(g.values);
    return groups_;
  }
  bool empty() const { return groups_.empty(); }

 private:
  std::unordered_map<uint64_t, size_t> index_;
  std::vector<Group> groups_;
};

enum class Tie { kText, kInt, kCountThenText };

void sort_by_total(std::vector<Group>& groups, Tie tie) {
  std::stable_sort(groups.begin(), groups.end(), [tie](const Group& a, const Group& b) {
    if (a.stats.total != b.stats.total) return a.stats.total > b.stats.total;
    switch (tie) {
      case Tie::kInt: return a.tie_int < b.tie_int;
      case Tie::kText: return a.tie_text < b.tie_text;
      case Tie::kCountThenText:
        if (a.stats.count != b.stats.count) return a.stats.count < b.stats.count;
        return a.tie_text < b.tie_text;
    }
    return false;
  });
}

std::vector<ColumnSpec> time_columns(const char* count_name) {
  return {{"Time", Unit::kRatioPct}, {"Total Time", Unit::kDurNs}, {count_name, Unit::kNone},
          {"Avg", Unit::kDurNs},     {"Med", Unit::kDurNs},        {"Min", Unit::kDurNs},
          {"Max", Unit::kDurNs},     {"StdDev", Unit::kDurNs}};
}

void push_time_stats(std::vector<Cell>& row, const SummaryStats& s, int64_t grand) {
  row.push_back(Cell::real(sqlite_round(static_cast<double>(s.total) * 100.0 / static_cast<double>(grand), 1)));
  row.push_back(Cell::integer(s.total));
  row.push_back(Cell::integer(s.count));
  row.push_back(Cell::real(sqlite_round(s.avg, 1)));
  row.push_back(Cell::real(sqlite_round(s.median, 1)));
  row.push_back(Cell::integer(s.min));
  row.push_back(Cell::integer(s.max));
  row.push_back(Cell::real(sqlite_round(s.stdev, 1)));
}

// Emits a time summary: the 8 statistics columns followed by the label columns.
void emit_time_summary(std::vector<Group>& groups, Tie tie, const char* count_name,
                       const std::vector<std::string>& label_columns, RowSink& sink) {
  sort_by_total(groups, tie);
  int64_t grand = 0;
  for (const auto& g : groups) grand += g.stats.total;
  auto columns = time_columns(count_name);
  for (const auto& l : label_columns) columns.push_back({l, Unit::kNone});
  sink.begin(columns);
  std::vector<Cell> row;
  for (const auto& g : groups) {
    row.clear();
    push_time_stats(row, g.stats, grand);
    for (const auto& l : g.labels) row.push_back(Cell::text(l));
    sink.row(row);
  }
  sink.end();
}

std::string memcpy_name(const Trace& trace, uint8_t kind) {
  return "[CUDA memcpy " + trace.copy_label(kind) + "]";
}

// Kernel summaries group by name (and launch configuration for the _gb_ variant).
Status kernel_summary(const Trace& trace, const ReportArgs& args, RowSink& sink, bool by_config) {
  if (!trace.source.has_table("CUPTI_ACTIVITY_KIND_KERNEL")) return no_data(trace, "does not contain CUDA kernel data.");
  const auto& k = trace.kernels;
  Groups groups;
  std::unordered_map<std::string, uint64_t> config_keys;  // launch configuration -> small id
  for (size_t i = 0; i < k.size(); ++i) {
    const StrId name = kernel_name(trace, i, args);
    if (!args.name_ok(trace.str(name))) continue;
    uint64_t key = name;
    std::string grid, block;
    if (by_config) {
      grid = fmt::format("{:4d} {:4d} {:4d}", k.grid_x[i], k.grid_y[i], k.grid_z[i]);
      block = fmt::format("{:4d} {:4d} {:4d}", k.block_x[i], k.block_y[i], k.block_z[i]);
      auto [it, fresh] = config_keys.try_emplace(grid + "|" + block, config_keys.size());
      key |= it->second << 32;
    }
    Group& g = groups.get(key, [&](Group& ng) {
      ng.tie_text = std::string(trace.str(name));
      if (by_config) ng.labels = {grid, block};
      ng.labels.push_back(ng.tie_text);
    });
    g.values.push_back(k.end[i] - k.start[i]);
  }
  std::vector<std::string> labels = by_config ? std::vector<std::string>{"GridXYZ", "BlockXYZ", "Name"}
                                              : std::vector<std::string>{"Name"};
  emit_time_summary(groups.finish(), Tie::kCountThenText, "Instances", labels, sink);
  return Status::Ok();
}

// Memory operations: memcpy by direction, memset as one row. Calls add(name, duration, bytes).
void for_each_memop(const Trace& trace, const std::function<void(const std::string&, int64_t, int64_t)>& add) {
  std::string names[256];
  const auto& m = trace.memcpys;
  for (size_t i = 0; i < m.size(); ++i) {
    std::string& n = names[m.copy_kind[i]];
    if (n.empty()) n = memcpy_name(trace, m.copy_kind[i]);
    add(n, m.end[i] - m.start[i], m.bytes[i]);
  }
  static const std::string kMemset = "[CUDA memset]";
  const auto& s = trace.memsets;
  for (size_t i = 0; i < s.size(); ++i) add(kMemset, s.end[i] - s.start[i], s.bytes[i]);
}

bool has_memops(const Trace& trace) {
  return trace.source.has_table("CUPTI_ACTIVITY_KIND_MEMCPY") || trace.source.has_table("CUPTI_ACTIVITY_KIND_MEMSET");
}

Status memop_summary(const Trace& trace, const ReportArgs& args, RowSink& sink, bool by_size) {
  if (!has_memops(trace)) return no_data(trace, "does not contain GPU memory data.");
  Groups groups;
  std::unordered_map<std::string, uint64_t> keys;
  for_each_memop(trace, [&](const std::string& name, int64_t duration, int64_t bytes) {
    if (!args.name_ok(name)) return;
    auto [it, fresh] = keys.try_emplace(name, keys.size());
    Group& g = groups.get(it->second, [&](Group& ng) { ng.labels = {name}; ng.tie_text = name; });
    g.values.push_back(by_size ? bytes : duration);
  });
  auto& gs = groups.finish();
  if (!by_size) {
    emit_time_summary(gs, Tie::kText, "Count", {"Operation"}, sink);
    return Status::Ok();
  }
  std::stable_sort(gs.begin(), gs.end(), [](const Group& a, const Group& b) {
    if (a.stats.total != b.stats.total) return a.stats.total > b.stats.total;
    return a.tie_text < b.tie_text;
  });
  sink.begin({{"Total", Unit::kMemB}, {"Count", Unit::kNone}, {"Avg", Unit::kMemB}, {"Med", Unit::kMemB},
              {"Min", Unit::kMemB}, {"Max", Unit::kMemB}, {"StdDev", Unit::kMemB}, {"Operation", Unit::kNone}});
  std::vector<Cell> row;
  for (const auto& g : gs) {
    const auto& s = g.stats;
    row = {Cell::integer(s.total), Cell::integer(s.count), Cell::real(s.avg), Cell::real(s.median),
           Cell::integer(s.min),   Cell::integer(s.max),   Cell::real(s.stdev), Cell::text(g.labels[0])};
    sink.row(row);
  }
  sink.end();
  return Status::Ok();
}

// API-style summaries (CUDA API, OS runtime) group by the name's string id.
template <typename NameFn>
void add_by_name_id(Groups& groups, const Trace& trace, const ReportArgs& args, size_t n,
                    const std::vector<StrId>& name_ids, NameFn display, const std::vector<TimeNs>& start,
                    const std::vector<TimeNs>& end, const std::function<bool(size_t)>& keep) {
  for (size_t i = 0; i < n; ++i) {
    if (keep && !keep(i)) continue;
    const StrId id = name_ids[i];
    std::string_view shown = display(trace.str(id));
    if (!args.name_ok(shown)) continue;
    Group& g = groups.get(id, [&](Group& ng) {
      ng.labels = {std::string(shown)};
      ng.tie_int = id == kNoStr ? -1 : static_cast<int64_t>(id);
    });
    g.values.push_back(end[i] - start[i]);
  }
}

Status nvtx_summary(const Trace& trace, const ReportArgs& args, RowSink& sink, bool pushpop, bool startend,
                    bool style_column) {
  if (!trace.source.has_table("NVTX_EVENTS")) {
    return no_data(trace, "does not contain NV Tools Extension (NVTX) data.");
  }
  const auto& r = trace.ranges;
  NvtxNamer namer(trace);
  Groups groups;
  std::unordered_map<std::string, uint64_t> keys;
  std::map<std::pair<StrId, StrId>, std::string> tag_cache;  // (domain, text) -> tag
  for (size_t i = 0; i < r.size(); ++i) {
    const uint16_t kind = r.kind[i];
    if (!((pushpop && is_pushpop(kind)) || (startend && is_startend(kind)))) continue;
    const StrId dom = namer.domain(i);
    auto [tit, tfresh] = tag_cache.try_emplace({dom, r.text[i]});
    if (tfresh) tit->second = namer.tag(i);
    const std::string& tag = tit->second;
    if (!args.name_ok(tag)) continue;
    const char* style = is_pushpop(kind) ? "PushPop" : "StartEnd";
    std::string key_text = style_column ? tag + '\x1f' + style : tag;
    auto [it, fresh] = keys.try_emplace(key_text, keys.size());
    Group& g = groups.get(it->second, [&](Group& ng) {
      ng.labels = style_column ? std::vector<std::string>{style, tag} : std::vector<std::string>{tag};
      ng.tie_text = key_text;
    });
    g.values.push_back(namer.duration(i));
  }
  std::vector<std::string> labels = style_column ? std::vector<std::string>{"Style", "Range"}
                                                 : std::vector<std::string>{"Range"};
  emit_time_summary(groups.finish(), Tie::kText, "Instances", labels, sink);
  return Status::Ok();
}

// cuda_gpu_sum / cuda_api_gpu_sum: kernels, memory operations (and API calls) in one table.
Status gpu_summary(const Trace& trace, const ReportArgs& args, RowSink& sink, bool with_api) {
  const bool has_kernels = trace.source.has_table("CUPTI_ACTIVITY_KIND_KERNEL");
  const bool has_api = with_api && trace.source.has_table("CUPTI_ACTIVITY_KIND_RUNTIME");
  if (!has_kernels && !has_memops(trace) && !has_api) {
    return no_data(trace, with_api ? "does not contain CUDA API, GPU kernel, nor memory operations data."
                                   : "does not contain GPU kernel/memory operations data.");
  }
  Groups groups;
  std::unordered_map<std::string, uint64_t> keys;
  auto add = [&](std::string_view name, const char* category, int64_t duration) {
    if (!args.name_ok(name)) return;
    auto [it, fresh] = keys.try_emplace(std::string(name), keys.size());
    Group& g = groups.get(it->second, [&](Group& ng) {
      ng.labels = {category, std::string(name)};
      ng.tie_text = std::string(name);
    });
    g.labels[0] = category;  // SQLite reports the category of the group's last row
    g.values.push_back(duration);
  };
  const auto& k = trace.kernels;
  for (size_t i = 0; i < k.size(); ++i) add(trace.str(kernel_name(trace, i, args)), "CUDA_KERNEL", k.end[i] - k.start[i]);
  for_each_memop(trace, [&](const std::string& name, int64_t duration, int64_t) { add(name, "MEMORY_OPER", duration); });
  if (has_api) {
    const auto& a = trace.api;
    for (size_t i = 0; i < a.size(); ++i) add(strip_api_version(trace.str(a.name[i])), "CUDA_API", a.end[i] - a.start[i]);
  }
  emit_time_summary(groups.finish(), Tie::kText, "Instances", {"Category", "Operation"}, sink);
  return Status::Ok();
}

}  // namespace

Status cuda_gpu_kern_sum(const Trace& t, const ReportArgs& a, RowSink& s) { return kernel_summary(t, a, s, false); }
Status cuda_gpu_kern_gb_sum(const Trace& t, const ReportArgs& a, RowSink& s) { return kernel_summary(t, a, s, true); }
Status cuda_gpu_mem_time_sum(const Trace& t, const ReportArgs& a, RowSink& s) { return memop_summary(t, a, s, false); }
Status cuda_gpu_mem_size_sum(const Trace& t, const ReportArgs& a, RowSink& s) { return memop_summary(t, a, s, true); }

Status cuda_api_sum(const Trace& trace, const ReportArgs& args, RowSink& sink) {
  if (!trace.source.has_table("CUPTI_ACTIVITY_KIND_RUNTIME")) return no_data(trace, "does not contain CUDA trace data.");
  Groups groups;
  const auto& a = trace.api;
  add_by_name_id(groups, trace, args, a.size(), a.name, strip_api_version, a.start, a.end, nullptr);
  emit_time_summary(groups.finish(), Tie::kInt, "Num Calls", {"Name"}, sink);
  return Status::Ok();
}

Status osrt_sum(const Trace& trace, const ReportArgs& args, RowSink& sink) {
  if (!trace.source.has_table("OSRT_API")) return no_data(trace, "does not contain OS Runtime trace data.");
  Groups groups;
  const auto& o = trace.os_calls;
  add_by_name_id(groups, trace, args, o.size(), o.name, [](std::string_view s) { return s; }, o.start, o.end,
                 [&](size_t i) { return o.event_class[i] == 27; });
  emit_time_summary(groups.finish(), Tie::kInt, "Num Calls", {"Name"}, sink);
  return Status::Ok();
}

Status nvtx_sum(const Trace& t, const ReportArgs& a, RowSink& s) { return nvtx_summary(t, a, s, true, true, true); }
Status nvtx_pushpop_sum(const Trace& t, const ReportArgs& a, RowSink& s) { return nvtx_summary(t, a, s, true, false, false); }
Status nvtx_startend_sum(const Trace& t, const ReportArgs& a, RowSink& s) { return nvtx_summary(t, a, s, false, true, false); }
Status cuda_gpu_sum(const Trace& t, const ReportArgs& a, RowSink& s) { return gpu_summary(t, a, s, false); }
Status cuda_api_gpu_sum(const Trace& t, const ReportArgs& a, RowSink& s) { return gpu_summary(t, a, s, true); }

}  // namespace tracedoc::nsys_stats
