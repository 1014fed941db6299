// The host-blocking rules: pageable async copies, synchronous copies and memsets, and
// synchronization calls. Each selects GPU operations (or API calls) by a fixed condition, joins the
// CUDA API call that issued them, and lists the longest first.
//
// Differences from nsys 2023.4.4, on purpose:
//  * The operation -> API call join also requires the same process. nsys joins on the correlation id
//    alone, so in a multi-process export a copy can be listed under another process's call when
//    their ids collide (none of the shared exports has such a collision in a listed row).
//  * Exports without `greenContextId` (nsys 2023.3 and older) are analyzed; nsys refuses them.
//  * cuda_api_sync applies its process= and thread= options, which nsys documents but ignores.
//  * The HIP spellings of the same calls (hipMemcpyAsync, hipStreamSynchronize, ...) are matched
//    too, so the rules work on AMD PyTorch traces; nsys exports never contain them.
#include <algorithm>
#include <functional>
#include <numeric>
#include <string>
#include <tuple>
#include <unordered_map>

#include "analysis/checked_math.h"
#include "analysis/nsys_analyze/rules.h"
#include "analysis/nsys_stats/time_summary.h"

namespace tracedoc::nsys_analyze {

namespace {

// Per string id: does the name match? Computed once per distinct name, not per call.
class NameMatcher {
 public:
  template <typename Pred>
  NameMatcher(const Trace& trace, Pred pred) : trace_(trace), cache_(trace.strings.size(), kUnknown) {
    test_ = [pred](std::string_view s) { return pred(s); };
  }
  bool operator()(StrId id) {
    if (id == kNoStr || id >= cache_.size()) return false;
    if (cache_[id] == kUnknown) cache_[id] = test_(trace_.str(id)) ? kYes : kNo;
    return cache_[id] == kYes;
  }

