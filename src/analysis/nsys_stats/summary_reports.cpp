#include "analysis/nsys_stats/summary_reports.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <functional>
#include <map>
#include <numeric>

#include "analysis/grouped_values.h"
#include "analysis/checked_math.h"
#include "analysis/nsys_stats/naming.h"
#include "analysis/nsys_stats/nvtx_kernel_names.h"
#include "analysis/statistics.h"

namespace tracedoc::nsys_stats {

namespace {

// How rows with equal totals are ordered: nsys's SQL sorts on the total only, and SQLite then keeps
// the GROUP BY order (the group key ascending); kernel summaries add explicit tie keys.
enum class Tie { kKeyText, kKeyInt, kCountThenText };

struct SummaryLayout {
  const char* count_name = "Instances";
  std::vector<std::string> label_columns;
  Tie tie = Tie::kKeyText;
};

// label(g, out) appends the label cells of group g; text(g) is the group's name for tie ordering.
using LabelFn = std::function<void(uint32_t, std::vector<Cell>&)>;
using TextFn = std::function<std::string_view(uint32_t)>;

std::vector<uint32_t> output_order(const std::vector<SummaryStats>& stats, Tie tie, const TextFn& text,
                                   const std::function<int64_t(uint32_t)>& int_key) {
  std::vector<uint32_t> order(stats.size());
  std::iota(order.begin(), order.end(), 0u);
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    if (stats[a].total != stats[b].total) return stats[a].total > stats[b].total;
    switch (tie) {
      case Tie::kKeyInt: return int_key(a) < int_key(b);
      case Tie::kKeyText: {
        int c = text(a).compare(text(b));
        return c != 0 ? c < 0 : a < b;
      }
      case Tie::kCountThenText: {
        if (stats[a].count != stats[b].count) return stats[a].count < stats[b].count;
        int c = text(a).compare(text(b));
        if (c != 0) return c < 0;
        return int_key ? int_key(a) < int_key(b) : a < b;  // the rest of the GROUP BY key, if any
      }
    }
    return a < b;
  });
  return order;
}

void emit_time_summary(GroupedValues& groups, const SummaryLayout& layout, const TextFn& text,
                       const std::function<int64_t(uint32_t)>& int_key, const LabelFn& labels, RowSink& sink) {
  const auto stats = groups.summarize_all();
  const auto order = output_order(stats, layout.tie, text, int_key);
  int64_t grand = 0;
  for (const auto& s : stats) grand = sat_add(grand, s.total);  // no overflow on damaged files
  std::vector<ColumnSpec> columns = time_summary_columns(layout.count_name);
  for (const auto& l : layout.label_columns) columns.push_back({l, Unit::kNone});
  sink.begin(columns);
  sink.expect_rows(order.size());
  std::vector<Cell> row;
  for (uint32_t g : order) {
    const SummaryStats& s = stats[g];
    row.clear();
    push_time_summary_cells(row, s, grand);
    labels(g, row);
    sink.row(row);
  }
  sink.end();
}

