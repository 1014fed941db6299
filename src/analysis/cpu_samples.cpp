#include "analysis/cpu_samples.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "analysis/statistics.h"

namespace tracedoc {

CpuSampleCounts count_cpu_samples(const Trace& trace, const CpuSampleFilter& filter) {
  const CpuSampleTable& c = trace.cpu_samples;
  const CallStacks& stacks = trace.stacks;
  CpuSampleCounts out;
  // Samples per stack first: a training loop repeats a few thousand stacks a million times.
  std::vector<int64_t> per_stack(stacks.stack_count(), 0);
  for (size_t i = 0; i < c.size(); ++i) {
    if (filter.tid >= 0 && tid_of(c.global_tid[i]) != filter.tid) continue;
    ++out.samples;
    const StackId s = c.stack.empty() ? kNoStack : c.stack[i];
    if (s < 0 || static_cast<size_t>(s) >= per_stack.size()) {
      ++out.without_stack;
      continue;
    }
    ++per_stack[static_cast<size_t>(s)];
  }
  // A function is its symbol and module; frames differing only in flags are the same function.
  std::vector<int32_t> function_of(stacks.frame_count(), -1);
  std::map<std::pair<StrId, StrId>, int32_t> index;
  auto function = [&](uint32_t frame) -> int32_t {
    int32_t& f = function_of[frame];
    if (f < 0) {
      const StackFrame& fr = stacks.frame(frame);
      auto [it, fresh] = index.try_emplace({fr.symbol, fr.module}, static_cast<int32_t>(out.functions.size()));
      if (fresh) out.functions.push_back({fr.symbol, fr.module, fr.unresolved(), 0, 0});
      f = it->second;
    }
    return f;
  };
  std::vector<StackId> last_counted;  // per function: the stack that last added to its total
  for (size_t s = 0; s < per_stack.size(); ++s) {
    const int64_t n = per_stack[s];
    if (n == 0) continue;
    const std::span<const uint32_t> frames = stacks.stack(static_cast<StackId>(s));
    out.functions[static_cast<size_t>(function(frames.front()))].self += n;
    for (uint32_t frame : frames) {
      const auto f = static_cast<size_t>(function(frame));
      if (last_counted.size() <= f) last_counted.resize(out.functions.size(), kNoStack);
      if (last_counted[f] == static_cast<StackId>(s)) continue;  // recursion: once per sample
      last_counted[f] = static_cast<StackId>(s);
      out.functions[f].total += n;
    }
  }
  std::erase_if(out.functions, [](const FunctionSamples& f) { return f.total == 0; });
  std::stable_sort(out.functions.begin(), out.functions.end(), [&](const FunctionSamples& a, const FunctionSamples& b) {
    return std::tuple(-a.self, -a.total, trace.str(a.symbol), trace.str(a.module)) <
           std::tuple(-b.self, -b.total, trace.str(b.symbol), trace.str(b.module));
  });
  return out;
}

namespace {

Cell share(int64_t part, int64_t whole) {
  return whole > 0 ? Cell::real(sqlite_round(100.0 * static_cast<double>(part) / static_cast<double>(whole), 1))
                   : Cell::null();
}

}  // namespace

Status cpu_sample_sum(const Trace& trace, const ReportArgs& args, RowSink& sink) {
  TRACEDOC_RETURN_IF_ERROR(check_report_args("cpu_sample_sum", args, {}, {"thread"}));
  TRACEDOC_ASSIGN_OR_RETURN(const int64_t tid, int_report_arg("cpu_sample_sum", args, "thread", -1));
  if (!trace.source.has_table("COMPOSITE_EVENTS") || trace.cpu_samples.size() == 0)
    return no_data(trace, "does not contain CPU samples (nsys profile --sample=cpu).");
  const CpuSampleCounts counts = count_cpu_samples(trace, {tid});
  sink.begin({{"Self", Unit::kRatioPct}, {"Self"}, {"Total", Unit::kRatioPct}, {"Total"}, {"Function"}, {"Module"}});
  std::vector<Cell> row;
  for (const FunctionSamples& f : counts.functions) {
    const std::string_view name = trace.str(f.symbol);
    if (!args.name_ok(name)) continue;
    row = {share(f.self, counts.samples), Cell::integer(f.self), share(f.total, counts.samples),
           Cell::integer(f.total),        Cell::text(name),      Cell::text(trace.str(f.module))};
    sink.row(row);
  }
  if (counts.without_stack > 0 && args.name_ok("[no call stack]")) {
    row = {share(counts.without_stack, counts.samples),
           Cell::integer(counts.without_stack),
           share(counts.without_stack, counts.samples),
           Cell::integer(counts.without_stack),
           Cell::text("[no call stack]"),
           Cell::null()};
    sink.row(row);
  }
  sink.end();
  return Status::Ok();
}

}  // namespace tracedoc
