#include "analysis/cross_rank.h"

#include <algorithm>
#include <map>
#include <unordered_map>

#include "analysis/checked_math.h"
#include "analysis/statistics.h"

namespace tracedoc {

bool is_group_collective(std::string_view name) {
  for (std::string_view p2p : {"SendRecv", "_Send", "_Recv"}) {
    if (name.find(p2p) != std::string_view::npos) return false;
  }
  for (std::string_view c :
       {"AllReduce", "AllGather", "ReduceScatter", "Broadcast", "Reduce", "AllToAll", "AlltoAll"}) {
    if (name.find(c) != std::string_view::npos) return true;
  }
  return false;
}

double ComputeBalance::ratio() const {
  return median_ns > 0 ? static_cast<double>(compute_ns[slowest]) / static_cast<double>(median_ns) : 0;
}

ComputeBalance compute_balance(const pytorch::GpuWork& work) {
  std::vector<int64_t> compute;
  for (const pytorch::GpuUnit& u : work.units)
    compute.push_back(u.busy(1u << static_cast<int>(pytorch::WorkClass::kComputation)).total());
  return compute_balance(std::move(compute));
}

ComputeBalance compute_balance(std::vector<int64_t> compute_ns) {
  ComputeBalance b;
  b.compute_ns = std::move(compute_ns);
  for (size_t i = 0; i < b.compute_ns.size(); ++i) {
    if (b.compute_ns[i] > b.compute_ns[b.slowest]) b.slowest = i;
  }
  if (b.compute_ns.empty()) return b;
  b.median_ns = median_ns(b.compute_ns);
  return b;
}

CollectiveStarts collective_starts(const Trace& trace, const pytorch::GpuWork& work) {
  CollectiveStarts starts;
  std::map<StrId, bool> collective;  // decided once per name
  // Kineto's collective arguments say what a kernel is where its name does not (NCCL runs
  // all-to-all as SendRecv kernels): a kernel with them is a group collective unless a send or recv.
  std::unordered_map<uint32_t, bool> by_args;
  const CollectiveTable& args = trace.pytorch.collectives;
  for (size_t i = 0; i < args.size(); ++i) {
    const StrId c = args.collective[i];
    const std::string_view what = c != kNoStr && c < trace.strings.size() ? trace.str(c) : std::string_view();
    if (!what.empty()) by_args[args.kernel[i]] = what != "send" && what != "recv";
  }
  for (size_t u = 0; u < work.units.size(); ++u) {
    for (const pytorch::GpuWorkItem& it : work.units[u].items) {
      if (it.kind != pytorch::WorkKind::kKernel || it.cls != pytorch::WorkClass::kCommunication) continue;
      const StrId name = trace.kernels.name[it.row];
      if (auto a = by_args.find(it.row); a != by_args.end()) {
        if (!a->second) continue;
      } else {
        auto [c, fresh] = collective.try_emplace(name, false);
        if (fresh) c->second = name != kNoStr && name < trace.strings.size() && is_group_collective(trace.str(name));
        if (!c->second) continue;
      }
      const std::string_view text = name != kNoStr && name < trace.strings.size() ? trace.str(name) : "";
      auto at = starts.find(text);
      if (at == starts.end()) at = starts.emplace(std::string(text), std::vector<std::vector<TimeNs>>()).first;
      at->second.resize(work.units.size());
      at->second[u].push_back(it.start);
    }
  }
  return starts;
}

CrossRankSkew collective_skew(const CollectiveStarts& starts, size_t units) {
  CrossRankSkew out;
  out.participants.resize(units);
  for (size_t u = 0; u < units; ++u) out.participants[u].unit = u;
  if (units < 2) return out;
  std::vector<int64_t> all_skews;
  for (const auto& entry : starts) {
    // Named locals, not a structured binding: the lambda below captures per_unit, and clang before
    // 16 (no P1091) cannot capture a structured binding.
    const std::string& name = entry.first;
    const std::vector<std::vector<TimeNs>>& per_unit = entry.second;
    std::vector<size_t> units;
    for (size_t u = 0; u < per_unit.size(); ++u) {
      if (!per_unit[u].empty()) units.push_back(u);
    }
    if (units.size() < 2) continue;
    const size_t n = per_unit[units[0]].size();
    if (std::any_of(units.begin(), units.end(), [&](size_t u) { return per_unit[u].size() != n; })) {
      ++out.unmatched_names;
      continue;
    }
    CollectiveSkew c;
    c.name = name;
    c.participants = static_cast<int64_t>(units.size());
    c.matched = static_cast<int64_t>(n);
    std::vector<int64_t> skews;
    skews.reserve(n);
    for (size_t k = 0; k < n; ++k) {
      TimeNs first = per_unit[units[0]][k], last = first;
      for (size_t u : units) first = std::min(first, per_unit[u][k]), last = std::max(last, per_unit[u][k]);
      const int64_t skew = sat_sub(last, first);
      skews.push_back(skew);
      if (skew > c.max_skew_ns || c.max_skew_at == kNoTime) c.max_skew_ns = skew, c.max_skew_at = first;
      size_t at_last = 0;
      for (size_t u : units) at_last += per_unit[u][k] == last;
      for (size_t u : units) {
        ParticipantSkew& p = out.participants[u];
        ++p.collectives;
        if (at_last == 1 && per_unit[u][k] == last && skew > 0) ++p.last;
        p.late_ns = sat_add(p.late_ns, sat_sub(per_unit[u][k], first));
        const int64_t waited = sat_sub(last, per_unit[u][k]);
        p.wait_ns = sat_add(p.wait_ns, waited);
        c.wait_ns = sat_add(c.wait_ns, waited);
      }
    }
    all_skews.insert(all_skews.end(), skews.begin(), skews.end());
    c.median_skew_ns = median_ns(skews);
    out.matched += c.matched;
    out.collectives.push_back(std::move(c));
  }
  out.median_skew_ns = median_ns(std::move(all_skews));
  std::stable_sort(out.collectives.begin(), out.collectives.end(),
                   [](const CollectiveSkew& a, const CollectiveSkew& b) { return a.wait_ns > b.wait_ns; });
  return out;
}

void add_collective_starts(CollectiveStarts& into, const CollectiveStarts& part, size_t first_unit, size_t units,
                           TimeNs shift) {
  for (const auto& [name, per_unit] : part) {
    auto at = into.find(name);
    if (at == into.end()) at = into.emplace(name, std::vector<std::vector<TimeNs>>()).first;
    at->second.resize(units);
    for (size_t u = 0; u < per_unit.size(); ++u) {
      std::vector<TimeNs>& starts = at->second[first_unit + u];
      starts = per_unit[u];
      for (TimeNs& t : starts) t = sat_add(t, shift);
    }
  }
}

CrossRankSkew collective_skew(const Trace& trace, const pytorch::GpuWork& work) {
  return collective_skew(collective_starts(trace, work), work.units.size());
}

}  // namespace tracedoc