// Kernel summaries group by name (and launch configuration for the _gb_ variant).
Status kernel_summary(const Trace& trace, const ReportArgs& args, RowSink& sink, bool by_config) {
  if (!trace.source.has_table("CUPTI_ACTIVITY_KIND_KERNEL"))
    return no_data(trace, "does not contain CUDA kernel data.");
  TRACEDOC_ASSIGN_OR_RETURN(auto names_or, KernelNames::make(trace, args));
  const KernelNames& names = names_or;
  const auto& k = trace.kernels;
  GroupedValues groups;
  groups.durations_from(k.start, k.end);
  groups.reserve(k.size());
  std::map<std::array<int32_t, 6>, uint32_t> config_ids;
  std::vector<std::array<int32_t, 6>> configs;
  std::vector<int8_t> name_ok(names.id_bound() + 1, -1);  // cached --filter-name verdict per name
  for (size_t i = 0; i < k.size(); ++i) {
    const StrId name = names.id(i);
    int8_t& ok = name_ok[name == kNoStr ? names.id_bound() : name];
    if (ok < 0) ok = args.name_ok(names.text(name)) ? 1 : 0;
    if (!ok) {
      groups.tag(GroupedValues::kLeftOut);
      continue;
    }
    uint64_t key = name;
    if (by_config) {
      std::array<int32_t, 6> c = {k.grid_x[i], k.grid_y[i], k.grid_z[i], k.block_x[i], k.block_y[i], k.block_z[i]};
      auto [it, fresh] = config_ids.try_emplace(c, static_cast<uint32_t>(configs.size()));
      if (fresh) configs.push_back(c);
      key |= static_cast<uint64_t>(it->second) << 32;
    }
    groups.tag(groups.group_of(key));
  }
  auto name_of = [&](uint32_t g) { return static_cast<StrId>(groups.key(g) & 0xFFFFFFFFu); };
  // Full ties (total, count, name) keep SQLite's GROUP BY order: grid and block ascending.
  std::vector<int64_t> config_rank(configs.size());
  int64_t rank = 0;
  for (const auto& [config, id] : config_ids) config_rank[id] = rank++;
  SummaryLayout layout;
  layout.tie = Tie::kCountThenText;
  layout.label_columns =
      by_config ? std::vector<std::string>{"GridXYZ", "BlockXYZ", "Name"} : std::vector<std::string>{"Name"};
  std::string grid, block;
  emit_time_summary(
      groups, layout, [&](uint32_t g) { return names.text(name_of(g)); },
      by_config ? std::function<int64_t(uint32_t)>([&](uint32_t g) { return config_rank[groups.key(g) >> 32]; })
                : nullptr,
      [&](uint32_t g, std::vector<Cell>& row) {
        if (by_config) {
          const auto& c = configs[groups.key(g) >> 32];
          grid = fmt::format("{:4d} {:4d} {:4d}", c[0], c[1], c[2]);
          block = fmt::format("{:4d} {:4d} {:4d}", c[3], c[4], c[5]);
          row.push_back(Cell::text(grid));
          row.push_back(Cell::text(block));
        }
        row.push_back(names.cell(name_of(g)));
      },
      sink);
  return Status::Ok();
}

bool has_memops(const Trace& trace) {
  return trace.source.has_table("CUPTI_ACTIVITY_KIND_MEMCPY") || trace.source.has_table("CUPTI_ACTIVITY_KIND_MEMSET");
}

// Display names of memory operations, indexed by copy kind; index 256 is the memset row.
constexpr uint32_t kMemsetKey = 256;
std::vector<std::string> memop_names(const Trace& trace) {
  std::vector<std::string> names(kMemsetKey + 1);
  for (uint32_t kind = 0; kind < kMemsetKey; ++kind) {
    names[kind] = "[CUDA memcpy " + trace.copy_label(static_cast<uint8_t>(kind)) + "]";
  }
  names[kMemsetKey] = "[CUDA memset]";
  return names;
}

// Calls add(key, duration, bytes) for every memcpy and memset.
template <typename Add>
void for_each_memop(const Trace& trace, Add&& add) {
  const auto& m = trace.memcpys;
  // sat_sub: no overflow on damaged times (checked_math.h).
  for (size_t i = 0; i < m.size(); ++i) add(uint32_t{m.copy_kind[i]}, sat_sub(m.end[i], m.start[i]), m.bytes[i]);
  const auto& s = trace.memsets;
  for (size_t i = 0; i < s.size(); ++i) add(kMemsetKey, sat_sub(s.end[i], s.start[i]), s.bytes[i]);
}

