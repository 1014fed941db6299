// `tracedoc diagnose`: names the performance problems of one or more traces, with evidence, the time
// fixing each would save and the remedy (src/diagnose/rules.h lists the rules).
//
//   tracedoc diagnose [-f column|json|markdown] [--rules ID,...] [--config FILE]
//                     [--fail-on info|warning|critical] [--step-marker NAME] [-o FILE] INPUT...
//
// Exit codes: 0 done (findings or not), 1 a finding reached --fail-on, 2 bad input or usage.
#include <fmt/format.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/report_output.h"
#include "cli/shared_options.h"
#include "diagnose/engine.h"
#include "report/diagnose_writer.h"

namespace tracedoc::cli {

namespace {

struct DiagnoseCommandOptions {
  std::vector<std::string> inputs;
  std::string format = "column";
  std::string output = "-";
  std::vector<std::string> rules;
  std::string config;
  std::string fail_on;
  std::string step_marker;
  std::vector<std::string> ncu;
  int64_t rank = -1;
  bool list_rules = false;
};

int run_diagnose(const DiagnoseCommandOptions& opt) {
  if (opt.list_rules) {
    const std::string text = rules_text();
    std::fwrite(text.data(), 1, text.size(), stdout);
    return kExitOk;
  }
  if (opt.inputs.empty()) return fail(UsageError("diagnose: at least one INPUT is required"));
  diagnose::Severity threshold = diagnose::Severity::kCritical;
  if (!opt.fail_on.empty() && !diagnose::parse_severity(opt.fail_on, &threshold)) {
    return fail(
        UsageError(fmt::format("diagnose: --fail-on must be info, warning or critical, not '{}'", opt.fail_on)));
  }
  diagnose::DiagnoseOptions options;
  if (!opt.config.empty()) {
    if (Status st = diagnose::load_config(opt.config, options); !st.ok()) return fail(st);
  }
  options.rules = split_list(opt.rules, ',');
  if (!opt.step_marker.empty()) options.steps.marker = opt.step_marker;
  if (Status st = diagnose::check_options(options); !st.ok()) return fail(st);

  std::vector<diagnose::Diagnosis> diagnoses;
  for (const std::string& input : opt.inputs) {
    auto trace = read_trace(input, opt.rank);
    if (!trace.ok()) return fail(trace.status());
    if (Status st = attach_ncu_reports(*trace, opt.ncu); !st.ok()) return fail(st);
    diagnoses.push_back(diagnose::diagnose(*trace, options));
  }

  std::string text;
  if (opt.format == "json") {
    text = diagnose_json(diagnoses);
  } else if (opt.format == "markdown") {
    text = diagnose_markdown(diagnoses);
  } else {
    text = diagnose_text(diagnoses);
  }
  if (Status st = write_text(opt.output, text); !st.ok()) return fail(st);
  if (opt.fail_on.empty()) return kExitOk;
  for (const diagnose::Diagnosis& d : diagnoses) {
    for (const diagnose::Finding& f : d.findings) {
      if (f.severity >= threshold) return kExitFindings;
    }
  }
  return kExitOk;
}

}  // namespace

std::function<int()> add_diagnose_command(CLI::App& app) {
  auto opt = std::make_shared<DiagnoseCommandOptions>();
  CLI::App* cmd = app.add_subcommand("diagnose", "Name the performance problems: evidence, estimated savings, remedy");
  cmd->add_option("inputs", opt->inputs,
                  "Traces: nsys exports, PyTorch traces or rank directories (one diagnosis each)");
  add_format_option(cmd, opt->format, {{"column", ""}, {"json", "schema_version 1"}, {"markdown", ""}}, {"text"});
  add_output_file_option(cmd, opt->output);
  cmd->add_option("--rules", opt->rules, "Only these rules (comma-separated ids; --list-rules shows them)")
      ->allow_extra_args(false);  // `--rules a,b INPUT`: the input is not one more rule
  cmd->add_option("--config", opt->config,
                  "TOML file: [rules.<id>] enabled = false / <param> = value, [steps] marker = NAME");
  cmd->add_option("--fail-on", opt->fail_on, "Exit 1 when a finding reaches this severity: info, warning or critical");
  add_step_marker_option(cmd, opt->step_marker);
  add_rank_option(cmd, opt->rank);
  add_ncu_option(cmd, opt->ncu);
  cmd->add_flag("--list-rules", opt->list_rules, "Print the rules, their parameters and defaults, and exit");
  return [opt] { return run_diagnose(*opt); };
}

}  // namespace tracedoc::cli
