#include "analysis/ncu_join.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <map>
#include <tuple>

namespace tracedoc {

namespace {

using Shape = std::array<int64_t, 6>;  // grid x y z, block x y z
using Key = std::pair<std::string, Shape>;

// The timeline's kernel rows of each identity, by start time (rows in time order).
struct Identities {
  std::map<Key, std::vector<int64_t>> by_mangled, by_name;
};

Identities timeline_identities(const Trace& trace) {
  const KernelTable& k = trace.kernels;
  std::vector<int64_t> rows(k.size());
  for (size_t i = 0; i < rows.size(); ++i) rows[i] = static_cast<int64_t>(i);
  std::stable_sort(rows.begin(), rows.end(), [&](int64_t a, int64_t b) { return k.start[a] < k.start[b]; });
  Identities ids;
  std::map<StrId, std::string> normalised;  // names repeat: normalise each once
  for (int64_t r : rows) {
    const Shape shape{k.grid_x[r], k.grid_y[r], k.grid_z[r], k.block_x[r], k.block_y[r], k.block_z[r]};
    if (k.mangled_name[r] != kNoStr && !trace.str(k.mangled_name[r]).empty())
      ids.by_mangled[{std::string(trace.str(k.mangled_name[r])), shape}].push_back(r);
    if (k.name[r] == kNoStr) continue;
    auto [it, fresh] = normalised.try_emplace(k.name[r]);
    if (fresh) it->second = normalised_kernel_name(trace.str(k.name[r]));
    ids.by_name[{it->second, shape}].push_back(r);
  }
  return ids;
}

Shape shape_of(const NcuResult& r) {
  Shape s{};
  for (size_t i = 0; i < 3; ++i) s[i] = static_cast<int64_t>(r.grid[i]), s[3 + i] = static_cast<int64_t>(r.block[i]);
  return s;
}

}  // namespace

std::string normalised_kernel_name(std::string_view demangled) {
  std::string out;
  out.reserve(demangled.size());
  for (char c : demangled) {
    if (!std::isspace(static_cast<unsigned char>(c))) out.push_back(c);
  }
  return out;
}

std::map<std::string_view, NcuLaunchRef> launch_by_name(const Trace& trace, const std::vector<NcuLaunchRef>& per_row) {
  std::map<std::string_view, NcuLaunchRef> out;
  for (size_t row = 0; row < per_row.size(); ++row) {
    if (per_row[row]) out.try_emplace(trace.str(trace.kernels.name[row]), per_row[row]);
  }
  return out;
}

NcuJoin join_ncu(const Trace& trace) {
  NcuJoin join;
  if (trace.ncu_reports.empty()) return join;
  join.launch_of.assign(trace.kernels.size(), {});
  const Identities ids = timeline_identities(trace);
  for (size_t rep = 0; rep < trace.ncu_reports.size(); ++rep) {
    const NcuReport& report = *trace.ncu_reports[rep];
    std::vector<int64_t>& kernel_of = join.kernel_of.emplace_back(report.results.size(), -1);
    std::map<const std::vector<int64_t>*, size_t> taken;  // per identity: launches of it matched so far
    for (size_t i = 0; i < report.results.size(); ++i) {
      const NcuResult& r = report.results[i];
      ++join.launches;
      const std::vector<int64_t>* rows = nullptr;
      if (!r.mangled_name.empty()) {
        auto it = ids.by_mangled.find({r.mangled_name, shape_of(r)});
        if (it != ids.by_mangled.end()) rows = &it->second;
      }
      if (rows == nullptr) {
        const std::string& name = r.demangled_name.empty() ? r.function_name : r.demangled_name;
        auto it = ids.by_name.find({normalised_kernel_name(name), shape_of(r)});
        if (it != ids.by_name.end()) rows = &it->second;
      }
      if (rows == nullptr) continue;
      size_t& k = taken[rows];
      if (k >= rows->size()) continue;  // more launches profiled than the timeline ran
      const int64_t row = (*rows)[k++];
      kernel_of[i] = row;
      if (!join.launch_of[static_cast<size_t>(row)])  // two reports of one kernel: the first stands
        join.launch_of[static_cast<size_t>(row)] = {static_cast<int32_t>(rep), static_cast<int32_t>(i)};
      ++join.matched;
    }
  }
  // Unmatched instances take the answers of their identity's first matched instance (by time).
  join.answered_by = join.launch_of;
  for (const auto* identities : {&ids.by_mangled, &ids.by_name}) {
    for (const auto& [key, rows] : *identities) {
      NcuLaunchRef first;
      for (int64_t row : rows) {
        if (join.launch_of[static_cast<size_t>(row)]) {
          first = join.launch_of[static_cast<size_t>(row)];
          break;
        }
      }
      if (!first) continue;
      for (int64_t row : rows) {
        if (!join.answered_by[static_cast<size_t>(row)]) join.answered_by[static_cast<size_t>(row)] = first;
      }
    }
  }
  return join;
}

}  // namespace tracedoc