Status memop_summary(const Trace& trace, const ReportArgs& args, RowSink& sink, bool by_size) {
  if (!has_memops(trace)) return no_data(trace, "does not contain GPU memory data.");
  const auto names = memop_names(trace);
  std::vector<int8_t> keep(names.size());
  for (size_t i = 0; i < names.size(); ++i) keep[i] = args.name_ok(names[i]);
  GroupedValues groups;
  groups.reserve(trace.memcpys.size() + trace.memsets.size());
  for_each_memop(trace, [&](uint32_t key, int64_t duration, int64_t bytes) {
    if (keep[key]) groups.add(groups.group_of(key), by_size ? bytes : duration);
  });
  auto name_of = [&](uint32_t g) -> std::string_view { return names[groups.key(g)]; };
  if (!by_size) {
    SummaryLayout layout;
    layout.count_name = "Count";
    layout.label_columns = {"Operation"};
    emit_time_summary(
        groups, layout, name_of, nullptr,
        [&](uint32_t g, std::vector<Cell>& row) { row.push_back(Cell::text(name_of(g))); }, sink);
    return Status::Ok();
  }
  const auto stats = groups.summarize_all();
  const auto order = output_order(stats, Tie::kKeyText, name_of, nullptr);
  sink.begin({{"Total", Unit::kMemB},
              {"Count", Unit::kNone},
              {"Avg", Unit::kMemB},
              {"Med", Unit::kMemB},
              {"Min", Unit::kMemB},
              {"Max", Unit::kMemB},
              {"StdDev", Unit::kMemB},
              {"Operation", Unit::kNone}});
  std::vector<Cell> row;
  for (uint32_t g : order) {
    const auto& s = stats[g];
    row = {Cell::integer(s.total), Cell::integer(s.count), Cell::real(s.avg),   Cell::real(s.median),
           Cell::integer(s.min),   Cell::integer(s.max),   Cell::real(s.stdev), Cell::text(name_of(g))};
    sink.row(row);
  }
  sink.end();
  return Status::Ok();
}

// API-style summaries (CUDA API, OS runtime) group by the name's string id, which follows the
// export's StringIds order, as nsys's GROUP BY nameId does.
template <typename Table, typename Keep>
Status name_id_summary(const Trace& trace, const ReportArgs& args, RowSink& sink, const Table& t,
                       std::string_view (*display)(std::string_view), Keep keep) {
  GroupedValues groups;
  groups.durations_from(t.start, t.end);
  groups.reserve(t.size());
  std::vector<int8_t> name_ok(trace.strings.size() + 1, -1);
  for (size_t i = 0; i < t.size(); ++i) {
    if (!keep(i)) {
      groups.tag(GroupedValues::kLeftOut);
      continue;
    }
    const StrId id = t.name[i];
    int8_t& ok = name_ok[id == kNoStr ? trace.strings.size() : id];
    if (ok < 0) ok = args.name_ok(display(trace.str(id))) ? 1 : 0;
    groups.tag(ok ? groups.group_of(id) : GroupedValues::kLeftOut);
  }
  SummaryLayout layout;
  layout.count_name = "Num Calls";
  layout.label_columns = {"Name"};
  layout.tie = Tie::kKeyInt;
  emit_time_summary(
      groups, layout, nullptr,
      [&](uint32_t g) { return groups.key(g) == kNoStr ? int64_t{-1} : static_cast<int64_t>(groups.key(g)); },
      [&](uint32_t g, std::vector<Cell>& row) {
        const StrId id = static_cast<StrId>(groups.key(g));
        row.push_back(id == kNoStr ? Cell::null() : Cell::pooled(display(trace.str(id))));
      },
      sink);
  return Status::Ok();
}

std::string_view as_is(std::string_view s) { return s; }

// NVTX group key: bit 63 = StartEnd style, bits 32..62 = domain name id (all ones: none),
// bits 0..31 = text id.
constexpr uint64_t kNoDomainBits = 0x7FFFFFFFu;
uint64_t nvtx_group_key(StrId domain, StrId text, bool startend) {
  const uint64_t d = domain == kNoStr ? kNoDomainBits : (domain & kNoDomainBits);
  return (static_cast<uint64_t>(startend) << 63) | (d << 32) | text;
}

