// Rules on the host side of the GPU: synchronizing calls that drain the GPU's queue (sync_stall),
// OS waits of the launching threads (host_waits), copies that take the step (memcpy_heavy), copies
// from pageable memory (pageable_memcpy).
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <unordered_set>

#include "analysis/cpu_samples.h"
#include "analysis/cpu_threads.h"
#include "analysis/host_link.h"
#include "diagnose/rule_support.h"
#include "diagnose/rules.h"

namespace tracedoc::diagnose {

namespace {

// Calls that return only when the GPU (or a stream, an event) has caught up, synchronous copies
// included (they wait for the stream before copying).
bool is_blocking_call(std::string_view name) {
  if (is_sync_call(name)) return true;
  const std::string_view n = pytorch::api_base_name(name);
  for (std::string_view c :
       {"cudaMemcpy", "cudaMemcpy2D", "cudaMemcpy3D", "cudaMemcpyToSymbol", "cudaMemcpyFromSymbol", "cuMemcpy",
        "cuMemcpyDtoH", "cuMemcpyHtoD", "hipMemcpy", "hipMemcpyDtoH", "hipMemcpyHtoD"}) {
    if (n == c) return true;
  }
  return false;
}

// The host side of a copy that crosses the host link: its source for uploads, its destination for
// downloads; kNoKind otherwise.
uint8_t host_side(const MemcpyTable& m, size_t row) {
  const auto kind = static_cast<CopyKind>(m.copy_kind[row]);
  if (kind == CopyKind::kHtoD || kind == CopyKind::kHtoA) return m.src_kind[row];
  if (kind == CopyKind::kDtoH || kind == CopyKind::kAtoH) return m.dst_kind[row];
  return kNoKind;
}

// Time from t to the start of the next busy stretch (0 when t is inside one or nothing follows).
int64_t idle_after(const IntervalSet& busy, TimeNs t) {
  const auto v = busy.intervals();
  auto it = std::upper_bound(v.begin(), v.end(), t, [](TimeNs x, const Interval& i) { return x < i.start; });
  if (it != v.begin() && std::prev(it)->end > t) return 0;  // still busy at t
  if (it == v.end()) return 0;
  return sat_sub(it->start, t);
}

}  // namespace

void sync_stall(Context& ctx, const Params& p, std::vector<Finding>& out) {
  const Trace& t = ctx.trace();
  const int64_t max_bubble = static_cast<int64_t>(p.get("max_bubble_ns"));
  std::map<int64_t, IntervalSet> busy;  // per owner
  std::vector<int8_t> blocking(t.strings.size(), -1);
  struct Site {
    int64_t calls = 0, blocked = 0, bubble = 0;
  };
  std::map<int64_t, std::map<std::string, Site>> sites;  // owner -> "call in site" -> totals
  std::map<int64_t, std::vector<Interval>> bubbles;
  for (size_t a = 0; a < t.api.size(); ++a) {
    const StrId name = t.api.name[a];
    if (name == kNoStr || name >= blocking.size()) continue;
    if (blocking[name] < 0) blocking[name] = is_blocking_call(t.str(name)) ? 1 : 0;
    if (!blocking[name]) continue;
    const int64_t owner = ctx.owner_of(t.api.global_tid[a]);
    auto b = busy.find(owner);
    if (b == busy.end()) b = busy.emplace(owner, ctx.owner_busy(owner)).first;
    if (b->second.empty()) continue;  // no GPU work in this process
    // What the call cost the GPU: the idle time after it, but no more than the GPU work the call
    // waited for (busy time during the call). Without the wait the CPU would have launched the
    // next work that much earlier and no more; a call on an idle GPU (the queue already drained by
    // slow launches, or a final synchronize) waits for nothing and stalls nothing.
    const int64_t waited = b->second.covered_within(Interval{t.api.start[a], t.api.end[a]});
    const int64_t bubble = std::min({idle_after(b->second, t.api.end[a]), waited, max_bubble});
    const std::string site = ctx.call_site(a);
    // With CUDA call stacks (nsys --cudabacktrace), the code that made the call too.
    const std::string from =
        t.api.stack.empty() || t.api.stack[a] == kNoStack ? std::string() : stack_call_site(t, t.api.stack[a]);
    Site& s = sites[owner][fmt::format("{}{}{}", pytorch::api_base_name(t.str(name)), site.empty() ? "" : " in " + site,
                                       from.empty() ? "" : " from " + from)];
    ++s.calls;
    s.blocked = sat_add(s.blocked, sat_sub(t.api.end[a], t.api.start[a]));
    s.bubble = sat_add(s.bubble, bubble);
    if (bubble > 0) bubbles[owner].push_back({t.api.end[a], sat_add(t.api.end[a], bubble)});
  }
  for (auto& [owner, by_site] : sites) {
    Finding f;
    int64_t calls = 0, blocked = 0;
    for (const auto& [name, s] : by_site) {
      calls += s.calls;
      blocked = sat_add(blocked, s.blocked);
      f.offenders.push_back({name, s.calls, s.bubble, fmt::format("host blocked {}", human_duration(s.blocked))});
    }
    // Calls on several threads can end together: their idle stretches count once.
    f.savings_ns = IntervalSet::busy_union(bubbles[owner]).total();
    rate(f, ctx, p.warning(), p.critical());
    if (!gate_on_basis(f, ctx, 0, p.get("min_share"), true)) continue;
    keep_top(f.offenders, 5);
    f.scope = ctx.owner_label(owner);
    const int64_t steps = ctx.steps() ? static_cast<int64_t>(ctx.windows_of(owner).size()) : 0;
    f.title = fmt::format(
        "{} synchronizing calls{} stall the GPU: it idles {} after them ({} of the {})", calls,
        steps > 0 ? fmt::format(" ({:.1f} per step)", static_cast<double>(calls) / static_cast<double>(steps)) : "",
        human_duration(f.savings_ns), human_percent(f.savings_share), ctx.steps() ? "steps" : "run");
    f.confidence = 0.8;
    f.figures = {{"calls", static_cast<double>(calls), "count"},
                 {"host_blocked_ns", static_cast<double>(blocked), "ns"},
                 {"gpu_idle_after_ns", static_cast<double>(f.savings_ns), "ns"}};
    f.ranges = longest_ranges(bubbles[owner], 3, f.scope, "GPU idle after a synchronizing call");
    f.remedy =
        "Each synchronization empties the GPU's queue, and the GPU then waits while the CPU launches "
        "again. Remove .item(), .cpu(), .tolist(), print() of GPU tensors and torch.cuda.synchronize() "
        "from the loop (log every N steps instead), use non_blocking=True copies with pinned memory, "
        "record CUDA events instead of synchronizing, and avoid data-dependent shapes (nonzero, "
        "boolean masks) in the hot path.";
    out.push_back(std::move(f));
  }
}

// The threads that launch GPU work (those that make CUDA/HIP API calls) blocked in the OS while
// their process's GPUs have nothing to do: the GPU time lost to lock waits (on a Python process
// mostly the GIL), to waiting for data (polls and reads on DataLoader queues, files, sockets) and
// to sleeps. Needs OS runtime calls (nsys --trace osrt, tracedoc capture --trace osrt-lite).
void host_waits(Context& ctx, const Params& p, std::vector<Finding>& out) {
  const Trace& t = ctx.trace();
  const OsCallTable& os = t.os_calls;
  if (os.size() == 0) return;
  const std::unordered_set<int64_t> launchers = launching_threads(t);
  struct Wait {
    int64_t calls = 0, wait_ns = 0, idle_ns = 0;
    OsWait kind = OsWait::kNone;
    std::map<StackId, int64_t> idle_by_stack;  // with OS call stacks (nsys --osrt-backtrace-*)
  };
  struct OwnerWaits {
    IntervalSet busy;
    std::vector<Interval> windows;
    std::map<std::string, Wait> by_call;
    std::vector<Interval> idle;
    int64_t idle_by_kind[4] = {0, 0, 0, 0};
  };
  std::map<int64_t, OwnerWaits> owners;
  std::vector<int8_t> kind_of(t.strings.size(), -1);
  for (size_t i = 0; i < os.size(); ++i) {
    if (os.nesting_level[i] != 0 || os.start[i] == kNoTime || os.end[i] == kNoTime || os.end[i] <= os.start[i])
      continue;
    const StrId name = os.name[i];
    if (name == kNoStr || name >= kind_of.size() || !launchers.count(os.global_tid[i])) continue;
    if (kind_of[name] < 0) kind_of[name] = static_cast<int8_t>(os_wait_kind(t.str(name)));
    const auto kind = static_cast<OsWait>(kind_of[name]);
    if (kind == OsWait::kNone) continue;
    const int64_t owner = ctx.owner_of(os.global_tid[i]);
    auto it = owners.find(owner);
    if (it == owners.end()) {
      OwnerWaits w;
      w.busy = ctx.owner_busy(owner);
      if (!w.busy.empty()) w.windows = ctx.steps() ? ctx.windows_of(owner) : std::vector<Interval>{w.busy.span()};
      it = owners.emplace(owner, std::move(w)).first;
    }
    OwnerWaits& w = it->second;
    if (w.busy.empty()) continue;  // no GPU work in this process
    Wait& call = w.by_call[std::string(t.str(name))];
    ++call.calls;
    call.kind = kind;
    call.wait_ns = sat_add(call.wait_ns, sat_sub(os.end[i], os.start[i]));
    // The GPU's idle time inside the call, counted inside the time basis only.
    const Interval span{os.start[i], os.end[i]};
    const int64_t idle_before = call.idle_ns;
    for (const Interval& g : idle_within(w.busy, {span})) {
      for (const Interval& win : w.windows) {
        const Interval part{std::max(g.start, win.start), std::min(g.end, win.end)};
        if (part.end <= part.start) continue;
        call.idle_ns = sat_add(call.idle_ns, part.length());
        w.idle_by_kind[static_cast<int>(kind)] = sat_add(w.idle_by_kind[static_cast<int>(kind)], part.length());
        w.idle.push_back(part);
      }
    }
    if (!os.stack.empty() && os.stack[i] != kNoStack) call.idle_by_stack[os.stack[i]] += call.idle_ns - idle_before;
  }
  for (auto& [owner, w] : owners) {
    if (w.by_call.empty()) continue;
    Finding f;
    int64_t waited = 0;
    for (const auto& [name, c] : w.by_call) {
      waited = sat_add(waited, c.wait_ns);
      const char* what = c.kind == OsWait::kLock ? "lock wait" : c.kind == OsWait::kIo ? "I/O or poll" : "sleep";
      // The call stack that idled the GPU longest says where the waits come from.
      std::string from;
      int64_t most = -1;
      for (const auto& [stack, idle] : c.idle_by_stack) {
        if (idle <= most) continue;
        const std::string site = stack_call_site(t, stack);
        if (site.empty()) continue;
        most = idle, from = site;
      }
      f.offenders.push_back({name, c.calls, c.idle_ns,
                             fmt::format("{}; waited {} in all{}", what, human_duration(c.wait_ns),
                                         from.empty() ? "" : "; from " + from)});
    }
    // Waits on several threads at once leave the GPU idle once.
    f.savings_ns = IntervalSet::busy_union(w.idle).total();
    rate(f, ctx, p.warning(), p.critical());
    if (!gate_on_basis(f, ctx, 0, p.get("min_share"), true) || f.savings_ns == 0) continue;
    keep_top(f.offenders, 5);
    const int64_t lock = w.idle_by_kind[static_cast<int>(OsWait::kLock)],
                  io = w.idle_by_kind[static_cast<int>(OsWait::kIo)],
                  sleep = w.idle_by_kind[static_cast<int>(OsWait::kSleep)];
    const OsWait main = lock >= io && lock >= sleep ? OsWait::kLock : io >= sleep ? OsWait::kIo : OsWait::kSleep;
    f.scope = ctx.owner_label(owner);
    f.title = fmt::format(
        "the threads launching GPU work wait in the OS while the GPU idles: {} ({} of the {}), mostly {} ({})",
        human_duration(f.savings_ns), human_percent(f.savings_share), ctx.steps() ? "steps" : "run",
        main == OsWait::kLock ? "lock waits"
        : main == OsWait::kIo ? "waiting for I/O"
                              : "sleeping",
        f.offenders.front().name);
    f.confidence = 0.7;
    f.figures = {{"os_wait_ns", static_cast<double>(waited), "ns"},
                 {"gpu_idle_during_waits_ns", static_cast<double>(f.savings_ns), "ns"},
                 {"lock_wait_idle_ns", static_cast<double>(lock), "ns"},
                 {"io_wait_idle_ns", static_cast<double>(io), "ns"},
                 {"sleep_idle_ns", static_cast<double>(sleep), "ns"}};
    f.ranges = longest_ranges(w.idle, 3, f.scope, "GPU idle while the launching thread waits in the OS");
    if (main == OsWait::kLock) {
      f.remedy =
          "Lock waits on the thread that launches the GPU work mean it waits for another thread: for the "
          "GIL (another Python thread holds the interpreter: a pin-memory or logging thread, a tokenizer, "
          "a metrics or checkpoint callback), or for a queue or condition another thread fills (a "
          "data-loading thread). See what the other threads do during the waits shown; move CPU-heavy "
          "Python work out of the training process (DataLoader workers with num_workers > 0, a separate "
          "process for logging and checkpoints), prefetch so the queue is full when the step needs it, "
          "and prefer libraries that release the GIL.";
    } else if (main == OsWait::kIo) {
      f.remedy =
          "The launching thread waits for data (polls and reads on the DataLoader's queues, files or "
          "sockets). Raise num_workers, set pin_memory=True, persistent_workers=True and a larger "
          "prefetch_factor, move decoding and augmentation off the main process, and read from local "
          "storage.";
    } else {
      f.remedy =
          "The training loop sleeps while the GPU has nothing to do: remove time.sleep and polling "
          "back-offs from the hot path, and wait on events or queues instead.";
    }
    out.push_back(std::move(f));
  }
}

void memcpy_heavy(Context& ctx, const Params& p, std::vector<Finding>& out) {
  const Trace& t = ctx.trace();
  for (const pytorch::GpuUnit& u : ctx.gpu_work().units) {
    std::vector<Interval> copies, kernels;
    struct Direction {
      int64_t count = 0, bytes = 0, ns = 0;
    };
    std::map<std::string, Direction> directions;
    for (const pytorch::GpuWorkItem& it : u.items) {
      if (it.kind == pytorch::WorkKind::kKernel) {
        kernels.push_back(it.interval());
        continue;
      }
      if (it.kind != pytorch::WorkKind::kMemcpy || !crosses_host_link(t.memcpys.copy_kind[it.row])) continue;
      copies.push_back(it.interval());
      Direction& d = directions[t.copy_label(t.memcpys.copy_kind[it.row])];
      ++d.count;
      d.bytes = sat_add(d.bytes, t.memcpys.bytes[it.row]);
      d.ns = sat_add(d.ns, sat_sub(it.end, it.start));
    }
    if (copies.empty()) continue;
    const std::vector<Interval> windows = ctx.unit_windows(u);
    const IntervalSet in_windows = IntervalSet::busy_union(windows);
    const IntervalSet exposed =
        IntervalSet::busy_union(copies).intersect(in_windows).subtract(IntervalSet::busy_union(std::move(kernels)));
    const double share = share_of(exposed.total(), total_length(windows));
    if (share < p.get("min_share")) continue;
    Finding f;
    f.scope = ctx.unit_label(u);
    f.savings_ns = exposed.total();
    rate(f, ctx, p.warning(), p.critical());
    const HostLink link = host_link_for_gpu(ctx.device_name(u.device));
    for (const auto& [name, d] : directions) {
      const double gbps = d.ns > 0 ? static_cast<double>(d.bytes) / static_cast<double>(d.ns) : 0;
      std::string detail = fmt::format("{}, {:.1f} GB/s", human_bytes(d.bytes), gbps);
      if (link.known())
        detail += fmt::format(" ({:.0f}% of {})", 100.0 * gbps * 1e9 / link.peak_bytes_per_s, link.name);
      f.offenders.push_back({name, d.count, d.ns, detail});
    }
    keep_top(f.offenders, f.offenders.size());
    f.title = fmt::format("host<->device copies take {} of the {} with no kernel running ({})", human_percent(share),
                          ctx.steps() ? "steps" : "run", human_duration(exposed.total()));
    f.confidence = 0.75;
    f.figures = {{"exposed_copy_ns", static_cast<double>(exposed.total()), "ns"},
                 {"exposed_copy_share", share, "fraction"}};
    std::vector<Interval> longest(exposed.intervals().begin(), exposed.intervals().end());
    f.ranges = longest_ranges(std::move(longest), 3, ctx.unit_label(u), "copy, no kernel running");
    f.remedy =
        "Copy less or hide the copies: keep tensors on the GPU between steps (no round trips through "
        "the host), move constant data once before the loop, copy from pinned memory with "
        "non_blocking=True on a side stream so the copy overlaps compute, and prefetch the next batch.";
    out.push_back(std::move(f));
  }
}

void pageable_memcpy(Context& ctx, const Params& p, std::vector<Finding>& out) {
  const Trace& t = ctx.trace();
  const MemcpyTable& m = t.memcpys;
  struct Group {
    int64_t count = 0, bytes = 0, ns = 0, sync = 0;
    int32_t device = 0;
    std::vector<Interval> intervals;
  };
  std::map<int64_t, Group> by_owner;
  const pytorch::GpuLaunches& launches = ctx.launches();
  for (size_t r = 0; r < m.size(); ++r) {
    if (host_side(m, r) != static_cast<uint8_t>(MemKind::kPageable) || m.end[r] <= m.start[r]) continue;
    Group& g = by_owner[ctx.owner_of(m.global_pid[r])];
    ++g.count;
    g.bytes = sat_add(g.bytes, m.bytes[r]);
    g.ns = sat_add(g.ns, sat_sub(m.end[r], m.start[r]));
    g.device = m.device[r];
    g.intervals.push_back({m.start[r], m.end[r]});
    const int32_t call = launches.of(pytorch::GpuKind::kMemcpy, r);
    if (call >= 0 && t.str(t.api.name[static_cast<size_t>(call)]).find("Async") == std::string_view::npos) ++g.sync;
  }
  for (auto& [owner, g] : by_owner) {
    Finding f;
    if (!gate_on_basis(f, ctx, g.ns, p.get("min_share"))) continue;
    f.scope = ctx.owner_label(owner);
    const HostLink link = host_link_for_gpu(ctx.device_name(g.device));
    // From pinned memory a copy runs near the link's peak (80% of it, as measured on PCIe 4 and 5);
    // without a known link, pinned copies are taken as twice as fast as the pageable ones were.
    const int64_t pinned_ns =
        link.known() ? static_cast<int64_t>(static_cast<double>(g.bytes) / (0.8 * link.peak_bytes_per_s) * 1e9)
                     : g.ns / 2;
    f.savings_ns = std::max<int64_t>(0, sat_sub(g.ns, pinned_ns));
    rate(f, ctx, p.warning(), p.critical());
    const double gbps = static_cast<double>(g.bytes) / static_cast<double>(g.ns);
    f.title = fmt::format("{} copies from or to pageable host memory: {} in {} at {:.1f} GB/s{}", g.count,
                          human_bytes(g.bytes), human_duration(g.ns), gbps,
                          g.sync ? fmt::format(", {} of them synchronous", g.sync) : "");
    f.confidence = link.known() ? 0.8 : 0.6;
    f.figures = {{"copies", static_cast<double>(g.count), "count"},
                 {"bytes", static_cast<double>(g.bytes), "bytes"},
                 {"copy_ns", static_cast<double>(g.ns), "ns"},
                 {"gb_per_s", gbps, "GB/s"},
                 {"synchronous_copies", static_cast<double>(g.sync), "count"}};
    if (link.known()) f.figures.push_back({"link_peak_gb_per_s", link.peak_bytes_per_s / 1e9, "GB/s"});
    f.ranges = longest_ranges(g.intervals, 3, f.scope, "pageable copy");
    f.remedy =
        "Pageable memory is staged through a pinned buffer by the driver, at a fraction of the link's "
        "speed, and the copy cannot overlap the host. Pin the host buffers: DataLoader(pin_memory=True), "
        "tensor.pin_memory(), torch.empty(..., pin_memory=True) (cudaHostAlloc / cudaHostRegister "
        "outside PyTorch), then copy with non_blocking=True.";
    out.push_back(std::move(f));
  }
}

}  // namespace tracedoc::diagnose
