#include "analysis/checked_math.h"
#include "analysis/pytorch/pytorch_reports.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <string_view>
#include <tuple>
#include <unordered_map>

#include "analysis/pytorch/dispatch_overhead.h"
#include "analysis/pytorch/op_links.h"
#include "analysis/text_ids.h"
#include "analysis/statistics.h"
#include "analysis/steps.h"
#include "common/flat_hash.h"

namespace tracedoc::pytorch {

namespace {

struct OpGroup {
  StrId name = kNoStr, dims = kNoStr;  // first row's ids, for the label cells
  int64_t calls = 0, kernels = 0;
  int64_t cpu_total = 0, cpu_self = 0, gpu_total = 0, gpu_self = 0;
};

// Rows in output order: CPU self time descending, then name, then input dims.
std::vector<uint32_t> op_order(const Trace& trace, const std::vector<OpGroup>& groups,
                               const std::vector<uint8_t>& keep) {
  std::vector<uint32_t> order;
  for (uint32_t g = 0; g < groups.size(); ++g) {
    if (keep[g]) order.push_back(g);
  }
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    const OpGroup& x = groups[a];
    const OpGroup& y = groups[b];
    if (x.cpu_self != y.cpu_self) return x.cpu_self > y.cpu_self;
    if (int c = trace.str(x.name).compare(trace.str(y.name)); c != 0) return c < 0;
    if (int c = trace.str(x.dims).compare(trace.str(y.dims)); c != 0) return c < 0;
    return a < b;
  });
  return order;
}

}  // namespace

Status op_sum(const Trace& trace, const ReportArgs& args, RowSink& sink) {
  const OpTable& ops = trace.pytorch.ops;
  if (ops.size() == 0) return no_data(trace, "does not contain PyTorch operator data.");
  const bool by_shapes = args.has("shapes");
  const OpLinks links = link_ops(trace);

  TextIds texts(trace);
  DenseIdMap group_ids;
  std::vector<OpGroup> groups;
  std::vector<uint32_t> group(ops.size());
  for (size_t i = 0; i < ops.size(); ++i) {
    const uint64_t dims = by_shapes ? texts.of(ops.input_dims[i]) : TextIds::kNoText;
    const uint64_t key = (uint64_t{texts.of(ops.name[i])} << 32) | dims;
    const uint32_t g = group_ids.id(key);
    if (g == groups.size()) groups.push_back({ops.name[i], by_shapes ? ops.input_dims[i] : kNoStr});
    group[i] = g;
  }
  const auto nested = nested_in_same_group(links, group, static_cast<uint32_t>(groups.size()));
  for (size_t i = 0; i < ops.size(); ++i) {
    OpGroup& g = groups[group[i]];
    ++g.calls;
    g.kernels += links.kernels_self[i];
    g.cpu_self += links.cpu_self[i];
    g.gpu_self += links.gpu_self[i];
    if (nested[i]) continue;  // its outermost same-row ancestor's totals already hold it
    g.cpu_total += ops.end[i] - ops.start[i];
    g.gpu_total += links.gpu_total[i];
  }

  std::vector<uint8_t> keep(groups.size());
  int64_t grand_self = 0;
  for (size_t g = 0; g < groups.size(); ++g) {
    keep[g] = args.name_ok(trace.str(groups[g].name)) ? 1 : 0;
    if (keep[g]) grand_self += groups[g].cpu_self;
  }

  std::vector<ColumnSpec> columns = {
      {"CPU Time", Unit::kRatioPct}, {"CPU Total", Unit::kDurNs}, {"CPU Self", Unit::kDurNs}, {"Calls", Unit::kNone},
      {"GPU Total", Unit::kDurNs},   {"GPU Self", Unit::kDurNs},  {"Kernels", Unit::kNone}};
  if (by_shapes) columns.push_back({"Input Dims", Unit::kNone});
  columns.push_back({"Operator", Unit::kNone});
  sink.begin(columns);
  std::vector<Cell> row;
  for (uint32_t gi : op_order(trace, groups, keep)) {
    const OpGroup& g = groups[gi];
    row.clear();
    row.push_back(grand_self == 0 ? Cell::null()
                                  : Cell::real(sqlite_round(
                                        static_cast<double>(g.cpu_self) * 100.0 / static_cast<double>(grand_self), 1)));
    row.push_back(Cell::integer(g.cpu_total));
    row.push_back(Cell::integer(g.cpu_self));
    row.push_back(Cell::integer(g.calls));
    row.push_back(Cell::integer(g.gpu_total));
    row.push_back(Cell::integer(g.gpu_self));
    row.push_back(Cell::integer(g.kernels));
    if (by_shapes) row.push_back(g.dims == kNoStr ? Cell::null() : Cell::pooled(trace.str(g.dims)));
    row.push_back(Cell::pooled(trace.str(g.name)));
    sink.row(row);
  }
  sink.end();
  return Status::Ok();
}

