// What the rules comparing a job's ranks read (rules.h JobInputs): each rank's computation and
// communication (straggler) and every kernel's instances (long_tail), gathered from one trace and
// joined rank by rank.
#include <algorithm>
#include <cctype>
#include <map>
#include <tuple>

#include "diagnose/rule_support.h"
#include "diagnose/rules.h"

namespace tracedoc::diagnose {

namespace {

// The order of KernelInstances::longest (and of longest_ranges): longest first, then earliest.
bool longer(const Interval& a, const Interval& b) {
  return a.length() != b.length() ? a.length() > b.length() : a.start < b.start;
}

bool key_less(const KernelInstances& a, const KernelInstances& b) {
  return std::tie(a.name, a.launch) < std::tie(b.name, b.launch);
}

// Collective kernels last as long as the slowest peer takes to arrive: their spread is waiting
// (straggler, exposed_comm), not a property of the kernel, so long_tail leaves them out.
bool is_communication(std::string_view name) {
  std::string prefix(name.substr(0, 4));
  for (char& c : prefix) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return prefix == "nccl" || prefix == "rccl";
}

std::vector<OwnerWork> owner_work(Context& ctx) {
  std::map<int64_t, OwnerWork> owners;
  for (const pytorch::GpuUnit& u : ctx.gpu_work().units) {
    std::vector<Interval> compute, comm;
    for (const pytorch::GpuWorkItem& it : u.items) {
      if (it.cls == pytorch::WorkClass::kComputation) compute.push_back(it.interval());
      if (it.cls == pytorch::WorkClass::kCommunication) comm.push_back(it.interval());
    }
    OwnerWork& w = owners[u.owner];
    w.compute_ns = sat_add(w.compute_ns, IntervalSet::busy_union(std::move(compute)).total());
    w.communication_ns = sat_add(w.communication_ns, IntervalSet::busy_union(std::move(comm)).total());
    if (w.label.empty()) w.label = u.rank >= 0 ? "rank " + std::to_string(u.rank) : ctx.unit_label(u);
  }
  std::vector<OwnerWork> out;
  out.reserve(owners.size());
  for (auto& [owner, w] : owners) out.push_back(std::move(w));
  return out;
}

std::vector<KernelInstances> kernel_instances(const Trace& t) {
  const KernelTable& k = t.kernels;
  std::map<std::tuple<StrId, std::array<int32_t, 6>>, std::vector<uint32_t>> rows;
  std::vector<int8_t> communication(t.strings.size(), -1);
  for (uint32_t r = 0; r < k.size(); ++r) {
    if (k.end[r] <= k.start[r] || k.name[r] == kNoStr || k.name[r] >= communication.size()) continue;
    if (communication[k.name[r]] < 0) communication[k.name[r]] = is_communication(t.str(k.name[r])) ? 1 : 0;
    if (communication[k.name[r]]) continue;
    rows[{k.name[r], {k.grid_x[r], k.grid_y[r], k.grid_z[r], k.block_x[r], k.block_y[r], k.block_z[r]}}].push_back(r);
  }
  std::vector<KernelInstances> out;
  out.reserve(rows.size());
  for (auto& [key, group] : rows) {
    KernelInstances g;
    g.name = std::string(t.str(std::get<0>(key)));
    g.launch = std::get<1>(key);
    std::vector<Interval> all;
    all.reserve(group.size());
    for (uint32_t r : group) all.push_back({k.start[r], k.end[r]});
    for (const Interval& i : all) g.durations.push_back(i.length());
    std::sort(g.durations.begin(), g.durations.end());
    const size_t keep = std::min(all.size(), KernelInstances::kLongestKept);
    std::partial_sort(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(keep), all.end(), longer);
    g.longest.assign(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(keep));
    out.push_back(std::move(g));
  }
  std::sort(out.begin(), out.end(), key_less);
  return out;
}

}  // namespace

JobInputs job_inputs(Context& ctx) { return {owner_work(ctx), kernel_instances(ctx.trace())}; }

void add_job_inputs(JobInputs& into, JobInputs rank) {
  for (OwnerWork& w : rank.owners) into.owners.push_back(std::move(w));
  std::vector<KernelInstances> joined;
  joined.reserve(into.kernels.size() + rank.kernels.size());
  auto a = into.kernels.begin(), b = rank.kernels.begin();
  while (a != into.kernels.end() || b != rank.kernels.end()) {
    if (b == rank.kernels.end() || (a != into.kernels.end() && key_less(*a, *b))) {
      joined.push_back(std::move(*a++));
    } else if (a == into.kernels.end() || key_less(*b, *a)) {
      joined.push_back(std::move(*b++));
    } else {  // the same kernel on both sides
      KernelInstances& g = joined.emplace_back(std::move(*a++));
      const size_t mid = g.durations.size();
      g.durations.insert(g.durations.end(), b->durations.begin(), b->durations.end());
      std::inplace_merge(g.durations.begin(), g.durations.begin() + static_cast<std::ptrdiff_t>(mid),
                         g.durations.end());
      g.longest.insert(g.longest.end(), b->longest.begin(), b->longest.end());
      std::sort(g.longest.begin(), g.longest.end(), longer);
      if (g.longest.size() > KernelInstances::kLongestKept) g.longest.resize(KernelInstances::kLongestKept);
      ++b;
    }
  }
  into.kernels = std::move(joined);
}

}  // namespace tracedoc::diagnose
