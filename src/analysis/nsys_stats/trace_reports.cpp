#include "analysis/nsys_stats/trace_reports.h"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>
#include <unordered_map>

#include "analysis/checked_math.h"
#include "analysis/nsys_stats/naming.h"
#include "analysis/nsys_stats/nvtx_kernel_names.h"

namespace tracedoc::nsys_stats {

std::vector<uint32_t> order_by_start(const std::vector<TimeNs>& start) {
  std::vector<uint32_t> idx(start.size());
  std::iota(idx.begin(), idx.end(), 0u);
  if (!std::is_sorted(start.begin(), start.end())) {
    std::stable_sort(idx.begin(), idx.end(), [&](uint32_t a, uint32_t b) { return start[a] < start[b]; });
  }
  return idx;
}

namespace {

Cell int_or_null(int64_t v) { return v == kNoValue ? Cell::null() : Cell::integer(v); }

}  // namespace

Status cuda_gpu_trace(const Trace& trace, const ReportArgs& args, RowSink& sink) {
  const auto& src = trace.source;
  const bool has_k = src.has_table("CUPTI_ACTIVITY_KIND_KERNEL");
  const bool has_c = src.has_table("CUPTI_ACTIVITY_KIND_MEMCPY");
  const bool has_s = src.has_table("CUPTI_ACTIVITY_KIND_MEMSET");
  if (!has_k && !has_c && !has_s) return no_data(trace, "does not contain GPU trace data.");
  // nsys builds its kernel view (and checks what nvtx-name needs) only when there are kernels.
  const ReportArgs no_kernel_args;
  TRACEDOC_ASSIGN_OR_RETURN(auto kernel_names, KernelNames::make(trace, has_k ? args : no_kernel_args));

  // Device column: "<gpu name> (<id>)"; without TARGET_INFO_GPU the name is empty, as in nsys's
  // LEFT JOIN ("" || " (0)").
  std::unordered_map<int32_t, std::string> device_names;
  for (const auto& d : trace.devices) device_names[d.id] = std::string(trace.str(d.name));
  std::unordered_map<int32_t, std::string> device_labels;
  auto device_label = [&](int32_t id) -> const std::string& {
    auto it = device_labels.find(id);
    if (it != device_labels.end()) return it->second;
    auto n = device_names.find(id);
    return device_labels[id] = fmt::format("{} ({})", n == device_names.end() ? "" : n->second, id);
  };

  // Merge the three tables by start time (kernels first on ties, then memcpy, then memset).
  struct Ref {
    TimeNs start;
    uint8_t table;
    uint32_t row;
  };
  std::vector<Ref> refs;
  refs.reserve(trace.kernels.size() + trace.memcpys.size() + trace.memsets.size());
  for (uint32_t i = 0; i < trace.kernels.size(); ++i) refs.push_back({trace.kernels.start[i], 0, i});
  for (uint32_t i = 0; i < trace.memcpys.size(); ++i) refs.push_back({trace.memcpys.start[i], 1, i});
  for (uint32_t i = 0; i < trace.memsets.size(); ++i) refs.push_back({trace.memsets.start[i], 2, i});
  std::stable_sort(refs.begin(), refs.end(), [](const Ref& a, const Ref& b) { return a.start < b.start; });

  sink.begin({{"Start", Unit::kTsNs},    {"Duration", Unit::kDurNs},   {"CorrId", Unit::kNone},
              {"GrdX", Unit::kNone},     {"GrdY", Unit::kNone},        {"GrdZ", Unit::kNone},
              {"BlkX", Unit::kNone},     {"BlkY", Unit::kNone},        {"BlkZ", Unit::kNone},
              {"Reg/Trd", Unit::kNone},  {"StcSMem", Unit::kMemB},     {"DymSMem", Unit::kMemB},
              {"Bytes", Unit::kMemB},    {"Throughput", Unit::kThruB}, {"SrcMemKd", Unit::kNone},
              {"DstMemKd", Unit::kNone}, {"Device", Unit::kNone},      {"Ctx", Unit::kNone},
              {"GreenCtx", Unit::kNone}, {"Strm", Unit::kNone},        {"Name", Unit::kNone}});
  std::vector<Cell> row(21);
  std::string names_memcpy[256];
  std::string src_label, dst_label;
  static const std::string kMemset = "[CUDA memset]";
  auto throughput = [](int64_t bytes, int64_t duration) {
    // SQLite integer arithmetic: bytes * (1000000000 / duration), NULL on division by zero (and a
    // real past the int64 range: damaged files hold sizes near 2^63).
    return duration == 0 ? Cell::null() : sql_mul(bytes, 1000000000 / duration);
  };
  auto green = [](int32_t g) { return g == kNoGreen || g == 0 ? Cell::null() : Cell::integer(g); };
  for (const Ref& r : refs) {
    std::fill(row.begin(), row.end(), Cell::null());
    std::string_view name;
    if (r.table == 0) {
      const auto& k = trace.kernels;
      const uint32_t i = r.row;
      name = kernel_names.text(kernel_names.id(i));
      if (!args.name_ok(name)) continue;
      row[0] = Cell::integer(k.start[i]);
      row[1] = sql_sub(k.end[i], k.start[i]);  // no overflow on damaged times (checked_math.h)
      row[2] = int_or_null(k.correlation[i]);
      row[3] = Cell::integer(k.grid_x[i]);
      row[4] = Cell::integer(k.grid_y[i]);
      row[5] = Cell::integer(k.grid_z[i]);
      row[6] = Cell::integer(k.block_x[i]);
      row[7] = Cell::integer(k.block_y[i]);
      row[8] = Cell::integer(k.block_z[i]);
      row[9] = Cell::integer(k.registers_per_thread[i]);
      row[10] = Cell::integer(k.static_smem[i]);
      row[11] = Cell::integer(k.dynamic_smem[i]);
      row[16] = Cell::text(device_label(k.device[i]));
      row[17] = Cell::integer(k.context[i]);
      row[18] = green(k.green_context[i]);
      row[19] = Cell::integer(k.stream[i]);
    } else if (r.table == 1) {
      const auto& m = trace.memcpys;
      const uint32_t i = r.row;
      std::string& n = names_memcpy[m.copy_kind[i]];
      if (n.empty()) n = "[CUDA memcpy " + trace.copy_label(m.copy_kind[i]) + "]";
      name = n;
      if (!args.name_ok(name)) continue;
      const int64_t dur = sat_sub(m.end[i], m.start[i]);  // no overflow on damaged times (checked_math.h)
      row[0] = Cell::integer(m.start[i]);
      row[1] = sql_sub(m.end[i], m.start[i]);
      row[2] = int_or_null(m.correlation[i]);
      row[12] = Cell::integer(m.bytes[i]);
      row[13] = throughput(m.bytes[i], dur);
      src_label = trace.mem_label(m.src_kind[i]);
      dst_label = trace.mem_label(m.dst_kind[i]);
      row[14] = m.src_kind[i] == kNoKind ? Cell::null() : Cell::text(src_label);
      row[15] = m.dst_kind[i] == kNoKind ? Cell::null() : Cell::text(dst_label);
      row[16] = Cell::text(device_label(m.device[i]));
      row[17] = Cell::integer(m.context[i]);
      row[18] = green(m.green_context[i]);
      row[19] = Cell::integer(m.stream[i]);
    } else {
      const auto& s = trace.memsets;
      const uint32_t i = r.row;
      name = kMemset;
      if (!args.name_ok(name)) continue;
      const int64_t dur = sat_sub(s.end[i], s.start[i]);  // no overflow on damaged times (checked_math.h)
      row[0] = Cell::integer(s.start[i]);
      row[1] = sql_sub(s.end[i], s.start[i]);
      row[2] = int_or_null(s.correlation[i]);
      row[12] = Cell::integer(s.bytes[i]);
      row[13] = throughput(s.bytes[i], dur);
      src_label = trace.mem_label(s.mem_kind[i]);
      row[14] = s.mem_kind[i] == kNoKind ? Cell::null() : Cell::text(src_label);
      row[16] = Cell::text(device_label(s.device[i]));
      row[17] = Cell::integer(s.context[i]);
      row[18] = green(s.green_context[i]);
      row[19] = Cell::integer(s.stream[i]);
    }
    row[20] = Cell::text(name);
    sink.row(row);
  }
  sink.end();
  return Status::Ok();
}

Status cuda_api_trace(const Trace& trace, const ReportArgs& args, RowSink& sink) {
  if (!trace.source.has_table("CUPTI_ACTIVITY_KIND_RUNTIME"))
    return no_data(trace, "does not contain CUDA trace data.");
  std::unordered_map<int64_t, const ThreadInfo*> threads;
  for (const auto& t : trace.threads) threads.emplace(t.global_tid, &t);
  const auto& a = trace.api;
  sink.begin({{"Start", Unit::kTsNs},
              {"Duration", Unit::kDurNs},
              {"Name", Unit::kNone},
              {"Result", Unit::kNone},
              {"CorrID", Unit::kNone},
              {"Pid", Unit::kNone},
              {"Tid", Unit::kNone},
              {"T-Pri", Unit::kNone},
              {"Thread Name", Unit::kNone}});
  std::vector<Cell> row(9);
  for (uint32_t i : order_by_start(a.start)) {
    std::string_view name = strip_api_version(trace.str(a.name[i]));
    if (!args.name_ok(name)) continue;
    auto t = threads.find(a.global_tid[i]);
    row[0] = Cell::integer(a.start[i]);
    row[1] = sql_sub(a.end[i], a.start[i]);  // no overflow on damaged times (checked_math.h)
    row[2] = a.name[i] == kNoStr ? Cell::null() : Cell::text(name);
    row[3] = int_or_null(a.return_value[i]);
    row[4] = int_or_null(a.correlation[i]);
    row[5] = Cell::integer(pid_of(a.global_tid[i]));
    row[6] = Cell::integer(tid_of(a.global_tid[i]));
    row[7] = t == threads.end() ? Cell::null() : Cell::integer(t->second->priority);
    row[8] = t == threads.end() || t->second->name == kNoStr ? Cell::null() : Cell::text(trace.str(t->second->name));
    sink.row(row);
  }
  sink.end();
  return Status::Ok();
}

}  // namespace tracedoc::nsys_stats