Status nvtx_summary(const Trace& trace, const ReportArgs& args, RowSink& sink, bool pushpop, bool startend,
                    bool style_column) {
  if (!trace.source.has_table("NVTX_EVENTS")) {
    return no_data(trace, "does not contain NV Tools Extension (NVTX) data.");
  }
  const auto& r = trace.ranges;
  NvtxNamer namer(trace);
  GroupedValues groups;
  groups.durations_from(r.start, r.end, namer.max_timestamp());  // as namer.duration
  groups.reserve(r.size());
  // Group key: style bit, domain name id, text id. Tags are only spelled out for output.
  DenseIdMap filter_verdict_ids;
  std::vector<int8_t> filter_verdict;
  // Ranges without a domain (most of them) find their group by text id and style in an array, not
  // by a hash lookup: a few million ranges are grouped here.
  const size_t no_text = trace.strings.size();
  std::vector<uint32_t> group_by_text(2 * (no_text + 1), DenseIdMap::kEmpty);
  auto group_of_range = [&](size_t i) -> uint32_t {
    const uint16_t kind = r.kind[i];
    const bool pp = is_pushpop(kind);
    if (!((pushpop && pp) || (startend && is_startend(kind)))) return GroupedValues::kLeftOut;
    const StrId domain = namer.domain(i);
    const bool startend_style = style_column && !pp;
    const uint64_t key = nvtx_group_key(domain, r.text[i], startend_style);
    if (args.name_filter) {
      uint32_t v = filter_verdict_ids.id(key & ~(uint64_t{1} << 63));
      if (v == filter_verdict.size()) filter_verdict.push_back(args.name_ok(namer.tag(i)) ? 1 : 0);
      if (!filter_verdict[v]) return GroupedValues::kLeftOut;
    }
    if (domain != kNoStr) return groups.group_of(key);
    const size_t text = r.text[i] < no_text ? r.text[i] : no_text;
    uint32_t& known = group_by_text[2 * text + (startend_style ? 1 : 0)];
    if (known == DenseIdMap::kEmpty) known = groups.group_of(key);
    return known;
  };
  for (size_t i = 0; i < r.size(); ++i) groups.tag(group_of_range(i));
  // Spell out tags (domain:text) once per group.
  std::vector<std::string> domain_tags(groups.group_count());
  auto text_id = [&](uint32_t g) { return static_cast<StrId>(groups.key(g) & 0xFFFFFFFFu); };
  auto dom_of = [&](uint32_t g) -> StrId {
    const uint64_t d = (groups.key(g) >> 32) & kNoDomainBits;
    return d == kNoDomainBits ? kNoStr : static_cast<StrId>(d);
  };
  for (uint32_t g = 0; g < groups.group_count(); ++g) {
    const StrId dom = dom_of(g);
    if (dom != kNoStr && text_id(g) != kNoStr) {
      domain_tags[g] = std::string(trace.str(dom)) + ":" + std::string(trace.str(text_id(g)));
    }
  }
  auto tag = [&](uint32_t g) -> std::string_view {
    return dom_of(g) != kNoStr ? std::string_view(domain_tags[g]) : trace.str(text_id(g));
  };
  auto style = [&](uint32_t g) -> std::string_view {
    return (groups.key(g) >> 63) ? "StartEnd" : (style_column ? "PushPop" : "");
  };
  SummaryLayout layout;
  layout.label_columns = style_column ? std::vector<std::string>{"Style", "Range"} : std::vector<std::string>{"Range"};
  // GROUP BY (tag, style): ties in tag order, then style order.
  std::vector<std::string> tie_text;
  auto tie = [&](uint32_t g) -> std::string_view {
    if (tie_text.empty()) {
      tie_text.resize(groups.group_count());
      for (uint32_t x = 0; x < groups.group_count(); ++x) {
        tie_text[x] = std::string(tag(x)) + '\x01' + std::string(style(x));
      }
    }
    return tie_text[g];
  };
  emit_time_summary(
      groups, layout, tie, nullptr,
      [&](uint32_t g, std::vector<Cell>& row) {
        if (style_column) row.push_back(Cell::pooled(style(g)));
        // Tags without a domain are the trace's own strings; domain tags live as long as the report.
        row.push_back(text_id(g) == kNoStr  ? Cell::null()
                      : dom_of(g) == kNoStr ? Cell::pooled(tag(g))
                                            : Cell::text(tag(g)));
      },
      sink);
  return Status::Ok();
}

