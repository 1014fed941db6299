// Rules over what the CPU did, from CPU samples with call stacks and thread switches
// (analysis/cpu_samples.h, analysis/cpu_threads.h).
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <unordered_set>

#include "analysis/cpu_samples.h"
#include "analysis/cpu_threads.h"
#include "analysis/thread_schedule.h"
#include "diagnose/rule_support.h"
#include "diagnose/rules.h"

namespace tracedoc::diagnose {

namespace {

// What to change, by what the launching thread was busy with while the GPU waited.
const char* cpu_remedy(SampleClass c) {
  switch (c) {
    case SampleClass::kPython:
    case SampleClass::kGil:
      return "The launching thread runs Python between kernels, and the GPU waits for it. Launch fewer, larger "
             "operations: torch.compile (mode=\"reduce-overhead\" adds CUDA graphs), CUDA graphs for a "
             "static step, larger batches, and keep per-step Python (logging, metrics, .item() calls, "
             "list building) out of the loop or every N steps.";
    case SampleClass::kPyTorch:
      return "The launching thread spends the idle time in PyTorch's dispatcher and autograd: many small "
             "operators, each a few microseconds of CPU for little GPU work. Fuse them (torch.compile, fused "
             "optimizers with foreach=True or fused=True, fused attention and layer norms), use larger "
             "tensors per op, and CUDA graphs for a step of fixed shapes.";
    case SampleClass::kCuda:
      return "The launching thread is inside the CUDA runtime and driver while the GPU idles: kernel launches "
             "and their arguments, or memory registration. Launch fewer kernels (fusion, CUDA graphs) and "
             "keep allocations and pinning out of the step.";
    case SampleClass::kAllocation:
      return "The launching thread allocates and frees memory while the GPU idles. Reuse buffers "
             "(preallocate, out= arguments), tune the caching allocator (PYTORCH_CUDA_ALLOC_CONF, e.g. "
             "expandable_segments:True) so it stops returning memory, and avoid pinning new host memory "
             "every step.";
    case SampleClass::kData:
    case SampleClass::kNumerics:
      return "The launching thread decodes or transforms data while the GPU idles. Move that work into "
             "DataLoader workers (num_workers > 0, persistent_workers=True, prefetch_factor), or onto the "
             "GPU (torchvision.transforms.v2 on tensors, DALI).";
    case SampleClass::kKernel:
      return "The launching thread is in the OS kernel while the GPU idles (system calls, page faults). "
             "See the functions named; pin and preallocate host memory, and avoid file and socket I/O on "
             "the training thread.";
    default:
      return "The launching thread is busy on the CPU while the GPU has nothing to do: the GPU waits for "
             "the host. See the functions named, move their work off the training thread, or overlap it with "
             "GPU work (CUDA streams, asynchronous copies).";
  }
}

}  // namespace

void cpu_bound_during_idle(Context& ctx, const Params& p, std::vector<Finding>& out) {
  const Trace& t = ctx.trace();
  const CpuSampleTable& c = t.cpu_samples;
  if (c.size() == 0) return;
  const std::unordered_set<int64_t> launchers = launching_threads(t);
  const std::map<int64_t, ThreadSwitches> switches = thread_switches(t);
  const TimeNs period = sampling_period(t);
  struct Owner {
    IntervalSet idle;                        // the GPU idle inside the windows
    std::vector<Interval> running;           // the launching threads on a CPU
    std::set<int64_t> threads_from_samples;  // launching threads without switches: running from samples
    SampleClassCounts classes{};
    std::map<int32_t, int64_t> leaf_samples;  // by function
    int64_t samples = 0;
  };
  std::map<int64_t, Owner> owners;
  const auto owner_for = [&](int64_t global_tid) -> Owner* {
    const int64_t owner = ctx.owner_of(global_tid);
    auto it = owners.find(owner);
    if (it == owners.end()) {
      Owner o;
      o.idle = ctx.owner_idle(owner);
      it = owners.emplace(owner, std::move(o)).first;
    }
    return it->second.idle.empty() ? nullptr : &it->second;
  };
  for (int64_t tid : launchers) {
    Owner* o = owner_for(tid);
    if (o == nullptr) continue;
    const auto sw = switches.find(tid);
    if (sw != switches.end()) {
      o->running.insert(o->running.end(), sw->second.running.begin(), sw->second.running.end());
    } else {
      o->threads_from_samples.insert(tid);
    }
  }
  const std::vector<SampleClass> classes = stack_classes(t);
  FunctionIndex functions(t.stacks);
  for (size_t i = 0; i < c.size(); ++i) {
    if (!launchers.count(c.global_tid[i])) continue;
    Owner* o = owner_for(c.global_tid[i]);
    if (o == nullptr || o->idle.covered_within({c.time[i], c.time[i] + 1}) == 0) continue;
    if (o->threads_from_samples.count(c.global_tid[i]) && period > 0)
      o->running.push_back({c.time[i], c.time[i] + period});
    ++o->samples;
    const StackId s = c.stack.empty() ? kNoStack : c.stack[i];
    const bool has_stack = s >= 0 && static_cast<size_t>(s) < classes.size();
    ++o->classes[static_cast<size_t>(has_stack ? classes[static_cast<size_t>(s)] : SampleClass::kNoStack)];
    if (has_stack) ++o->leaf_samples[functions.of(t.stacks.stack(s).front())];
  }
  for (auto& [owner, o] : owners) {
    if (o.samples == 0) continue;
    const IntervalSet during = IntervalSet::busy_union(o.running).intersect(o.idle);
    Finding f;
    f.savings_ns = during.total();
    rate(f, ctx, p.warning(), p.critical());
    if (f.savings_ns == 0 || !gate_on_basis(f, ctx, 0, p.get("min_share"), true)) continue;
    const std::vector<SampleClass> order = classes_by_count(o.classes);
    SampleClass main = order.front();
    for (SampleClass k : order) {  // the first class that says what to change
      if (k != SampleClass::kOther && k != SampleClass::kUnresolved && k != SampleClass::kNoStack) {
        main = k;
        break;
      }
    }
    const std::vector<FunctionSamples>& fs = functions.functions();
    for (const auto& [fn, n] : o.leaf_samples) {
      const FunctionSamples& func = fs[static_cast<size_t>(fn)];
      f.offenders.push_back(
          {std::string(t.str(func.symbol)), n, n * period, fmt::format("{} samples; {}", n, t.str(func.module))});
    }
    keep_top(f.offenders, 5);
    const auto share_of_samples = [&](SampleClass k) {
      return 100.0 * static_cast<double>(o.classes[static_cast<size_t>(k)]) / static_cast<double>(o.samples);
    };
    f.scope = ctx.owner_label(owner);
    f.title = fmt::format(
        "the GPU idles while the thread launching its work runs on the CPU: {} ({} of the {}), {:.0f}% of its "
        "samples then in {}{}",
        human_duration(f.savings_ns), human_percent(f.savings_share), ctx.steps() ? "steps" : "run",
        share_of_samples(main), sample_class_name(main),
        f.offenders.empty() ? "" : fmt::format("; hottest function {}", clipped_name(f.offenders.front().name)));
    f.confidence = 0.6;
    f.figures = {{"gpu_idle_ns", static_cast<double>(o.idle.total()), "ns"},
                 {"running_during_idle_ns", static_cast<double>(f.savings_ns), "ns"},
                 {"samples_during_idle", static_cast<double>(o.samples), "count"}};
    for (SampleClass k : order) {
      std::string key = sample_class_name(k);
      std::replace_if(
          key.begin(), key.end(), [](char ch) { return ch == ' ' || ch == '/'; }, '_');
      std::transform(key.begin(), key.end(), key.begin(), [](unsigned char ch) { return std::tolower(ch); });
      f.figures.push_back({"samples_" + key + "_pct", share_of_samples(k), "%"});
    }
    std::vector<Interval> ranges(during.intervals().begin(), during.intervals().end());
    f.ranges = longest_ranges(std::move(ranges), 3, f.scope, "GPU idle while the launching thread runs on the CPU");
    f.remedy = cpu_remedy(main);
    out.push_back(std::move(f));
  }
}

void oversubscribed_cpu(Context& ctx, const Params& p, std::vector<Finding>& out) {
  const Trace& t = ctx.trace();
  if (t.sched.size() == 0) return;
  // Only where the waits were traced (or nsys recorded the state at each switch off): otherwise
  // every stretch off the CPU would look like one without a CPU.
  std::unordered_set<int64_t> traced;
  for (int64_t tid : t.os_calls.global_tid) traced.insert(tid);
  struct Owner {
    std::vector<Interval> starved;  // the launching threads off their CPU outside any traced wait
    bool states = false;            // from recorded states (preempted), not inferred
    int64_t threads = 0;
  };
  std::map<int64_t, Owner> owners;
  for (const ThreadSchedule& s : thread_schedules(t)) {
    if (!s.launches_gpu_work) continue;
    const bool states = !s.preempted.empty();
    if (!states && !traced.count(s.global_tid)) continue;
    Owner& o = owners[ctx.owner_of(s.global_tid)];
    const IntervalSet off = states ? s.preempted : s.other_off_cpu();
    o.starved.insert(o.starved.end(), off.intervals().begin(), off.intervals().end());
    o.states = o.states || states;
    ++o.threads;
  }
  for (auto& [owner, o] : owners) {
    const IntervalSet idle = ctx.owner_idle(owner);
    const IntervalSet during = IntervalSet::busy_union(o.starved).intersect(idle);
    Finding f;
    f.savings_ns = during.total();
    rate(f, ctx, p.warning(), p.critical());
    if (f.savings_ns == 0 || !gate_on_basis(f, ctx, 0, p.get("min_share"), true)) continue;
    f.scope = ctx.owner_label(owner);
    f.title = fmt::format(
        "the thread launching GPU work waits for a CPU while the GPU idles: {} ({} of the {}) off its CPU {}",
        human_duration(f.savings_ns), human_percent(f.savings_share), ctx.steps() ? "steps" : "run",
        o.states ? "though still runnable (preempted)" : "outside any traced wait");
    f.confidence = o.states ? 0.8 : 0.4;
    f.figures = {{"gpu_idle_ns", static_cast<double>(idle.total()), "ns"},
                 {"off_cpu_during_idle_ns", static_cast<double>(f.savings_ns), "ns"},
                 {"launching_threads", static_cast<double>(o.threads), "count"}};
    std::vector<Interval> ranges(during.intervals().begin(), during.intervals().end());
    f.ranges = longest_ranges(std::move(ranges), 3, f.scope, "GPU idle while the launching thread waits for a CPU");
    f.remedy =
        "Other threads or processes hold the cores the training thread needs: the machine is oversubscribed. "
        "Use fewer DataLoader workers than free cores (num_workers), cap the math libraries' threads in "
        "every process (OMP_NUM_THREADS, MKL_NUM_THREADS, torch.set_num_threads), keep other jobs off the "
        "node or pin them (taskset, numactl), and give each rank its own cores.";
    out.push_back(std::move(f));
  }
}

}  // namespace tracedoc::diagnose
