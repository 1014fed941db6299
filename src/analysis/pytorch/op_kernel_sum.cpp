#include "analysis/checked_math.h"
#include "analysis/pytorch/op_kernel_sum.h"

#include <fmt/format.h>

#include <algorithm>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>

#include "analysis/grouped_values.h"
#include "analysis/statistics.h"
#include "analysis/text_ids.h"
#include "common/flat_hash.h"

namespace tracedoc::pytorch {

// How this differs from Holistic Trace Analysis's get_aten_op_kernels_and_delay (HTA 0.5.0,
// analyzers/cuda_kernel_analysis.py), whose numbers `op_kernel_sum:aten` is closest to:
// - HTA charges a launch to the aten:: operator that starts last among those whose span wraps the
//   whole call, on any thread: a launch from the autograd thread can land on a forward op that the
//   main thread is running at the same time. Here the operator must be on the call's own thread, and
//   "deepest" is the nesting tree's (op_links), so equal start times and µs truncation are settled
//   the way op_sum settles them.
// - HTA filters every aten op against every launch (pandas iterrows over launches), O(launches x
//   ops); here it is one preorder walk plus op_links' sorted merges, O(n log n).
// - HTA only counts calls named cuda*LaunchKernel*, cuLaunchKernel* or runFunction*: no
//   cudaGraphLaunch, no hipLaunchKernel (where none is left, HTA 0.5.0 raises KeyError 'thread_id').
//   Every launching call counts here, a graph launch once per kernel it ran.
// - HTA's rows are (op, sequence of kernels one op call launched) with the count of op calls; the
//   delays are those of each call's first launch, and its launch -> kernel delay runs from the
//   call's start, unclipped. Rows here are (op, kernel) with the count of kernels; every launch
//   gives one op -> launch delay, and launch -> kernel runs from the call's end, clipped at 0 as
//   HTA's own get_cuda_kernel_launch_stats clips it.
// - HTA drops the last ProfilerStep's GPU work when a trace has two or more steps and rounds times
//   to µs; nothing is dropped or rounded here.
// With HTA's launch names and its dropped step applied, the counts per (op, kernel) equal HTA's on
// the shared traces it can read (tests/op_kernel_sum_test.cpp, OpKernelSumHta).

namespace {

constexpr size_t kMaxThreadsShown = 4;

// One (operator, kernel) row while kernels are added.
struct Row {
  StrId op = kNoStr, kernel = kNoStr;  // first kernel's ids, for the label cells
  int64_t count = 0, kernel_total = 0;
  int64_t op_delay_count = 0, op_delay_sum = 0, op_delay_min = 0, op_delay_max = 0;
};

struct ThreadCount {
  uint32_t row, thread;
  int64_t kernels;
};

Result<OpView> view_from_args(const ReportArgs& args) {
  OpView view = OpView::kInnermost;
  int chosen = 0;
  for (const std::string& a : args.args) {
    if (a == "aten") {
      view = OpView::kAten;
    } else if (a == "top") {
      view = OpView::kTop;
    } else {
      return UsageError(fmt::format("op_kernel_sum: unknown argument '{}' (expected aten or top)", a));
    }
    ++chosen;
  }
  if (chosen > 1) return UsageError("op_kernel_sum: give at most one of aten, top");
  return view;
}

// "thread 639 (pt_autograd_0) [autograd]; thread 542 (python3)": the launching threads, most kernels
// first (then by thread id, for a stable cell).
std::string threads_cell(const Trace& trace, std::span<const ThreadCount> counts,
                         const std::vector<uint8_t>& autograd) {
  std::string out;
  for (size_t i = 0; i < counts.size() && i < kMaxThreadsShown; ++i) {
    const ThreadInfo& th = trace.threads[counts[i].thread];
    if (!out.empty()) out += "; ";
    if (th.name != kNoStr) {
      out += trace.str(th.name);
    } else {
      out += fmt::format("tid {}", tid_of(th.global_tid));
    }
    if (autograd[counts[i].thread]) out += " [autograd]";
  }
  if (counts.size() > kMaxThreadsShown) out += fmt::format("; +{} more", counts.size() - kMaxThreadsShown);
  return out;
}

}  // namespace

std::vector<int32_t> charged_operator(const Trace& trace, const OpLinks& links, OpView view) {
  const OpTable& ops = trace.pytorch.ops;
  std::vector<int32_t> charged(ops.size(), kNoRow);
  std::vector<int8_t> aten_name(trace.strings.size(), -1);  // cached "aten::" prefix test per name
  auto is_aten = [&](uint32_t i) {
    const StrId n = ops.name[i];
    if (n == kNoStr || n >= aten_name.size()) return n != kNoStr && trace.str(n).starts_with("aten::");
    if (aten_name[n] < 0) aten_name[n] = trace.str(n).starts_with("aten::") ? 1 : 0;
    return aten_name[n] == 1;
  };
  // links.order is a preorder per thread: a parent's entry is final before its children read it.
  for (uint32_t i : links.order) {
    const int32_t p = links.parent[i];
    switch (view) {
      case OpView::kInnermost: charged[i] = static_cast<int32_t>(i); break;
      case OpView::kAten: charged[i] = is_aten(i) ? static_cast<int32_t>(i) : p == kNoRow ? kNoRow : charged[p]; break;
      case OpView::kTop: charged[i] = p == kNoRow ? static_cast<int32_t>(i) : charged[p]; break;
    }
  }
  return charged;
}

std::vector<uint8_t> autograd_threads(const Trace& trace, const OpLinks& links) {
  const OpTable& ops = trace.pytorch.ops;
  std::unordered_map<int64_t, size_t> row_of;
  for (size_t t = 0; t < trace.threads.size(); ++t) row_of.emplace(trace.threads[t].global_tid, t);
  std::vector<int64_t> backward(trace.threads.size(), 0), forward(trace.threads.size(), 0);
  for (size_t i = 0; i < ops.size(); ++i) {
    if (links.parent[i] != kNoRow || ops.fwd_thread_id[i] == kNoValue) continue;
    auto it = row_of.find(ops.global_tid[i]);
    if (it == row_of.end()) continue;
    ++(ops.fwd_thread_id[i] > 0 ? backward : forward)[it->second];
  }
  std::vector<uint8_t> autograd(trace.threads.size(), 0);
  for (size_t t = 0; t < trace.threads.size(); ++t) {
    const StrId n = trace.threads[t].name;
    const bool named = n != kNoStr && trace.str(n).find("pt_autograd") != std::string_view::npos;
    autograd[t] = named || backward[t] > forward[t] ? 1 : 0;
  }
  return autograd;
}

Status op_kernel_sum(const Trace& trace, const ReportArgs& args, RowSink& sink) {
  TRACEDOC_ASSIGN_OR_RETURN(auto view, view_from_args(args));
  const OpTable& ops = trace.pytorch.ops;
  if (ops.size() == 0) return no_data(trace, "does not contain PyTorch operator data.");
  if (trace.kernels.size() == 0) return no_data(trace, "does not contain CUDA kernel data.");

  const OpLinks links = link_ops(trace);
  const std::vector<int32_t> charged = charged_operator(trace, links, view);
  const std::vector<uint8_t> autograd = autograd_threads(trace, links);
  std::unordered_map<int64_t, uint32_t> thread_row;
  for (size_t t = 0; t < trace.threads.size(); ++t)
    thread_row.emplace(trace.threads[t].global_tid, static_cast<uint32_t>(t));

  const KernelTable& k = trace.kernels;
  const ApiTable& api = trace.api;
  TextIds texts(trace);
  GroupedValues queue;  // launch -> kernel delays, grouped by row
  queue.reserve(k.size());
  std::vector<Row> rows;
  DenseIdMap thread_pairs;  // (row, thread) -> index into pair_kernels
  std::vector<int64_t> pair_kernels;
  // The api_op -> thread lookup is per call, but the thread map is tiny; cache the last one.
  int64_t last_tid = kNoValue;
  uint32_t last_thread = UINT32_MAX;
  for (size_t r = 0; r < k.size(); ++r) {
    const int32_t a = links.launches.of(GpuKind::kKernel, r);
    if (a == kNoRow) continue;
    const int32_t innermost = links.api_op[a];
    const int32_t op = innermost == kNoRow ? kNoRow : charged[innermost];
    const StrId op_name = op == kNoRow ? kNoStr : ops.name[op];
    const uint64_t key = (uint64_t{texts.of(op_name)} << 32) | texts.of(k.name[r]);
    const uint32_t g = queue.group_of(key);
    if (g == rows.size()) rows.push_back({op_name, k.name[r]});
    Row& row = rows[g];
    ++row.count;
    row.kernel_total = sat_add(row.kernel_total, sat_sub(k.end[r], k.start[r]));
    if (op != kNoRow) {
      const int64_t d = sat_sub(api.start[a], ops.start[op]);  // hostile times: no overflow
      row.op_delay_min = row.op_delay_count == 0 ? d : std::min(row.op_delay_min, d);
      row.op_delay_max = row.op_delay_count == 0 ? d : std::max(row.op_delay_max, d);
      ++row.op_delay_count;
      row.op_delay_sum = sat_add(row.op_delay_sum, d);
    }
    queue.add(g, std::max<int64_t>(0, sat_sub(k.start[r], api.end[a])));
    if (api.global_tid[a] != last_tid) {
      last_tid = api.global_tid[a];
      auto it = thread_row.find(last_tid);
      last_thread = it == thread_row.end() ? UINT32_MAX : it->second;
    }
    if (last_thread != UINT32_MAX) {
      const uint32_t p = thread_pairs.id((uint64_t{g} << 32) | last_thread);
      if (p == pair_kernels.size()) pair_kernels.push_back(0);
      ++pair_kernels[p];
    }
  }
  if (rows.empty()) return no_data(trace, "does not contain CUDA kernels launched by a recorded API call.");
  const std::vector<SummaryStats> delays = queue.summarize_all();

  std::vector<ThreadCount> threads;
  threads.reserve(pair_kernels.size());
  for (uint32_t p = 0; p < pair_kernels.size(); ++p) {
    const uint64_t key = thread_pairs.key(p);
    threads.push_back({static_cast<uint32_t>(key >> 32), static_cast<uint32_t>(key), pair_kernels[p]});
  }
  std::sort(threads.begin(), threads.end(), [&](const ThreadCount& x, const ThreadCount& y) {
    if (x.row != y.row) return x.row < y.row;
    if (x.kernels != y.kernels) return x.kernels > y.kernels;
    return trace.threads[x.thread].global_tid < trace.threads[y.thread].global_tid;
  });
  std::vector<size_t> first_thread(rows.size() + 1, threads.size());
  for (size_t i = threads.size(); i-- > 0;) first_thread[threads[i].row] = i;
  for (size_t g = rows.size(); g-- > 0;) first_thread[g] = std::min(first_thread[g], first_thread[g + 1]);

  std::vector<uint32_t> order;
  int64_t grand_total = 0;
  for (uint32_t g = 0; g < rows.size(); ++g) {
    const bool shown = !args.name_filter || (rows[g].op != kNoStr && args.name_ok(trace.str(rows[g].op))) ||
                       args.name_ok(trace.str(rows[g].kernel));
    if (!shown) continue;
    order.push_back(g);
    grand_total += rows[g].kernel_total;
  }
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    const Row& x = rows[a];
    const Row& y = rows[b];
    if (x.kernel_total != y.kernel_total) return x.kernel_total > y.kernel_total;
    if (int c = trace.str(x.op).compare(trace.str(y.op)); c != 0) return c < 0;
    if (int c = trace.str(x.kernel).compare(trace.str(y.kernel)); c != 0) return c < 0;
    return a < b;
  });

  sink.begin({{"Time", Unit::kRatioPct},
              {"Kernel Total", Unit::kDurNs},
              {"Count", Unit::kNone},
              {"Kernel Avg", Unit::kDurNs},
              {"Op To Launch Avg", Unit::kDurNs},
              {"Op To Launch Min", Unit::kDurNs},
              {"Op To Launch Max", Unit::kDurNs},
              {"Launch To Kernel Avg", Unit::kDurNs},
              {"Launch To Kernel Med", Unit::kDurNs},
              {"Launch To Kernel Min", Unit::kDurNs},
              {"Launch To Kernel Max", Unit::kDurNs},
              {"Threads", Unit::kNone},
              {"Operator", Unit::kNone},
              {"Kernel", Unit::kNone}});
  std::vector<Cell> cells;
  std::string thread_text;
  auto avg = [](int64_t sum, int64_t n) {
    return Cell::real(sqlite_round(static_cast<double>(sum) / static_cast<double>(n), 1));
  };
  for (uint32_t g : order) {
    const Row& row = rows[g];
    const SummaryStats& q = delays[g];
    const bool has_op = row.op_delay_count > 0;
    cells.clear();
    cells.push_back(grand_total == 0
                        ? Cell::null()
                        : Cell::real(sqlite_round(
                              static_cast<double>(row.kernel_total) * 100.0 / static_cast<double>(grand_total), 1)));
    cells.push_back(Cell::integer(row.kernel_total));
    cells.push_back(Cell::integer(row.count));
    cells.push_back(avg(row.kernel_total, row.count));
    cells.push_back(has_op ? avg(row.op_delay_sum, row.op_delay_count) : Cell::null());
    cells.push_back(has_op ? Cell::integer(row.op_delay_min) : Cell::null());
    cells.push_back(has_op ? Cell::integer(row.op_delay_max) : Cell::null());
    cells.push_back(avg(q.total, q.count));
    cells.push_back(Cell::real(sqlite_round(q.median, 1)));
    cells.push_back(Cell::integer(q.min));
    cells.push_back(Cell::integer(q.max));
    thread_text = threads_cell(
        trace, std::span(threads).subspan(first_thread[g], first_thread[g + 1] - first_thread[g]), autograd);
    cells.push_back(Cell::text(thread_text));
    cells.push_back(row.op == kNoStr ? Cell::null() : Cell::pooled(trace.str(row.op)));
    cells.push_back(Cell::pooled(trace.str(row.kernel)));
    sink.row(cells);
  }
  sink.end();
  return Status::Ok();
}

}  // namespace tracedoc::pytorch