Status op_dispatch_sum(const Trace& trace, const ReportArgs& args, RowSink& sink) {
  if (trace.pytorch.ops.size() == 0) return no_data(trace, "does not contain PyTorch operator data.");
  const DispatchOverhead d = dispatch_overhead(trace, link_ops(trace));
  int64_t grand = 0;
  for (const DispatchGroup& g : d.ops) {
    if (args.name_ok(trace.str(g.name))) grand = sat_add(grand, g.framework);
  }
  sink.begin({{"Framework Time", Unit::kRatioPct},
              {"Framework Time", Unit::kDurNs},
              {"Calls", Unit::kNone},
              {"CPU Self", Unit::kDurNs},
              {"CUDA API", Unit::kDurNs},
              {"GPU Self", Unit::kDurNs},
              {"Kernels", Unit::kNone},
              {"Framework/Kernel", Unit::kDurNs},
              {"Operator", Unit::kNone}});
  std::vector<Cell> row;
  for (const DispatchGroup& g : d.ops) {
    const std::string_view name = trace.str(g.name);
    if (!args.name_ok(name)) continue;
    row.clear();
    row.push_back(grand == 0 ? Cell::null()
                             : Cell::real(sqlite_round(
                                   static_cast<double>(g.framework) * 100.0 / static_cast<double>(grand), 1)));
    for (int64_t v : {g.framework, g.calls, g.cpu_self, g.api, g.gpu_self, g.kernels}) row.push_back(Cell::integer(v));
    row.push_back(g.kernels == 0
                      ? Cell::null()
                      : Cell::real(sqlite_round(static_cast<double>(g.framework) / static_cast<double>(g.kernels), 1)));
    row.push_back(Cell::pooled(name));
    sink.row(row);
  }
  sink.end();
  return Status::Ok();
}

Status step_sum(const Trace& trace, const ReportArgs& args, RowSink& sink) {
  TRACEDOC_ASSIGN_OR_RETURN(auto options, step_options_from_args(args.args));
  const GpuLaunches launches = link_gpu_launches(trace);
  auto found = find_steps(trace, options, &launches);
  if (!found.ok()) {
    if (found.status().code() != ErrorCode::kNoData) return found.status();
    return no_data(trace, options.marker.empty()
                              ? "does not contain ProfilerStep ranges, and no repeating kernel sequence was found."
                              : found.status().message());
  }
  const std::vector<StepWindow>& steps = found->steps;
  const std::vector<StepGpuWork> gpu = gpu_work_per_step(trace, steps, &launches);

  sink.begin({{"Rank", Unit::kNone},
              {"Step", Unit::kNone},
              {"CPU Start", Unit::kTsNs},
              {"CPU Duration", Unit::kDurNs},
              {"GPU Start", Unit::kTsNs},
              {"GPU End", Unit::kTsNs},
              {"GPU Span", Unit::kDurNs},
              {"GPU Busy", Unit::kDurNs},
              {"Kernels", Unit::kNone},
              {"Name", Unit::kNone}});
  std::vector<Cell> row;
  std::string detected_name;
  for (size_t s = 0; s < steps.size(); ++s) {
    const StepWindow& w = steps[s];
    std::string_view name;
    if (w.name != kNoStr) {
      name = trace.str(w.name);
    } else {
      detected_name = fmt::format("step#{} (detected)", w.number);
      name = detected_name;
    }
    if (!args.name_ok(name)) continue;
    const StepGpuWork& g = gpu[s];
    const bool any = g.start != kNoTime;
    row.clear();
    const int64_t rank = trace.rank_of(w.global_pid);
    row.push_back(rank < 0 ? Cell::null() : Cell::integer(rank));
    row.push_back(w.number == kNoValue ? Cell::null() : Cell::integer(w.number));
    row.push_back(Cell::integer(w.start));
    row.push_back(Cell::integer(sat_sub(w.end, w.start)));
    row.push_back(any ? Cell::integer(g.start) : Cell::null());
    row.push_back(any ? Cell::integer(g.end) : Cell::null());
    row.push_back(any ? Cell::integer(sat_sub(g.end, g.start)) : Cell::null());
    row.push_back(any ? Cell::integer(g.busy) : Cell::null());
    row.push_back(Cell::integer(g.kernels));
    row.push_back(w.name != kNoStr ? Cell::pooled(name) : Cell::text(name));
    sink.row(row);
  }
  sink.end();
  return Status::Ok();
}

}  // namespace tracedoc::pytorch
