// `tracedoc sql`: SQL over the normalized model (src/report/sql_model.h, docs/sql.md), the same tables
// for nsys exports and PyTorch traces, with the diagnosis's findings as a table too.
//
//   tracedoc sql INPUT "SELECT ..." [-f column|table|csv|tsv|json] [-o BASE] [--rank N]

#include <memory>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/report_output.h"
#include "cli/shared_options.h"
#include "report/sql_model.h"

namespace tracedoc::cli {

namespace {

struct SqlOptions {
  InputOptions in;
  std::string query;
};

int run_sql(const SqlOptions& opt) {
  if (opt.in.input.empty() || opt.query.empty()) return fail(UsageError("sql: INPUT and a QUERY are required"));
  auto loaded = load_input(opt.in, kLoadAll);
  if (!loaded.ok()) return fail(loaded.status());
  // The query runs before anything is written, so a bad query leaves no output file.
  TableSink rows;
  if (Status st = run_sql_query(loaded->trace, opt.in.input, opt.query, rows); !st.ok()) return fail(st);
  std::vector<ReportJob> jobs(1);
  jobs[0].name = "sql";
  jobs[0].display_name = "Query";
  jobs[0].file_stem = "sql";
  jobs[0].produce = [&rows](RowSink& sink) -> Status {
    sink.begin(rows.columns());
    for (size_t r = 0; r < rows.row_count(); ++r) sink.row(rows.row_at(r));
    sink.end();
    return Status::Ok();
  };
  return write_reports(jobs, loaded->output);
}

}  // namespace

std::function<int()> add_sql_command(CLI::App& app) {
  auto opt = std::make_shared<SqlOptions>();
  CLI::App* cmd =
      app.add_subcommand("sql",
                         "Run a SELECT over the trace as SQL tables (every model table: kernels, memcpy, api, ranges, "
                         "ops, ...; steps, memory, findings; tracedoc_columns describes them)");
  cmd->add_option("input", opt->in.input, "Nsight Systems export, PyTorch trace or rank directory");
  cmd->add_option("query", opt->query, "One SELECT (docs/sql.md lists the tables and columns)");
  add_report_format_option(cmd, opt->in.format);
  cmd->add_option("-o,--output", opt->in.output, "'-' for stdout, or a base name: BASE_sql.<ext>");
  add_rank_option(cmd, opt->in.rank);
  add_ncu_option(cmd, opt->in.ncu);
  return [opt] { return run_sql(*opt); };
}

}  // namespace tracedoc::cli
