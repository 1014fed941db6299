#include "diagnose/engine.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "common/toml_file.h"
#include "diagnose/context.h"
#include "diagnose/parts.h"
#include "diagnose/rules.h"

namespace tracedoc::diagnose {

namespace {

// Parameters are converted to int64 ns / counts by the rules: keep them far inside that range.
constexpr double kLargestParam = 1e15;

bool declared(const RuleDef& rule, const std::string& name) {
  return std::any_of(rule.params.begin(), rule.params.end(), [&](const Param& p) { return p.name == name; });
}

}  // namespace

const char* severity_name(Severity s) {
  switch (s) {
    case Severity::kInfo: return "info";
    case Severity::kWarning: return "warning";
    case Severity::kCritical: return "critical";
  }
  return "info";
}

Severity severity_for(double share, double warning, double critical) {
  if (share >= critical) return Severity::kCritical;
  if (share >= warning) return Severity::kWarning;
  return Severity::kInfo;
}

bool parse_severity(std::string_view text, Severity* out) {
  for (Severity s : {Severity::kInfo, Severity::kWarning, Severity::kCritical}) {
    if (text == severity_name(s)) {
      *out = s;
      return true;
    }
  }
  return false;
}

const char* confidence_label(double confidence) {
  if (confidence < 0.5) return "low";
  if (confidence < 0.8) return "medium";
  return "high";
}

Status check_options(const DiagnoseOptions& options) {
  for (const std::string& id : options.rules) {
    if (!find_rule(id)) return UsageError(fmt::format("unknown rule '{}' (tracedoc diagnose --list-rules)", id));
  }
  for (const auto& [id, s] : options.settings) {
    const RuleDef* rule = find_rule(id);
    if (!rule) return UsageError(fmt::format("unknown rule '{}'", id));
    for (const auto& [name, value] : s.params) {
      if (!declared(*rule, name)) return UsageError(fmt::format("rule {} has no parameter '{}'", id, name));
      if (!std::isfinite(value) || std::fabs(value) > kLargestParam) {
        return UsageError(fmt::format("rule {}: {} must be a finite number of at most 1e15", id, name));
      }
    }
  }
  return Status::Ok();
}

Status load_config(const std::string& path, DiagnoseOptions& options) {
  TRACEDOC_ASSIGN_OR_RETURN(auto parsed, read_toml_file(path));
  const toml::table& root = parsed;
  for (const auto& [key, node] : root) {
    const std::string section(key.str());
    if (section == "steps") {
      const toml::table* t = node.as_table();
      if (!t) return BadInput(fmt::format("{}: [steps] must be a table", path));
      for (const auto& [k, v] : *t) {
        if (k.str() != "marker" || !v.is_string()) {
          return BadInput(fmt::format("{}: steps.{}: expected marker = \"NAME\"", path, k.str()));
        }
        options.steps.marker = *v.value<std::string>();
      }
      continue;
    }
    if (section == "diagnose") {
      const toml::table* t = node.as_table();
      if (!t) return BadInput(fmt::format("{}: [diagnose] must be a table", path));
      for (const auto& [k, v] : *t) {
        const std::optional<double> value = v.value<double>();
        if (value && (!std::isfinite(*value) || std::fabs(*value) > kLargestParam)) {
          return BadInput(fmt::format("{}: diagnose.{} must be a finite number of at most 1e15", path, k.str()));
        }
        if (k.str() == "min_savings_share" && value) {
          options.min_savings_share = *value;
        } else if (k.str() == "min_savings_ns" && value) {
          options.min_savings_ns = static_cast<int64_t>(*value);
        } else {
          return BadInput(
              fmt::format("{}: diagnose.{}: expected min_savings_share or min_savings_ns = <number>", path, k.str()));
        }
      }
      continue;
    }
    if (section != "rules")
      return BadInput(
          fmt::format("{}: unknown section [{}] (expected [rules.<id>], [steps] or [diagnose])", path, section));
    const toml::table* rules = node.as_table();
    if (!rules) return BadInput(fmt::format("{}: rules must be a table", path));
    for (const auto& [id_key, rule_node] : *rules) {
      const std::string id(id_key.str());
      const RuleDef* rule = find_rule(id);
      if (!rule) return BadInput(fmt::format("{}: unknown rule [rules.{}]", path, id));
      const toml::table* t = rule_node.as_table();
      if (!t) return BadInput(fmt::format("{}: rules.{} must be a table", path, id));
      RuleSettings& s = options.settings[id];
      for (const auto& [k, v] : *t) {
        const std::string name(k.str());
        if (name == "enabled") {
          if (!v.is_boolean()) return BadInput(fmt::format("{}: rules.{}.enabled must be true or false", path, id));
          s.enabled = *v.value<bool>();
          continue;
        }
        if (!declared(*rule, name)) return BadInput(fmt::format("{}: rule {} has no parameter '{}'", path, id, name));
        const std::optional<double> value = v.value<double>();  // integers convert too
        if (!value) return BadInput(fmt::format("{}: rules.{}.{} must be a number", path, id, name));
        if (!std::isfinite(*value) || std::fabs(*value) > kLargestParam) {
          return BadInput(fmt::format("{}: rules.{}.{} must be a finite number of at most 1e15", path, id, name));
        }
        s.params[name] = *value;
      }
    }
  }
  return Status::Ok();
}

Diagnosis diagnose(const Trace& trace, const DiagnoseOptions& options) {
  Context ctx(trace, options.steps);
  return diagnose(ctx, options);
}

Diagnosis diagnose(Context& ctx, const DiagnoseOptions& options) {
  const Trace& trace = ctx.trace();
  // An Nsight Compute report read alone (ingest/ncu_timeline.h) lays out only its profiled
  // launches, microseconds long, each standing for every run of its kernel: shares count there, not
  // absolute times.
  DiagnoseOptions opts = options;
  const bool report_alone = trace.source.format == "ncu-report";
  if (report_alone) opts.min_savings_ns = 0;
  std::vector<DiagnosePart> parts;
  parts.push_back(diagnose_part(ctx, opts));
  // One part: its steps are found one way, so the merge cannot refuse it.
  Diagnosis out = *merge_diagnose_parts(std::move(parts), opts);
  if (!report_alone && !trace.ncu_reports.empty()) {
    const NcuJoin& join = ctx.ncu_join();
    out.ncu.reports = trace.ncu_reports.size();
    out.ncu.launches = join.launches;
    out.ncu.matched = join.matched;
    for (size_t rep = 0; rep < join.kernel_of.size(); ++rep) {
      const NcuReport& report = *trace.ncu_reports[rep];
      for (size_t i = 0; i < join.kernel_of[rep].size(); ++i) {
        if (join.kernel_of[rep][i] < 0)
          out.ncu.unmatched.push_back(fmt::format("{} launch {}: {}", report.path, i, report.results[i].name()));
      }
    }
  }
  return out;
}

}  // namespace tracedoc::diagnose
