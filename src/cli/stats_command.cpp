// `tracedoc stats`: the `nsys stats` reports, same names, columns and numbers.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "analysis/nsys_stats/nvtx_kernel_names.h"
#include "analysis/report_registry.h"
#include "analysis/trace_filter.h"
#include "cli/commands.h"
#include "common/task_pool.h"
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

struct ReportRequest {
  const ReportDef* def;
  ReportArgs args;
};

struct Precomputed {
  Status status;
  TableSink table;
};

bool is_trace_report(const ReportRequest& r) { return r.def->kind == ReportKind::kTrace; }

// Runs the summary reports on the task pool; entries stay null for trace reports (and when there is
// only one report, which then streams).
std::vector<std::unique_ptr<Precomputed>> precompute_summaries(const Trace& trace,
                                                               const std::vector<ReportRequest>& requests) {
  std::vector<std::unique_ptr<Precomputed>> out(requests.size());
  std::vector<size_t> jobs;
  for (size_t i = 0; i < requests.size(); ++i) {
    if (!is_trace_report(requests[i])) jobs.push_back(i);
  }
  if (jobs.size() < 2) return out;
  for (size_t i : jobs) out[i] = std::make_unique<Precomputed>();
  parallel_for(jobs.size(), [&](size_t j) {
    const size_t i = jobs[j];
    out[i]->status = requests[i].def->run(trace, requests[i].args, out[i]->table);
  });
  return out;
}

int list_reports() {
  for (const auto& r : all_reports()) std::printf("%-24s %s\n", r.name, r.display_name);
  return kExitOk;
}

int run_stats(const StatsOptions& opt) {
  if (opt.list_reports) return list_reports();
  if (opt.in.input.empty()) return fail(UsageError("stats: an INPUT file is required"));

  // Reports and their arguments: "name[:arg[:arg]]", comma-separated, repeatable.
  std::vector<ReportRequest> requests;
  std::vector<std::string> names = split_list(opt.reports, ',');
  if (names.empty()) names = default_reports();
  uint32_t tables = 0;
  std::optional<NamePattern> name_filter;
  if (!opt.filter_name.empty()) {
    auto compiled = NamePattern::compile(opt.filter_name);
    if (!compiled.ok()) return fail(UsageError("--filter-name: " + compiled.status().message()));
    name_filter = std::move(compiled).value();
  }
  for (const auto& n : names) {
    auto parts = split(n, ':');
    const auto* def = find_report(parts[0]);
    if (!def) {
      return fail(UsageError(fmt::format("unknown report '{}' (see `tracedoc stats --help-reports`)", parts[0])));
    }
    ReportRequest req{def, {}};
    req.args.args.assign(parts.begin() + 1, parts.end());
    req.args.name_filter = name_filter;
    tables |= def->tables;
    tables |= nsys_stats::kernel_name_tables(req.args);  // :nvtx-name also reads NVTX and API calls
    requests.push_back(std::move(req));
  }

  auto loaded = load_input(opt.in, tables);
  if (!loaded.ok()) return fail(loaded.status());
  const Trace& trace = loaded->trace;
  const bool timing = std::getenv("TRACEDOC_TIMING") != nullptr;

  // Summary reports are computed on both cores at once and kept in memory; trace reports (one row
  // per event, possibly millions) stream straight to their writer when their turn comes.
  std::vector<std::unique_ptr<Precomputed>> precomputed = precompute_summaries(trace, requests);
  if (timing) std::fprintf(stderr, "timing: summaries done\n");

  std::vector<ReportJob> jobs;
  for (size_t index = 0; index < requests.size(); ++index) {
    const auto& req = requests[index];
    ReportJob job;
    job.name = req.def->name;
    job.display_name = req.def->display_name;
    job.file_stem = req.def->name + loaded->output.filter_suffix;
    for (const auto& a : req.args.args) job.file_stem += "_" + a;
    job.produce = [&, index](RowSink& sink) -> Status {
      if (const auto& pre = precomputed[index]) {
        if (!pre->status.ok()) return pre->status;
        sink.begin(pre->table.columns());
        for (size_t r = 0; r < pre->table.row_count(); ++r) sink.row(pre->table.row_at(r));
        sink.end();
        return Status::Ok();
      }
      return requests[index].def->run(trace, requests[index].args, sink);
    };
    jobs.push_back(std::move(job));
  }
  const int rc = write_reports(jobs, loaded->output);
  if (timing) std::fprintf(stderr, "timing: written\n");
  return rc;
}

}  // namespace

std::function<int()> add_stats_command(CLI::App& app) {
  auto opt = std::make_shared<StatsOptions>();
  CLI::App* cmd = app.add_subcommand("stats", "Summary and trace reports compatible with `nsys stats`");
  add_input_options(cmd, opt->in);
  cmd->add_option("-r,--report", opt->reports, "Reports to run, comma-separated, with optional :args (default: the nsys default set)")
      ->allow_extra_args(false);  // `-r a,b INPUT`: the input is not one more report
  cmd->add_option("--filter-name", opt->filter_name, "Keep kernels / API calls / ranges whose name matches this regular expression");
  cmd->add_flag("--help-reports", opt->list_reports, "List the available reports");
  return [opt] { return run_stats(*opt); };
}

}  // namespace tracedoc::cli
