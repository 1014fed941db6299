#include "diagnose/parts.h"

#include <fmt/format.h>

#include <algorithm>

#include "analysis/cross_rank.h"
#include "analysis/part_codec.h"
#include "diagnose/rule_support.h"

namespace tracedoc::diagnose {

namespace {

bool selected(const DiagnoseOptions& options, const RuleDef& rule) {
  if (!options.rules.empty())
    return std::find(options.rules.begin(), options.rules.end(), rule.id) != options.rules.end();
  const auto it = options.settings.find(rule.id);
  return it == options.settings.end() || it->second.enabled;
}

Params params_of(const DiagnoseOptions& options, const RuleDef& rule) {
  std::map<std::string, double> values;
  for (const Param& p : rule.params) values[p.name] = p.value;
  if (const auto it = options.settings.find(rule.id); it != options.settings.end()) {
    for (const auto& [k, v] : it->second.params) values[k] = v;
  }
  return Params(std::move(values));
}

// A rank's times onto the job's clock.
void place_rank(DiagnosePart& p, TimeNs shift) {
  if (shift == 0) return;
  for (Finding& f : p.findings) {
    for (TimeRange& r : f.ranges) r.start = sat_add(r.start, shift), r.end = sat_add(r.end, shift);
  }
  for (KernelInstances& g : p.job.kernels) {
    for (Interval& i : g.longest) i = {sat_add(i.start, shift), sat_add(i.end, shift)};
  }
}

}  // namespace

DiagnosePart diagnose_part(Context& ctx, const DiagnoseOptions& options) {
  const Trace& trace = ctx.trace();
  DiagnosePart part;
  part.input = trace.source.path;
  part.pytorch = ctx.pytorch();
  if (part.pytorch) part.rank = trace.pytorch.rank, part.clock_base_ns = trace.pytorch.base_time_ns;
  if (const StepSet* steps = ctx.steps()) {
    part.has_steps = true;
    part.step_source = steps->source;
    part.steps = static_cast<int64_t>(steps->steps.size());
  }
  part.basis_ns = ctx.basis_ns();
  bool job_rules = false;
  for (const RuleDef& rule : all_rules()) {
    if (!selected(options, rule)) continue;
    if (!rule.run) {
      job_rules = true;
      continue;
    }
    std::vector<Finding> found;
    rule.run(ctx, params_of(options, rule), found);
    for (Finding& f : found) {
      f.id = rule.id;  // the rules rate their findings (rule_support.h rate)
      part.findings.push_back(std::move(f));
    }
  }
  if (job_rules) part.job = job_inputs(ctx);
  return part;
}

DiagnosePart diagnose_part(const Trace& trace, const DiagnoseOptions& options, bool one_of_ranks) {
  Context ctx(trace, options.steps);
  if (one_of_ranks) ctx.name_as_rank_of_job();
  return diagnose_part(ctx, options);
}

bool assume_rank(Trace& trace, int64_t rank) {
  if (trace.pytorch.rank >= 0 || trace.source.format != "kineto-json") return false;
  trace.pytorch.rank = rank;
  return true;
}

Result<Diagnosis> merge_diagnose_parts(std::vector<DiagnosePart> parts, const DiagnoseOptions& options,
                                       const std::string& directory) {
  Diagnosis out;
  if (parts.empty()) return out;
  if (!directory.empty() && parts[0].pytorch) order_as_rank_directory(parts, place_rank);
  out.input = directory.empty() ? parts[0].input : directory;
  TRACEDOC_ASSIGN_OR_RETURN(const std::optional<StepSource> source, common_step_source(parts, out.input, "diagnose"));
  for (const DiagnosePart& p : parts) out.steps += p.steps;
  out.basis = source ? "steps" : "span";
  for (const DiagnosePart& p : parts) out.basis_ns = std::max(out.basis_ns, p.basis_ns);
  JobInputs job;
  for (DiagnosePart& p : parts) add_job_inputs(job, std::move(p.job));
  for (const RuleDef& rule : all_rules()) {
    if (!selected(options, rule)) continue;
    out.rules_run.push_back(rule.id);
    std::vector<Finding> found;
    if (rule.run_on_job) {
      rule.run_on_job(job, params_of(options, rule), out.basis_ns, found);
      for (Finding& f : found) f.id = rule.id;
    } else {
      for (DiagnosePart& p : parts) {
        for (Finding& f : p.findings) {
          if (f.id != rule.id || !meets_gate(f, out.basis_ns)) continue;
          if (f.time_based) apply_rating(f, out.basis_ns);  // the others rate themselves (memory)
          found.push_back(std::move(f));
        }
      }
    }
    for (Finding& f : found) {
      if (f.time_based && (f.savings_share < options.min_savings_share || f.savings_ns < options.min_savings_ns))
        continue;
      out.findings.push_back(std::move(f));
    }
  }
  std::stable_sort(out.findings.begin(), out.findings.end(), [](const Finding& a, const Finding& b) {
    if (a.savings_ns != b.savings_ns) return a.savings_ns > b.savings_ns;
    if (a.severity != b.severity) return a.severity > b.severity;
    return a.id < b.id;
  });
  return out;
}

namespace {
constexpr part_codec::Format kFormat{"TDDP", 2, "diagnosis part"};
}  // namespace

std::string encode_diagnose_part(const DiagnosePart& part) { return part_codec::encode(part, kFormat); }

Result<DiagnosePart> decode_diagnose_part(std::string_view bytes) {
  return part_codec::decode<DiagnosePart>(bytes, kFormat);
}

}  // namespace tracedoc::diagnose
