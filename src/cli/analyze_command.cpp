// `tracedoc analyze`: the `nsys analyze` expert rules, same names, options, columns and rows.
//
//   tracedoc analyze [-r rule[:key=value...],...] [-f csv|column|json|...] [-o BASE] INPUT
//
// Column output prints each rule's advice above its rows (or says that nothing was found), CSV
// and JSON print only the rows. --exit-on-findings makes a run that found anything exit 1, for CI.
#include <fmt/format.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "analysis/nsys_analyze/rules.h"
#include "cli/commands.h"
#include "cli/report_output.h"

namespace tracedoc::cli {

namespace {

struct AnalyzeOptions {
  InputOptions in;
  std::vector<std::string> rules;
  bool list_rules = false;
  bool exit_on_findings = false;
};

struct RuleRequest {
  const nsys_analyze::RuleDef* def;
  nsys_analyze::RuleArgs args;
  std::optional<InputOptions> own_input;  // from start=/end=/nvtx=
};

// A rule's own start=/end=/nvtx= options: the input read again with that filter (explicit times
// override the NVTX range, as in nsys), so the trace the other rules share stays whole.
std::optional<InputOptions> rule_input(const InputOptions& in, const nsys_analyze::RuleArgs& args) {
  const nsys_analyze::RuleInputFilter filter = nsys_analyze::rule_input_filter(args);
  if (!filter.any()) return std::nullopt;
  InputOptions own = in;
  own.filter_time = filter.time;
  own.filter_nvtx = filter.nvtx;
  return own;
}

// Counts the rows a rule emits on their way to the writer.
class CountingSink : public RowSink {
 public:
  explicit CountingSink(RowSink& inner) : inner_(inner) {}
  void begin(const std::vector<ColumnSpec>& columns) override { inner_.begin(columns); }
  void row(std::span<const Cell> cells) override {
    ++rows_;
    inner_.row(cells);
  }
  void end() override { inner_.end(); }
  size_t rows() const { return rows_; }

 private:
  RowSink& inner_;
  size_t rows_ = 0;
};

int list_rules() {
  for (const auto& r : nsys_analyze::all_rules()) std::printf("%-20s %s\n", r.name, r.display_name);
  return kExitOk;
}

int run_analyze(const AnalyzeOptions& opt) {
  if (opt.list_rules) return list_rules();
  if (opt.in.input.empty()) return fail(UsageError("analyze: an INPUT file is required"));

  std::vector<std::string> names = split_list(opt.rules, ',');
  if (names.empty()) names = nsys_analyze::default_rules();
  std::vector<RuleRequest> requests;
  uint32_t tables = 0;
  for (const auto& n : names) {
    auto parts = split(n, ':');
    const auto* def = nsys_analyze::find_rule(parts[0]);
    if (!def) return fail(UsageError(fmt::format("unknown rule '{}' (see `tracedoc analyze --help-rules`)", parts[0])));
    auto args = nsys_analyze::parse_rule_args(def->name, {parts.begin() + 1, parts.end()});
    if (!args.ok()) return fail(args.status());
    auto own = rule_input(opt.in, *args);
    if (own) {
      auto filter = parse_filter(*own);  // a bad window is a usage error before anything is read
      if (!filter.ok()) return fail(filter.status());
    }
    tables |= def->tables;
    requests.push_back({def, std::move(*args), std::move(own)});
  }

  auto loaded = load_input(opt.in, tables);
  if (!loaded.ok()) return fail(loaded.status());
  const Trace& trace = loaded->trace;

  size_t findings = 0;
  std::vector<ReportJob> jobs;
  for (const RuleRequest& req : requests) {
    ReportJob job;
    job.name = req.def->name;
    job.display_name = req.def->display_name;
    job.file_stem = req.def->name + loaded->output.filter_suffix;
    for (const auto& a : req.args.raw) job.file_stem += "_" + a;
    job.advice = req.def->advice(req.args);
    job.no_rows_message = req.def->no_problem(req.args);
    job.produce = [&trace, &req, &findings, tables](RowSink& sink) -> Status {
      CountingSink counting(sink);
      Status st;
      if (req.own_input) {
        TRACEDOC_ASSIGN_OR_RETURN(auto own, load_input(*req.own_input, tables));
        st = req.def->run(own.trace, req.args, counting);
      } else {
        st = req.def->run(trace, req.args, counting);
      }
      findings += counting.rows();
      return st;
    };
    jobs.push_back(std::move(job));
  }
  const int rc = write_reports(jobs, loaded->output);
  if (rc != kExitOk) return rc;
  return opt.exit_on_findings && findings > 0 ? kExitFindings : kExitOk;
}

}  // namespace

std::function<int()> add_analyze_command(CLI::App& app) {
  auto opt = std::make_shared<AnalyzeOptions>();
  CLI::App* cmd = app.add_subcommand(
      "analyze", "Expert rules compatible with `nsys analyze`: sync copies, sync calls, GPU gaps, low GPU utilization");
  add_input_options(cmd, opt->in);
  cmd->add_option("-r,--rule", opt->rules,
                  "Rules to run, comma-separated, with :key=value options (rows=, gap=, threshold=, chunks=, "
                  "process=, thread=, start=, end=, nvtx=) (default: all)")
      ->allow_extra_args(false);
  cmd->add_flag("--exit-on-findings", opt->exit_on_findings, "Exit with 1 when any rule lists a row (for CI)");
  cmd->add_flag("--help-rules", opt->list_rules, "List the available rules");
  return [opt] { return run_analyze(*opt); };
}

}  // namespace tracedoc::cli
