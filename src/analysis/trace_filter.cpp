#include "analysis/trace_filter.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <map>
#include <string_view>
#include <utility>
#include <vector>

#include "analysis/nsys_stats/naming.h"

namespace tracedoc {

namespace {

// ---------------------------------------------------------------------------------------------
// --filter-time

struct TimeUnit {
  std::string_view name;
  int64_t ns;
};
// nsys takes the first of these that the text after a number starts with: "msec" before "ms", so
// that "1msec" is not "1ms" followed by a stray "ec", and "min" before "m". Case matters.
constexpr TimeUnit kTimeUnits[] = {
    {"nsec", 1},
    {"ns", 1},
    {"usec", 1'000},
    {"us", 1'000},
    {"msec", 1'000'000},
    {"ms", 1'000'000},
    {"min", 60'000'000'000},
    {"m", 60'000'000'000},
    {"sec", 1'000'000'000},
    {"s", 1'000'000'000},
    {"hour", 3'600'000'000'000},
    {"h", 3'600'000'000'000},
};

// double -> int64 as the x86 conversion nsys's binary relies on: truncation toward zero, and the
// "integer indefinite" value INT64_MIN for NaN and anything out of range (C++ leaves that undefined).
int64_t truncate_like_x86(double v) {
  constexpr double kTwoPow63 = 9223372036854775808.0;
  if (!(v >= -kTwoPow63 && v < kTwoPow63)) return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(v);
}

// One side of "START/END": a sum of number+unit terms. Mirrors nsys: a term is read with strtoll,
// and with strtod when strtod reads further (decimals, exponents, hex); both skip leading blanks.
Result<TimeNs> parse_time_sum(const std::string& side, const std::string& whole) {
  auto bad = [&](std::string_view what, size_t at) {
    return UsageError(fmt::format("--filter-time '{}': {} at '{}'", whole, what, side.substr(at)));
  };
  uint64_t total = 0;  // unsigned: terms add with int64 wrap-around, as nsys's do
  size_t pos = 0;
  while (pos < side.size()) {
    const char* term = side.c_str() + pos;
    char* int_end = nullptr;
    errno = 0;
    const long long as_integer = std::strtoll(term, &int_end, 10);
    const bool integer_overflow = errno == ERANGE;
    if (int_end == term) return bad("cannot read a number", pos);
    char* real_end = nullptr;
    errno = 0;
    const double as_real = std::strtod(term, &real_end);
    const bool real_overflow = errno == ERANGE;
    const bool is_real = real_end > int_end;
    if (is_real ? real_overflow : integer_overflow) return bad("number out of range", pos);
    pos = static_cast<size_t>((is_real ? real_end : int_end) - side.c_str());

    int64_t unit_ns = 1;  // a number without unit is in nanoseconds
    if (pos < side.size()) {
      const std::string_view rest = std::string_view(side).substr(pos);
      const TimeUnit* unit = nullptr;
      for (const auto& u : kTimeUnits) {
        if (rest.starts_with(u.name)) {
          unit = &u;
          break;
        }
      }
      if (!unit) return bad("unknown time unit (use ns, us, ms, s, m or h)", pos);
      unit_ns = unit->ns;
      pos += unit->name.size();
    }
    const uint64_t term_ns = is_real ? static_cast<uint64_t>(truncate_like_x86(as_real * static_cast<double>(unit_ns)))
                                     : static_cast<uint64_t>(as_integer) * static_cast<uint64_t>(unit_ns);
    total += term_ns;
  }
  return static_cast<TimeNs>(total);
}

// ---------------------------------------------------------------------------------------------
// --filter-nvtx

// Python's str.isspace() for ASCII, which int() strips around its argument.
bool is_python_space(char c) { return c == ' ' || (c >= '\t' && c <= '\r') || (c >= '\x1c' && c <= '\x1f'); }

// int(text) of Python 3 for base-10 ASCII text: blanks around, an optional sign, digits with single
// underscores between them. nsys reads the index after the last '/' this way.
std::optional<int64_t> python_int(std::string_view text) {
  while (!text.empty() && is_python_space(text.front())) text.remove_prefix(1);
  while (!text.empty() && is_python_space(text.back())) text.remove_suffix(1);
  bool negative = false;
  if (!text.empty() && (text.front() == '+' || text.front() == '-')) {
    negative = text.front() == '-';
    text.remove_prefix(1);
  }
  if (text.empty()) return std::nullopt;
  int64_t value = 0;
  bool previous_was_digit = false;
  for (char c : text) {
    if (c == '_') {
      if (!previous_was_digit) return std::nullopt;  // leading or doubled underscore
      previous_was_digit = false;
      continue;
    }
    if (c < '0' || c > '9') return std::nullopt;
    // Saturate: an index this large matches nothing anyway.
    value = value > (std::numeric_limits<int64_t>::max() - 9) / 10 ? std::numeric_limits<int64_t>::max()
                                                                   : value * 10 + (c - '0');
    previous_was_digit = true;
  }
  if (!previous_was_digit) return std::nullopt;  // trailing underscore
  return negative ? -value : value;
}

// nsys serializes processes as globalTid >> 24 (VM id and pid); SQLite's >> is arithmetic, as C++20's.
int64_t process_key(int64_t global_id) { return global_id >> 24; }

struct NvtxWindow {
  TimeNs start = 0, end = kNoTime;
  int64_t global_tid = kNoValue;
};

// nsysstats.py _FIND_NVTX_RANGE_QUERY: among push/pop and start/end ranges, those whose
// `text || '@' || domain name` (no suffix without a named domain) equals the argument, ordered by
// start; the index-th one. A range whose domain was created twice in its process is listed once per
// creation, as the query's LEFT JOIN lists it.
Result<NvtxWindow> find_nvtx_range(const Trace& trace, const NvtxFilterSpec& spec) {
  const auto& r = trace.ranges;
  const auto not_found = [&] {
    return UsageError(fmt::format("NVTX range '{}' could not be found in {}.", spec.argument, trace.source.path));
  };
  if (trace.source.format == "nsys-sqlite" && !trace.source.has_table("NVTX_EVENTS")) {
    return UsageError(
        fmt::format("--filter-nvtx: {} does not contain NV Tools Extension (NVTX) data.", trace.source.path));
  }

  // Domain names by (process, domain id), from the domain-creation rows, in row order.
  std::map<std::pair<int64_t, int64_t>, std::vector<StrId>> domain_names;
  for (size_t i = 0; i < r.size(); ++i) {
    if (r.kind[i] != static_cast<uint16_t>(RangeKind::kNvtxDomainCreate)) continue;
    if (r.domain_id[i] == kNoValue || r.global_tid[i] == kNoValue) continue;
    domain_names[{process_key(r.global_tid[i]), r.domain_id[i]}].push_back(r.text[i]);
  }

  struct Match {
    TimeNs start;
    size_t row;
  };
  std::vector<Match> matches;
  const std::string_view wanted = spec.name;
  static const std::vector<StrId> kNoDomain = {kNoStr};
  for (size_t i = 0; i < r.size(); ++i) {
    if (!nsys_stats::is_nvtx_range(r.kind[i]) || r.text[i] == kNoStr) continue;  // NULL text never matches
    const std::string_view text = trace.str(r.text[i]);
    if (!wanted.starts_with(text)) continue;
    const std::string_view suffix = wanted.substr(text.size());
    const std::vector<StrId>* domains = &kNoDomain;
    if (r.domain_id[i] != kNoValue && r.global_tid[i] != kNoValue) {
      auto it = domain_names.find({process_key(r.global_tid[i]), r.domain_id[i]});
      if (it != domain_names.end()) domains = &it->second;
    }
    for (StrId domain : *domains) {
      const bool same = domain == kNoStr ? suffix.empty()
                                         : suffix.size() == 1 + trace.str(domain).size() && suffix.front() == '@' &&
                                               suffix.substr(1) == trace.str(domain);
      if (same) matches.push_back({r.start[i], i});
    }
  }
  if (spec.index < 0 || static_cast<uint64_t>(spec.index) >= matches.size()) return not_found();
  // ORDER BY start; equal starts stay in table order.
  std::stable_sort(matches.begin(), matches.end(), [](const Match& a, const Match& b) { return a.start < b.start; });
  const size_t row = matches[static_cast<size_t>(spec.index)].row;
  if (r.end[row] == kNoTime) {
    return UsageError(fmt::format("NVTX range '{}' was never closed, so it defines no time window.", spec.argument));
  }
  return NvtxWindow{r.start[row], r.end[row], r.global_tid[row]};
}

// ---------------------------------------------------------------------------------------------
// Row selection and compaction

// Which rows survive, as nsys's view `WHERE (<overlap>) AND <owner restriction>` decides.
struct RowRule {
  TimeWindow window;
  std::optional<int64_t> owner_tid;  // the NVTX range's globalTid, when rows are restricted to it
  bool same_thread = false;          // restrict globalTid tables to the thread, else to the process
};

// The overlap test of _CREATE_FILTERED_VIEW_QUERY. A NULL (kNoTime) operand makes its comparison
// NULL, which for a WHERE clause of ORed ANDs is the same as false.
bool overlaps(TimeNs start, TimeNs end, const TimeWindow& w) {
  const bool has_start = start != kNoTime, has_end = end != kNoTime;
  return (has_start && start >= w.start && start < w.end) || (has_end && end >= w.start && end < w.end) ||
         (has_start && has_end && start < w.start && end >= w.end);
}

enum class OwnerColumn { kGlobalTid, kGlobalPid };

bool owner_matches(int64_t owner, OwnerColumn column, const RowRule& rule) {
  if (!rule.owner_tid) return true;
  if (owner == kNoValue) return false;  // NULL == x is never true
  if (column == OwnerColumn::kGlobalTid && rule.same_thread) return owner == *rule.owner_tid;
  return process_key(owner) == process_key(*rule.owner_tid);
}

// Filters one table of events that have a start, an end and an owner column (thread or process).
template <typename Table>
void filter_table(Table& table, std::vector<int64_t> Table::*owner, OwnerColumn column, const RowRule& rule) {
  const size_t n = table.size();
  std::vector<uint8_t> keep(n);
  size_t kept = 0;
  const std::vector<int64_t>& owners = table.*owner;
  for (size_t i = 0; i < n; ++i) {
    keep[i] = overlaps(table.start[i], table.end[i], rule.window) && owner_matches(owners[i], column, rule);
    kept += keep[i];
  }
  if (kept != n) keep_rows(table, keep);
}

}  // namespace

Result<TimeWindow> parse_time_window(const std::string& text) {
  const size_t slash = text.find('/');
  if (slash == std::string::npos) {
    return UsageError(fmt::format("--filter-time '{}': expected START/END (either side may be omitted)", text));
  }
  const std::string start_text = text.substr(0, slash), end_text = text.substr(slash + 1);
  if (start_text.empty() && end_text.empty()) {
    return UsageError("--filter-time '/': give at least one of START and END");
  }
  TimeWindow window;
  if (!start_text.empty()) {
    TRACEDOC_ASSIGN_OR_RETURN(auto start, parse_time_sum(start_text, text));
    window.start = start;
  }
  if (!end_text.empty()) {
    TRACEDOC_ASSIGN_OR_RETURN(auto end, parse_time_sum(end_text, text));
    window.end = end;
  }
  if (window.start > window.end) {
    return UsageError(fmt::format("--filter-time '{}': the start time ({} ns) is after the end time ({} ns)", text,
                                  window.start, window.end));
  }
  return window;
}

Result<NvtxFilterSpec> parse_nvtx_filter(const std::string& text) {
  if (text.empty()) return UsageError("--filter-nvtx: give a range name, RANGE[@DOMAIN][/INDEX]");
  NvtxFilterSpec spec;
  spec.argument = text;
  spec.name = text;
  const size_t slash = text.rfind('/');
  if (slash != std::string::npos) {
    auto index = python_int(std::string_view(text).substr(slash + 1));
    if (index && *index >= 0) {
      spec.name = text.substr(0, slash);
      spec.index = *index;
    }
  }
  return spec;
}

Result<TraceFilter> parse_filter(const std::string& time, const std::string& nvtx, bool all_ranks) {
  TraceFilter filter;
  if (!time.empty()) {
    TRACEDOC_ASSIGN_OR_RETURN(auto w, parse_time_window(time));
    filter.window = w;
  }
  if (!nvtx.empty()) {
    TRACEDOC_ASSIGN_OR_RETURN(auto spec, parse_nvtx_filter(nvtx));
    filter.nvtx = spec;
    filter.all_ranks = all_ranks;
  }
  return filter;
}

Status apply_filter(Trace& trace, const TraceFilter& filter) {
  RowRule rule;
  if (filter.nvtx) {
    TRACEDOC_ASSIGN_OR_RETURN(auto range, find_nvtx_range(trace, *filter.nvtx));
    rule.window = {range.start, range.end};
    if (rule.window.start > rule.window.end) {
      return UsageError(fmt::format("NVTX range '{}' ends before it starts.", filter.nvtx->argument));
    }
    if (!filter.all_ranks && range.global_tid != kNoValue) {
      rule.owner_tid = range.global_tid;
      // nsys's test for a push/pop range: a thread other than the process's main one.
      rule.same_thread = pid_of(range.global_tid) != tid_of(range.global_tid);
    }
  } else if (filter.window) {
    rule.window = *filter.window;
  } else {
    return Status::Ok();
  }

  // nvtx-name reads every CUDA API call and NVTX range, as nsys's main.<table> (see trace.h).
  if (!trace.unfiltered_api) trace.unfiltered_api = std::make_shared<const ApiTable>(trace.api);
  if (!trace.unfiltered_ranges) trace.unfiltered_ranges = std::make_shared<const RangeTable>(trace.ranges);
  filter_table(trace.kernels, &KernelTable::global_pid, OwnerColumn::kGlobalPid, rule);
  filter_table(trace.memcpys, &MemcpyTable::global_pid, OwnerColumn::kGlobalPid, rule);
  filter_table(trace.memsets, &MemsetTable::global_pid, OwnerColumn::kGlobalPid, rule);
  filter_table(trace.syncs, &SyncTable::global_pid, OwnerColumn::kGlobalPid, rule);
  filter_table(trace.graph_traces, &GraphTraceTable::global_pid, OwnerColumn::kGlobalPid, rule);
  filter_table(trace.api, &ApiTable::global_tid, OwnerColumn::kGlobalTid, rule);
  filter_table(trace.ranges, &RangeTable::global_tid, OwnerColumn::kGlobalTid, rule);
  filter_table(trace.os_calls, &OsCallTable::global_tid, OwnerColumn::kGlobalTid, rule);
  filter_table(trace.overhead, &OverheadTable::global_tid, OwnerColumn::kGlobalTid, rule);
  filter_table(trace.unified_memory.migrations, &UmMigrationTable::global_pid, OwnerColumn::kGlobalPid, rule);
  filter_table(trace.unified_memory.gpu_faults, &UmGpuPageFaultTable::global_pid, OwnerColumn::kGlobalPid, rule);
  filter_table(trace.openmp, &OpenMpEventTable::global_tid, OwnerColumn::kGlobalTid, rule);
  // No end column, so nsys leaves them unfiltered: trace.memory (CUDA_GPU_MEMORY_USAGE_EVENTS),
  // trace.cuda_events (CUPTI_ACTIVITY_KIND_CUDA_EVENT) and trace.unified_memory.cpu_faults
  // (CUDA_UM_CPU_PAGE_FAULT_EVENTS).
  return Status::Ok();
}

}  // namespace tracedoc
