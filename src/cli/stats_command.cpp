// `tracedoc stats`: the `nsys stats` reports, same names, columns and numbers.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <chrono>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "analysis/report_registry.h"
#include "analysis/report_runs.h"
#include "cli/commands.h"
#include "cli/report_output.h"
#include "report/writers.h"

namespace tracedoc::cli {

namespace {

struct StatsOptions {
  InputOptions in;
  std::vector<std::string> reports;
  std::string filter_name;
  bool list_reports = false;
};

int list_reports() {
  for (const auto& r : all_reports()) std::printf("%-24s %s\n", r.name, r.display_name);
  return kExitOk;
}

int run_stats(const StatsOptions& opt) {
  if (opt.list_reports) return list_reports();
  if (opt.in.input.empty()) return fail(UsageError("stats: an INPUT file is required"));

  // Reports and their arguments: "name[:arg[:arg]]", comma-separated, repeatable.
  std::vector<std::string> names = split_list(opt.reports, ',');
  if (names.empty()) names = default_reports();
  std::optional<NamePattern> name_filter;
  if (!opt.filter_name.empty()) {
    auto compiled = NamePattern::compile(opt.filter_name);
    if (!compiled.ok()) return fail(UsageError("--filter-name: " + compiled.status().message()));
    name_filter = std::move(compiled).value();
  }
  auto parsed = report_requests(names, name_filter);
  if (!parsed.ok()) return fail(parsed.status());
  const std::vector<ReportRequest>& requests = *parsed;
  const uint32_t tables = tables_read(requests);

  auto loaded = load_input(opt.in, tables, columns_read(requests));
  if (!loaded.ok()) return fail(loaded.status());
  const Trace& trace = loaded->trace;
  const bool timing = std::getenv("TRACEDOC_TIMING") != nullptr;
  const auto t_read = std::chrono::steady_clock::now();
  auto since_read = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t_read).count(); };

  const ReportRuns runs(trace, requests);
  if (timing) std::fprintf(stderr, "timing: summaries done %.3f s after the read\n", since_read());

  std::vector<ReportJob> jobs;
  for (size_t index = 0; index < requests.size(); ++index) {
    const auto& req = requests[index];
    ReportJob job;
    job.name = req.def->name;
    job.display_name = req.def->display_name;
    job.file_stem = req.def->name + loaded->output.filter_suffix;
    for (const auto& a : req.args.args) job.file_stem += "_" + a;
    job.produce = [&runs, index](RowSink& sink) { return runs.produce(index, sink); };
    jobs.push_back(std::move(job));
  }
  const int rc = write_reports(jobs, loaded->output);
  if (timing) std::fprintf(stderr, "timing: written %.3f s after the read\n", since_read());
  return rc;
}

}  // namespace

std::function<int()> add_stats_command(CLI::App& app) {
  auto opt = std::make_shared<StatsOptions>();
  CLI::App* cmd = app.add_subcommand("stats", "Summary and trace reports compatible with `nsys stats`");
  add_input_options(cmd, opt->in);
  cmd->add_option("-r,--report", opt->reports,
                  "Reports to run, comma-separated, with optional :args (default: the nsys default set)")
      ->allow_extra_args(false);  // `-r a,b INPUT`: the input is not one more report
  cmd->add_option("--filter-name", opt->filter_name,
                  "Keep kernels / API calls / ranges whose name matches this regular expression");
  cmd->add_flag("--help-reports", opt->list_reports, "List the available reports");
  return [opt] { return run_stats(*opt); };
}

}  // namespace tracedoc::cli