// cuda_gpu_sum / cuda_api_gpu_sum: kernels, memory operations (and API calls) in one table,
// grouped by the displayed name.
Status gpu_summary(const Trace& trace, const ReportArgs& args, RowSink& sink, bool with_api) {
  const bool has_kernels = trace.source.has_table("CUPTI_ACTIVITY_KIND_KERNEL");
  const bool has_api = with_api && trace.source.has_table("CUPTI_ACTIVITY_KIND_RUNTIME");
  if (!has_kernels && !has_memops(trace) && !has_api) {
    return no_data(trace, with_api ? "does not contain CUDA API, GPU kernel, nor memory operations data."
                                   : "does not contain GPU kernel/memory operations data.");
  }
  // Names are interned into a local pool so equal names from different tables share a group.
  StringPool names;
  std::vector<const char*> category;  // per local name id: category of the group's last row
  std::vector<int8_t> keep;
  GroupedValues groups;
  auto add = [&](uint32_t local, const char* cat, int64_t duration) {
    if (local >= category.size()) {
      category.resize(local + 1, nullptr);
      keep.resize(local + 1, -1);
    }
    if (keep[local] < 0) keep[local] = args.name_ok(names.get(local)) ? 1 : 0;
    if (!keep[local]) return;
    category[local] = cat;  // SQLite reports the category of the group's last row
    groups.add(groups.group_of(local), duration);
  };
  if (has_kernels) {
    // nsys builds its kernel view (and checks what nvtx-name needs) only when there are kernels.
    TRACEDOC_ASSIGN_OR_RETURN(auto kernel_names, KernelNames::make(trace, args));
    std::vector<StrId> local_of(kernel_names.id_bound() + 1, kNoStr);
    const auto& k = trace.kernels;
    for (size_t i = 0; i < k.size(); ++i) {
      const StrId n = kernel_names.id(i);
      StrId& l = local_of[n == kNoStr ? kernel_names.id_bound() : n];
      if (l == kNoStr) l = names.intern(kernel_names.text(n));
      add(l, "CUDA_KERNEL", sat_sub(k.end[i], k.start[i]));  // no overflow on damaged times
    }
  }
  const auto memops = memop_names(trace);
  std::vector<StrId> memop_local(memops.size(), kNoStr);
  for_each_memop(trace, [&](uint32_t key, int64_t duration, int64_t) {
    if (memop_local[key] == kNoStr) memop_local[key] = names.intern(memops[key]);
    add(memop_local[key], "MEMORY_OPER", duration);
  });
  if (has_api) {
    std::vector<StrId> api_local(trace.strings.size() + 1, kNoStr);
    const auto& a = trace.api;
    for (size_t i = 0; i < a.size(); ++i) {
      StrId& l = api_local[a.name[i] == kNoStr ? trace.strings.size() : a.name[i]];
      if (l == kNoStr) l = names.intern(strip_api_version(trace.str(a.name[i])));
      add(l, "CUDA_API", sat_sub(a.end[i], a.start[i]));
    }
  }
  auto name_of = [&](uint32_t g) { return names.get(static_cast<StrId>(groups.key(g))); };
  SummaryLayout layout;
  layout.label_columns = {"Category", "Operation"};
  emit_time_summary(
      groups, layout, name_of, nullptr,
      [&](uint32_t g, std::vector<Cell>& row) {
        row.push_back(Cell::text(category[groups.key(g)]));
        row.push_back(Cell::text(name_of(g)));
      },
      sink);
  return Status::Ok();
}

}  // namespace

