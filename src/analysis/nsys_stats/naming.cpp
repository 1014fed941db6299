#include "analysis/nsys_stats/naming.h"

#include <algorithm>

#include "analysis/checked_math.h"
#include "common/task_pool.h"

namespace tracedoc::nsys_stats {

StrId kernel_name(const Trace& trace, size_t i, const ReportArgs& args) {
  const auto& k = trace.kernels;
  if (args.has("base")) return k.short_name[i];
  if (args.has("mangled") && k.mangled_name[i] != kNoStr) return k.mangled_name[i];
  return k.name[i];
}

ColumnSelection kernel_name_columns(const ReportArgs& args) {
  auto columns = ColumnSelection::time_only();
  if (args.has("base")) return columns.select<KernelTable>(&KernelTable::short_name);
  if (args.has("mangled")) columns.select<KernelTable>(&KernelTable::mangled_name);
  return columns.select<KernelTable>(&KernelTable::name);
}

std::string_view strip_api_version(std::string_view name) {
  if (name.size() >= 6 && name[name.size() - 6] == '_' && name[name.size() - 5] == 'v') {
    return name.substr(0, name.size() - 6);
  }
  return name;
}

bool is_pushpop(uint16_t kind) {
  return kind == static_cast<uint16_t>(RangeKind::kNvtxPushPop) ||
         kind == static_cast<uint16_t>(RangeKind::kNvtxtPushPop);
}
bool is_startend(uint16_t kind) {
  return kind == static_cast<uint16_t>(RangeKind::kNvtxStartEnd) ||
         kind == static_cast<uint16_t>(RangeKind::kNvtxtStartEnd);
}
bool is_nvtx_range(uint16_t kind) { return is_pushpop(kind) || is_startend(kind); }

namespace {
constexpr int64_t kPidBits = 0x0000FFFFFF000000;
}

NvtxNamer::NvtxNamer(const Trace& trace) : trace_(trace) {
  const auto& r = trace.ranges;
  // The latest timestamp and the rows that create domains (few), in slices on the task pool; then
  // the domains in row order, as one pass would see them.
  const RowSlices slices(r.size(), size_t{1} << 16);
  struct alignas(64) Slice {
    bool any = false;
    TimeNs latest = 0;
    std::vector<size_t> domain_rows;
  };
  std::vector<Slice> slice(slices.count);
  parallel_for(slices.count, [&](size_t s) {
    Slice& mine = slice[s];
    for (size_t i = slices.begin(s); i < slices.end(s); ++i) {
      for (const TimeNs t : {r.start[i], r.end[i]}) {
        if (t == kNoTime) continue;
        mine.latest = mine.any ? std::max(mine.latest, t) : t;
        mine.any = true;
      }
      if (r.kind[i] == static_cast<uint16_t>(RangeKind::kNvtxDomainCreate) && r.domain_id[i] != kNoValue)
        mine.domain_rows.push_back(i);
    }
  });
  std::map<std::pair<int64_t, int64_t>, TimeNs> first_seen;
  bool any = false;
  for (const Slice& mine : slice) {
    if (mine.any) max_ts_ = any ? std::max(max_ts_, mine.latest) : mine.latest;
    any |= mine.any;
    for (size_t i : mine.domain_rows) {
      auto key = std::make_pair(r.global_tid[i] & kPidBits, r.domain_id[i]);
      auto it = first_seen.find(key);
      if (it == first_seen.end() || r.start[i] < it->second) {
        first_seen[key] = r.start[i];
        domains_[key] = r.text[i];
      }
    }
  }
}

StrId NvtxNamer::domain(size_t i) const {
  if (domains_.empty() || trace_.ranges.domain_id[i] == kNoValue) return kNoStr;
  auto it = domains_.find({trace_.ranges.global_tid[i] & kPidBits, trace_.ranges.domain_id[i]});
  return it == domains_.end() ? kNoStr : it->second;
}

std::string NvtxNamer::tag(size_t i, bool* null) const {
  const StrId text = trace_.ranges.text[i];
  const StrId dom = domain(i);
  if (null) *null = text == kNoStr;
  if (dom != kNoStr) {
    if (text == kNoStr) return {};
    std::string t(trace_.str(dom));
    t += ':';
    t += trace_.str(text);
    return t;
  }
  return std::string(trace_.str(text));
}

TimeNs NvtxNamer::duration(size_t i) const {
  const auto& r = trace_.ranges;
  return duration_until(r.start[i], r.end[i], max_ts_);
}

}  // namespace tracedoc::nsys_stats