 private:
  enum : uint8_t { kUnknown, kYes, kNo };
  const Trace& trace_;
  std::vector<uint8_t> cache_;
  std::function<bool(std::string_view)> test_;
};

// The API calls (unfiltered, as nsys joins main.CUPTI_ACTIVITY_KIND_RUNTIME) whose name matches,
// by correlation id, in table order.
using CallIndex = std::unordered_map<int64_t, std::vector<uint32_t>>;
CallIndex index_calls(const Trace& trace, NameMatcher& matches) {
  const ApiTable& api = trace.api_before_filter();
  CallIndex index;
  for (size_t i = 0; i < api.size(); ++i) {
    if (matches(api.name[i])) index[api.correlation[i]].push_back(static_cast<uint32_t>(i));
  }
  return index;
}

struct Hit {
  uint32_t op;    // row of the memcpy / memset
  uint32_t call;  // row of the API call
  int64_t duration;
};

// Longest first; ties in the order of the API calls (SQLite runs nsys's join with the API table as
// the outer loop, and its sort keeps that order among equal keys).
void sort_longest_first(std::vector<Hit>& hits, const RuleArgs& args) {
  std::sort(hits.begin(), hits.end(),
            [](const Hit& a, const Hit& b) { return std::tie(a.call, a.op) < std::tie(b.call, b.op); });
  std::stable_sort(hits.begin(), hits.end(), [](const Hit& a, const Hit& b) { return a.duration > b.duration; });
  if (args.rows > 0 && hits.size() > static_cast<size_t>(args.rows)) hits.resize(static_cast<size_t>(args.rows));
}

template <typename Table, typename Keep>
std::vector<Hit> join_calls(const Trace& trace, const Table& ops, const CallIndex& calls, Keep keep) {
  const ApiTable& api = trace.api_before_filter();
  std::vector<Hit> hits;
  for (size_t i = 0; i < ops.size(); ++i) {
    if (!keep(i)) continue;
    auto it = calls.find(ops.correlation[i]);
    if (it == calls.end()) continue;
    for (uint32_t c : it->second) {
      if (global_pid_of(api.global_tid[c]) != global_pid_of(ops.global_pid[i])) continue;
      hits.push_back({static_cast<uint32_t>(i), c, sat_sub(ops.end[i], ops.start[i])});
    }
  }
  return hits;
}

Cell kind_cell(const Trace& trace, uint8_t kind, std::string& storage) {
  if (kind == kNoKind) return Cell::null();
  storage = trace.mem_label(kind);
  return storage.empty() ? Cell::null() : Cell::text(storage);
}

Cell green_cell(int32_t green) { return green == kNoGreen || green == 0 ? Cell::null() : Cell::integer(green); }

// The columns both copy and memset rules end with: where the operation ran and which call issued it.
const std::vector<ColumnSpec> kWhereColumns = {{"PID"},       {"Device ID"}, {"Context ID"}, {"Green Context ID"},
                                               {"Stream ID"}, {"API Name"}};

template <typename Table>
void push_where_cells(std::vector<Cell>& row, const Trace& trace, const Table& t, const Hit& h) {
  const size_t i = h.op;
  row.push_back(Cell::integer(pid_of(t.global_pid[i])));
  row.push_back(Cell::integer(t.device[i]));
  row.push_back(Cell::integer(t.context[i]));
  row.push_back(green_cell(t.green_context[i]));
  row.push_back(Cell::integer(t.stream[i]));
  row.push_back(Cell::pooled(trace.str(trace.api_before_filter().name[h.call])));
}

std::vector<ColumnSpec> with_where(std::vector<ColumnSpec> first) {
  first.insert(first.end(), kWhereColumns.begin(), kWhereColumns.end());
  return first;
}

Status require(const Trace& trace, const char* table, const char* what) {
  if (trace.source.has_table(table)) return Status::Ok();
  return no_data(trace,
                 std::string("could not be analyzed because it does not contain the required CUDA data. ") + what);
}

Status memcpy_rule(const Trace& trace, const RuleArgs& args, RowSink& sink, bool async) {
  TRACEDOC_RETURN_IF_ERROR(
      require(trace, "CUPTI_ACTIVITY_KIND_RUNTIME", "Does the application use CUDA runtime APIs?"));
  TRACEDOC_RETURN_IF_ERROR(require(trace, "CUPTI_ACTIVITY_KIND_MEMCPY", "Does the application use CUDA memcpy APIs?"));
  NameMatcher matches(trace, [async](std::string_view s) {
    if (async) return sql_like(s, "cudaMemcpy%Async%") || sql_like(s, "hipMemcpy%Async%");
    return (sql_like(s, "cudaMemcpy%") || sql_like(s, "hipMemcpy%")) && !sql_like(s, "%Async%");
  });
  const CallIndex calls = index_calls(trace, matches);
  const MemcpyTable& m = trace.memcpys;
  auto hits = join_calls(trace, m, calls, [&](size_t i) {
    if (async) {
      return m.src_kind[i] == static_cast<uint8_t>(MemKind::kPageable) ||
             m.dst_kind[i] == static_cast<uint8_t>(MemKind::kPageable);
    }
    // NOT (bytes <= 64000 AND copyKind == 1) AND NOT (srcDeviceId IS NOT NULL AND srcDeviceId ==
    // dstDeviceId), with SQL's NULLs: an unknown comparison drops the row.
    const bool small = m.bytes[i] <= 64000;
    if (small && m.copy_kind[i] == kNoKind) return false;
    if (small && m.copy_kind[i] == static_cast<uint8_t>(CopyKind::kHtoD)) return false;
    if (m.src_device[i] != kNoGreen) {
      if (m.dst_device[i] == kNoGreen) return false;
      if (m.src_device[i] == m.dst_device[i]) return false;
    }
    return true;
  });
  sort_longest_first(hits, args);

  sink.begin(with_where(
      {{"Duration", Unit::kDurNs}, {"Start", Unit::kTsNs}, {"Src Kind"}, {"Dst Kind"}, {"Bytes", Unit::kMemB}}));
  std::vector<Cell> row;
  std::string src_label, dst_label;
  for (const Hit& h : hits) {
    const size_t i = h.op;
    row.clear();
    row.push_back(sql_sub(m.end[i], m.start[i]));
    row.push_back(Cell::integer(m.start[i]));
    row.push_back(kind_cell(trace, m.src_kind[i], src_label));
    row.push_back(kind_cell(trace, m.dst_kind[i], dst_label));
    row.push_back(Cell::integer(m.bytes[i]));
    push_where_cells(row, trace, m, h);
    sink.row(row);
  }
  sink.end();
  return Status::Ok();
}

}  // namespace

Status cuda_memcpy_async(const Trace& trace, const RuleArgs& args, RowSink& sink) {
  return memcpy_rule(trace, args, sink, /*async=*/true);
}

Status cuda_memcpy_sync(const Trace& trace, const RuleArgs& args, RowSink& sink) {
  return memcpy_rule(trace, args, sink, /*async=*/false);
}

Status cuda_memset_sync(const Trace& trace, const RuleArgs& args, RowSink& sink) {
  TRACEDOC_RETURN_IF_ERROR(
      require(trace, "CUPTI_ACTIVITY_KIND_RUNTIME", "Does the application use CUDA runtime APIs?"));
  TRACEDOC_RETURN_IF_ERROR(require(trace, "CUPTI_ACTIVITY_KIND_MEMSET", "Does the application use CUDA memset APIs?"));
  NameMatcher matches(trace, [](std::string_view s) {
    return (sql_like(s, "cudaMemset%") || sql_like(s, "hipMemset%")) && !sql_like(s, "%async%");
  });
  const CallIndex calls = index_calls(trace, matches);
  const MemsetTable& m = trace.memsets;
  auto hits = join_calls(trace, m, calls, [&](size_t i) {
    return m.mem_kind[i] == static_cast<uint8_t>(MemKind::kPinned) ||
           m.mem_kind[i] == static_cast<uint8_t>(MemKind::kManaged);
  });
  sort_longest_first(hits, args);

  sink.begin(with_where({{"Duration", Unit::kDurNs}, {"Start", Unit::kTsNs}, {"Memory Kind"}, {"Bytes", Unit::kMemB}}));
  std::vector<Cell> row;
  std::string label;
  for (const Hit& h : hits) {
    const size_t i = h.op;
    row.clear();
    row.push_back(sql_sub(m.end[i], m.start[i]));
    row.push_back(Cell::integer(m.start[i]));
    row.push_back(kind_cell(trace, m.mem_kind[i], label));
    row.push_back(Cell::integer(m.bytes[i]));
    push_where_cells(row, trace, m, h);
    sink.row(row);
  }
  sink.end();
  return Status::Ok();
}

Status cuda_api_sync(const Trace& trace, const RuleArgs& args, RowSink& sink) {
  TRACEDOC_RETURN_IF_ERROR(
      require(trace, "CUPTI_ACTIVITY_KIND_RUNTIME", "Does the application use CUDA runtime APIs?"));
  NameMatcher matches(trace, [](std::string_view s) {
    return sql_like(s, "cudaDeviceSynchronize%") || sql_like(s, "cudaStreamSynchronize%") ||
           sql_like(s, "hipDeviceSynchronize%") || sql_like(s, "hipStreamSynchronize%");
  });
  const ApiTable& api = trace.api;
  std::vector<Hit> hits;
  for (size_t i = 0; i < api.size(); ++i) {
    if (!matches(api.name[i])) continue;
    if (args.process >= 0 && pid_of(api.global_tid[i]) != args.process) continue;
    if (args.thread >= 0 && tid_of(api.global_tid[i]) != args.thread) continue;
    hits.push_back({static_cast<uint32_t>(i), static_cast<uint32_t>(i), sat_sub(api.end[i], api.start[i])});
  }
  sort_longest_first(hits, args);

  sink.begin({{"Duration", Unit::kDurNs}, {"Start", Unit::kTsNs}, {"PID"}, {"TID"}, {"API Name"}});
  std::vector<Cell> row;
  for (const Hit& h : hits) {
    const size_t i = h.op;
    row.clear();
    row.push_back(sql_sub(api.end[i], api.start[i]));
    row.push_back(Cell::integer(api.start[i]));
    row.push_back(Cell::integer(pid_of(api.global_tid[i])));
    row.push_back(Cell::integer(tid_of(api.global_tid[i])));
    row.push_back(Cell::pooled(trace.str(api.name[i])));
    sink.row(row);
  }
  sink.end();
  return Status::Ok();
}

}  // namespace tracedoc::nsys_analyze