Status cuda_gpu_kern_sum(const Trace& t, const ReportArgs& a, RowSink& s) { return kernel_summary(t, a, s, false); }
Status cuda_gpu_kern_gb_sum(const Trace& t, const ReportArgs& a, RowSink& s) { return kernel_summary(t, a, s, true); }
Status cuda_gpu_mem_time_sum(const Trace& t, const ReportArgs& a, RowSink& s) { return memop_summary(t, a, s, false); }
Status cuda_gpu_mem_size_sum(const Trace& t, const ReportArgs& a, RowSink& s) { return memop_summary(t, a, s, true); }

Status cuda_api_sum(const Trace& trace, const ReportArgs& args, RowSink& sink) {
  if (!trace.source.has_table("CUPTI_ACTIVITY_KIND_RUNTIME"))
    return no_data(trace, "does not contain CUDA trace data.");
  return name_id_summary(trace, args, sink, trace.api, strip_api_version, [](size_t) { return true; });
}

Status osrt_sum(const Trace& trace, const ReportArgs& args, RowSink& sink) {
  if (!trace.source.has_table("OSRT_API")) return no_data(trace, "does not contain OS Runtime trace data.");
  const auto& o = trace.os_calls;
  return name_id_summary(trace, args, sink, o, as_is, [&](size_t i) { return o.event_class[i] == 27; });
}

Status nvtx_sum(const Trace& t, const ReportArgs& a, RowSink& s) { return nvtx_summary(t, a, s, true, true, true); }

ColumnSelection kernel_sum_columns(const ReportArgs& args) {
  // :nvtx-name joins each kernel to its launch call and the ranges around it: every column.
  return args.has("nvtx-name") ? ColumnSelection{} : kernel_name_columns(args);
}
ColumnSelection kernel_config_sum_columns(const ReportArgs& args) {
  using K = KernelTable;
  ColumnSelection columns = kernel_sum_columns(args);
  return columns.select<K>(&K::grid_x, &K::grid_y, &K::grid_z, &K::block_x, &K::block_y, &K::block_z);
}
ColumnSelection memop_sum_columns(const ReportArgs&) {  // for_each_memop's
  return ColumnSelection::time_only()
      .select<MemcpyTable>(&MemcpyTable::bytes, &MemcpyTable::copy_kind)
      .select<MemsetTable>(&MemsetTable::bytes);
}
ColumnSelection api_sum_columns(const ReportArgs&) {  // name_id_summary's
  return ColumnSelection::time_only().select<ApiTable>(&ApiTable::name);
}
ColumnSelection osrt_sum_columns(const ReportArgs&) {
  return ColumnSelection::time_only().select<OsCallTable>(&OsCallTable::name, &OsCallTable::event_class);
}
ColumnSelection nvtx_sum_columns(const ReportArgs&) {  // nvtx_summary's and NvtxNamer's
  using R = RangeTable;
  return ColumnSelection::time_only().select<R>(&R::global_tid, &R::kind, &R::text, &R::domain_id);
}
ColumnSelection gpu_sum_columns(const ReportArgs& args) {
  ColumnSelection columns = kernel_sum_columns(args);
  return columns |= memop_sum_columns(args);
}
ColumnSelection api_gpu_sum_columns(const ReportArgs& args) {
  ColumnSelection columns = gpu_sum_columns(args);
  return columns |= api_sum_columns(args);
}
Status nvtx_pushpop_sum(const Trace& t, const ReportArgs& a, RowSink& s) {
  return nvtx_summary(t, a, s, true, false, false);
}
Status nvtx_startend_sum(const Trace& t, const ReportArgs& a, RowSink& s) {
  return nvtx_summary(t, a, s, false, true, false);
}
Status cuda_gpu_sum(const Trace& t, const ReportArgs& a, RowSink& s) { return gpu_summary(t, a, s, false); }
Status cuda_api_gpu_sum(const Trace& t, const ReportArgs& a, RowSink& s) { return gpu_summary(t, a, s, true); }

}  // namespace tracedoc::nsys_stats
