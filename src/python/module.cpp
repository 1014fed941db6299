// The `tracedoc._tracedoc` extension: the engine behind the Python package (python/tracedoc). It
// opens traces with the readers the CLI uses, hands tables and report rows to pyarrow through the
// Arrow C data interface (report/arrow_export.h) and the summary and diagnosis as the CLI's JSON;
// python/tracedoc/__init__.py turns those into DataFrames and Python objects. Every engine error
// becomes a tracedoc.TraceError carrying the CLI's one-line message, never a crash: the engine's
// errors are values (Status), turned into the exception here, at the module's edge.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <signal.h>

#include <memory>
#include <mutex>
#include <shared_mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "analysis/nsys_analyze/rules.h"
#include "analysis/report_registry.h"
#include "analysis/report_runs.h"
#include "analysis/summary.h"
#include "analysis/trace_filter.h"
#include "budget/evaluate.h"
#include "budget/measures.h"
#include "common/text.h"
#include "compare/diff_parts.h"
#include "compare/trace_diff.h"
#include "common/memory_budget.h"
#include "common/stop_request.h"
#include "common/task_pool.h"
#include "common/utf8.h"
#include "diagnose/engine.h"
#include "diagnose/parts.h"
#include "ingest/kineto_reader.h"
#include "ingest/open_trace.h"
#include "ingest/read_warnings.h"
#include "report/arrow_export.h"
#include "report/check_writer.h"
#include "report/diagnose_writer.h"
#include "report/diff_writer.h"
#include "report/html_view_writer.h"
#include "report/output_file.h"
#include "report/sql_model.h"
#include "report/summary_writer.h"
#include "view/view_model.h"

namespace nb = nanobind;

namespace tracedoc::python {
namespace {

// A Status that is not ok, as the exception the module registers as tracedoc.TraceError. Its message
// is valid UTF-8 (a damaged export's table and column names hold any bytes), so that Python gets
// the message, not a UnicodeDecodeError in its place.
struct TraceError : std::runtime_error {
  explicit TraceError(const std::string& message) : std::runtime_error(replace_invalid_utf8(message)) {}
};
// A report the trace has no data for (the CLI's SKIPPED line): tracedoc.NoDataError, a TraceError.
struct NoDataError : std::runtime_error {
  explicit NoDataError(const std::string& message) : std::runtime_error(replace_invalid_utf8(message)) {}
};

// Work the user stopped with Ctrl-C (ErrorCode::kInterrupted): KeyboardInterrupt, as Python code
// stopped there would raise. Called with the GIL.
[[noreturn]] void raise_interrupted() {
  // Python's own handler runs now (the interrupt was passed on when the work ended) and raises.
  if (PyErr_CheckSignals() != 0) throw nb::python_error();
  PyErr_SetNone(PyExc_KeyboardInterrupt);  // not the main thread: its handler runs later
  throw nb::python_error();
}

void raise_if_error(const Status& st) {
  if (st.code() == ErrorCode::kInterrupted) raise_interrupted();
  if (!st.ok()) throw TraceError(st.message());
}

template <typename T>
T value_or_raise(Result<T> r) {
  raise_if_error(r.status());
  return std::move(r).value();
}

void free_schema(void* p) noexcept {
  auto* schema = static_cast<ArrowSchema*>(p);
  if (schema->release) schema->release(schema);
  delete schema;
}

void free_array(void* p) noexcept {
  auto* array = static_cast<ArrowArray*>(p);
  if (array->release) array->release(array);
  delete array;
}

// The pair of PyCapsules of the Arrow PyCapsule interface ("arrow_schema", "arrow_array"): pyarrow
// takes the structs over (and marks them released); the capsules free what it did not take.
nb::tuple capsules(ArrowSchema* schema, ArrowArray* array) {
  return nb::make_tuple(nb::capsule(schema, "arrow_schema", free_schema),
                        nb::capsule(array, "arrow_array", free_array));
}

template <typename Export>
nb::tuple export_capsules(Export&& fill) {
  auto schema = std::make_unique<ArrowSchema>();
  auto array = std::make_unique<ArrowArray>();
  *schema = ArrowSchema{};
  *array = ArrowArray{};
  raise_if_error(fill(array.get(), schema.get()));
  return capsules(schema.release(), array.release());
}

// The task pool may only be resized between pieces of engine work (common/task_pool.h), and
// Python threads (a notebook's, a Dask worker's) call into the engine at once: every call that
// runs engine work holds this lock shared, a load that asks for another thread count takes it
// alone to resize the pool. The GIL is released first, so that no thread waits for the lock
// holding the GIL another needs.
std::shared_mutex& pool_lock() {
  static std::shared_mutex lock;
  return lock;
}

// While the engine runs without the GIL, Python cannot run its SIGINT handler, so Ctrl-C would wait
// for the work to end. Meanwhile SIGINT requests a stop instead (common/stop_request.h), which the
// long loops poll; when the last such piece of work ends, Python's handler is back and the
// interrupt is passed on to it (PyErr_SetInterrupt), raised as KeyboardInterrupt. A SIGINT that
// Python ignores stays ignored.
class StopOnInterrupt {
 public:
  StopOnInterrupt() {
    std::lock_guard lock(mutex());
    if (users()++ > 0) return;
    StopRequest::clear();
    struct sigaction ours {};
    ours.sa_handler = [](int) { StopRequest::request(); };
    sigemptyset(&ours.sa_mask);
    installed() = ::sigaction(SIGINT, nullptr, &saved()) == 0 && saved().sa_handler != SIG_IGN &&
                  ::sigaction(SIGINT, &ours, nullptr) == 0;
  }
  ~StopOnInterrupt() {
    std::lock_guard lock(mutex());
    if (--users() > 0 || !installed()) return;
    ::sigaction(SIGINT, &saved(), nullptr);
    installed() = false;
    if (StopRequest::requested()) PyErr_SetInterrupt();  // async-signal-safe, needs no GIL
  }
  StopOnInterrupt(const StopOnInterrupt&) = delete;
  StopOnInterrupt& operator=(const StopOnInterrupt&) = delete;

 private:
  static std::mutex& mutex() {
    static std::mutex m;
    return m;
  }
  static int& users() {
    static int n = 0;
    return n;
  }
  static bool& installed() {
    static bool b = false;
    return b;
  }
  static struct sigaction& saved() {
    static struct sigaction s {};
    return s;
  }
};

struct EngineWork {
  nb::gil_scoped_release unlocked;
  StopOnInterrupt interruptible;
  std::shared_lock<std::shared_mutex> shared{pool_lock()};
};

// The rows `produce` writes into a TableSink (engine work, without the GIL) as Arrow capsules, typed
// as the CSV prints them (report/arrow_export.h); an error Status raises.
template <typename Produce>
nb::tuple rows_capsules(Produce&& produce) {
  TableSink rows;
  Status st;
  {
    EngineWork work;
    st = produce(rows);
  }
  raise_if_error(st);
  return export_capsules([&](ArrowArray* a, ArrowSchema* s) { return export_report(rows, UnitChoice{}, a, s); });
}

// `tracedoc summary`'s options: --top, --gap-ms, --step-marker.
SummaryOptions summary_options(size_t top, double gap_ms, const std::string& step_marker) {
  SummaryOptions options;
  options.top = top;
  const auto gap = gap_threshold_from_ms(gap_ms);
  if (!gap.ok()) throw TraceError("summary: gap_ms: " + gap.status().message());
  options.gap_threshold_ns = *gap;
  if (!step_marker.empty()) options.steps.marker = step_marker;
  return options;
}

// A budget file, its [steps] marker overridden when `step_marker` is given (check's --step-marker).
budget::Budget load_budget_for(const std::string& path, const std::string& step_marker) {
  budget::Budget b = value_or_raise(budget::load_budget(path));
  if (!step_marker.empty()) b.step_marker = step_marker;
  return b;
}

// How a trace was read: what a rule with its own window reads again.
struct ReadSettings {
  std::string path;
  int64_t rank = -1;
};

// Opens and, when a filter is given, filters a trace (the CLI's --filter-time / --filter-nvtx /
// --all-ranks). Runs without the GIL.
Result<Trace> read_filtered(const ReadSettings& read, const TraceFilter& filter) {
  OpenOptions options;
  options.nsys.tables = kLoadAll;
  options.rank = read.rank;
  TRACEDOC_ASSIGN_OR_RETURN(auto trace, open_trace(read.path, options));
  if (filter.window || filter.nvtx) TRACEDOC_RETURN_IF_ERROR(apply_filter(trace, filter));
  return trace;
}

// The diagnosis's options from a configuration file (empty: the defaults).
diagnose::DiagnoseOptions diagnose_options(const std::string& config) {
  diagnose::DiagnoseOptions options;
  if (!config.empty()) raise_if_error(diagnose::load_config(config, options));
  return options;
}

// `tracedoc diff`'s options, checked as the CLI checks them.
compare::DiffOptions diff_options(double alpha, double min_change, const std::string& step_marker, bool findings,
                                  const std::string& config) {
  compare::DiffOptions options;
  options.alpha = alpha;
  options.min_change_pct = min_change;
  options.findings = findings;
  if (!config.empty()) raise_if_error(diagnose::load_config(config, options.diagnose));
  options.steps = options.diagnose.steps;
  if (!step_marker.empty()) options.steps.marker = step_marker;
  raise_if_error(compare::check_options(options));
  return options;
}

// One opened trace. The model is shared with every Arrow table exported from it, which keeps it
// alive as long as any of them is.
class PyTrace {
 public:
  PyTrace(std::shared_ptr<Trace> trace, ReadSettings read)
      : trace_(std::move(trace)), read_(std::move(read)), exporter_(trace_) {}
  const Trace& trace() const { return *trace_; }

  nb::tuple table(const std::string& name) {
    return export_capsules([&](ArrowArray* a, ArrowSchema* s) { return exporter_.export_table(name, a, s); });
  }

  // The rows of one `tracedoc stats` report ("name[:arg...]"), under the CSV's default units.
  nb::tuple report(const std::string& request, const std::string& filter_name) {
    std::optional<NamePattern> pattern;
    if (!filter_name.empty()) pattern = value_or_raise(NamePattern::compile(filter_name));
    const auto requests = value_or_raise(report_requests({request}, pattern));
    return rows_capsules([&](TableSink& rows) {
      const Status st = ReportRuns(*trace_, requests).produce(0, rows);
      // Thrown without the GIL: unwinding takes it back before nanobind translates the exception.
      if (st.code() == ErrorCode::kNoData) throw NoDataError("SKIPPED: " + st.message());
      return st;
    });
  }

  // `tracedoc sql`'s rows for one read-only query.
  nb::tuple sql(const std::string& query) {
    return rows_capsules([&](TableSink& rows) { return run_sql_query(*trace_, trace_->source.path, query, rows); });
  }

  // `tracedoc analyze -r RULE[:key=value...]`'s rows. A rule with its own start=/end=/nvtx= reads
  // the trace again with that filter, as the CLI does.
  nb::tuple analyze(const std::string& request) {
    const std::vector<std::string> parts = split(request, ':');
    const auto* def = nsys_analyze::find_rule(parts[0]);
    if (!def) throw TraceError("unknown rule '" + parts[0] + "' (tracedoc.rules() lists them)");
    const auto args = value_or_raise(nsys_analyze::parse_rule_args(def->name, {parts.begin() + 1, parts.end()}));
    const nsys_analyze::RuleInputFilter own = nsys_analyze::rule_input_filter(args);
    const TraceFilter filter = value_or_raise(parse_filter(own.time, own.nvtx, false));
    return rows_capsules([&](TableSink& rows) -> Status {
      if (!own.any()) return def->run(*trace_, args, rows);
      TRACEDOC_ASSIGN_OR_RETURN(auto filtered, read_filtered(read_, filter));
      return def->run(filtered, args, rows);
    });
  }

  // `tracedoc check INPUT --budget FILE -f json`; the baseline is a trace already read, or a path
  // (`baseline_path`, else the budget's own [baseline] path).
  std::string check_json(const std::string& budget_path, const PyTrace* baseline, const std::string& baseline_path,
                         const std::string& step_marker) {
    const budget::Budget b = load_budget_for(budget_path, step_marker);
    if (baseline && !b.compares_baseline()) {
      throw TraceError("check: baseline: the budget " + b.path + " sets no [baseline] limit");
    }
    const std::string base_path =
        baseline ? std::string() : value_or_raise(budget::baseline_trace_path(b, baseline_path, "baseline="));
    Result<std::string> json = BadInput("not checked");
    {
      EngineWork work;
      json = [&]() -> Result<std::string> {
        const budget::Measures current = budget::measure(*trace_, b);
        std::optional<budget::Measures> base;
        if (baseline) {
          base = budget::measure(baseline->trace(), b, budget::MeasureScope::kBaseline);
        } else if (!base_path.empty()) {
          TRACEDOC_ASSIGN_OR_RETURN(auto base_trace, read_filtered({base_path, read_.rank}, {}));
          base = budget::measure(base_trace, b, budget::MeasureScope::kBaseline);
        }
        return ::tracedoc::check_json(budget::evaluate(b, current, base ? &*base : nullptr));
      }();
    }
    return value_or_raise(std::move(json));
  }

  // The budget's measures of this trace (budget/measures.h) as bytes, for a merge elsewhere
  // (tracedoc.distributed.check); `baseline`: only what a baseline comparison reads. `index`,
  // `files`, and the pair returned: as diagnose_part.
  std::pair<nb::bytes, bool> measure_part(const std::string& budget_path, const std::string& step_marker, bool baseline,
                                          int64_t index, int64_t files) {
    const budget::Budget b = load_budget_for(budget_path, step_marker);
    const budget::MeasureScope scope = baseline ? budget::MeasureScope::kBaseline : budget::MeasureScope::kAll;
    return rank_part(index,
                     [&] { return budget::encode_measure_part(budget::measure_part(*trace_, b, scope, files > 1)); });
  }

  // `tracedoc view`'s page.
  std::string view_html(const std::string& colors, const std::string& window, int64_t max_events, bool findings,
                        const std::string& config, const std::string& step_marker) {
    const view::ViewOptions options =
        value_or_raise(view::view_options({colors, window, max_events, findings, config, step_marker}));
    EngineWork work;
    return render_view_html(*trace_, view::build_view(*trace_, options));
  }

  std::string summary_json(size_t top, double gap_ms, const std::string& step_marker) {
    const SummaryOptions options = summary_options(top, gap_ms, step_marker);
    EngineWork work;
    return ::tracedoc::summary_json({summarize(*trace_, options)});
  }

  // The summary's part (analysis/summary.h) as bytes, for a merge elsewhere (tracedoc.distributed);
  // the kernels' durations in sketches of `quantile_capacity` values (0: all of them).
  nb::bytes summary_part(double gap_ms, const std::string& step_marker, uint32_t quantile_capacity) {
    SummaryOptions options = summary_options(0, gap_ms, step_marker);
    options.quantile_capacity = quantile_capacity;
    std::string bytes;
    {
      EngineWork work;
      bytes = encode_summary_part(::tracedoc::summary_part(*trace_, options));
    }
    return nb::bytes(bytes.data(), bytes.size());
  }

  std::string diagnose_json(const std::string& config) {
    const diagnose::DiagnoseOptions options = diagnose_options(config);
    EngineWork work;
    return ::tracedoc::diagnose_json({diagnose::diagnose(*trace_, options)});
  }

  // The diagnosis's part (diagnose/parts.h) as bytes, for a merge elsewhere (tracedoc.distributed),
  // this trace being rank file `index` (-1: a trace on its own) of `files`; and whether the trace
  // took `index` as its rank (it had none), so that the merge can tell whether the part depends on
  // that guess.
  std::pair<nb::bytes, bool> diagnose_part(const std::string& config, int64_t index, int64_t files) {
    const diagnose::DiagnoseOptions options = diagnose_options(config);
    return rank_part(
        index, [&] { return diagnose::encode_diagnose_part(diagnose::diagnose_part(*trace_, options, files > 1)); });
  }

  // The same for `tracedoc diff` (compare/diff_parts.h).
  std::pair<nb::bytes, bool> diff_part(double alpha, double min_change, const std::string& step_marker, bool findings,
                                       const std::string& config, int64_t index, int64_t files) {
    const compare::DiffOptions options = diff_options(alpha, min_change, step_marker, findings, config);
    return rank_part(index, [&] { return compare::encode_diff_part(compare::diff_part(*trace_, options, files > 1)); });
  }

  std::string path() const { return replace_invalid_utf8(trace_->source.path); }
  // What the read left to say, one line each (ingest/read_warnings.h): TraceWarnings.
  std::vector<std::string> read_warnings() const {
    std::vector<std::string> lines = read_warning_lines(*trace_);
    for (std::string& line : lines) line = replace_invalid_utf8(line);
    return lines;
  }
  std::string format() const { return trace_->source.format; }
  std::vector<std::pair<std::string, size_t>> row_counts() const {
    std::vector<std::pair<std::string, size_t>> out;
    for_each_table(*trace_, [&](const TableInfo& info, const auto& t) { out.emplace_back(info.name, t.size()); });
    return out;
  }

 private:
  // `part()`'s bytes, computed with the trace holding rank `index` when it has none.
  template <typename Part>
  std::pair<nb::bytes, bool> rank_part(int64_t index, Part part) {
    std::string bytes;
    bool assumed = false;
    {
      EngineWork work;
      assumed = index >= 0 && diagnose::assume_rank(*trace_, index);
      bytes = part();
      if (assumed) trace_->pytorch.rank = -1;  // the trace as it was read
    }
    return {nb::bytes(bytes.data(), bytes.size()), assumed};
  }

  std::shared_ptr<Trace> trace_;  // changed only for the while of rank_part
  ReadSettings read_;
  ArrowTraceExporter exporter_;
};

PyTrace* load(const std::string& path, std::optional<int64_t> rank, std::optional<std::string> max_memory,
              std::optional<int> threads, const std::string& filter_time, const std::string& filter_nvtx,
              bool all_ranks) {
  if (threads && *threads < 1) throw TraceError("threads must be at least 1");
  const uint64_t limit = max_memory ? value_or_raise(parse_memory_size(*max_memory)) : MemoryBudget::default_limit();
  const TraceFilter filter = value_or_raise(parse_filter(filter_time, filter_nvtx, all_ranks));
  const ReadSettings read{path, rank.value_or(-1)};
  Result<Trace> trace = BadInput("not read");
  {
    nb::gil_scoped_release unlocked;
    StopOnInterrupt interruptible;
    const int wanted = threads.value_or(0) > 0 ? *threads : usable_cores();
    if (wanted != thread_count()) {
      std::unique_lock alone(pool_lock());
      set_thread_count(wanted);
    }
    std::shared_lock shared(pool_lock());
    MemoryBudget::set_subject(path);  // process-wide, as the limit: the last load's
    MemoryBudget::set_limit(limit);   // the readers' checks; no watchdog, which would end the interpreter
    trace = read_filtered(read, filter);
  }
  raise_if_error(trace.status());
  return new PyTrace(std::make_shared<Trace>(std::move(trace).value()), read);
}

// `tracedoc diff BASE NEW -f json`.
std::string diff_of(const PyTrace& base, const PyTrace& next, double alpha, double min_change,
                    const std::string& step_marker, bool findings, const std::string& config) {
  const compare::DiffOptions options = diff_options(alpha, min_change, step_marker, findings, config);
  EngineWork work;
  return ::tracedoc::diff_json(compare::diff_traces(base.trace(), next.trace(), options));
}

// Parts gathered from the workers, decoded; bytes that are not such a part raise TraceError.
template <typename Part>
std::vector<Part> decode_parts(const std::vector<nb::bytes>& parts, Result<Part> (*decode)(std::string_view)) {
  std::vector<Part> out;
  for (const nb::bytes& b : parts) out.push_back(value_or_raise(decode({b.c_str(), b.size()})));
  return out;
}

// The summary of rank parts (PyTrace::summary_part), merged as the rank directory `directory` (empty:
// the parts taken as they come), as `tracedoc summary -f json` prints it.

std::string merge_summary_parts_json(const std::vector<nb::bytes>& parts, size_t top, const std::string& directory) {
  std::vector<SummaryPart> decoded = decode_parts(parts, decode_summary_part);
  SummaryOptions options;
  options.top = top;
  EngineWork work;
  return summary_json({merge_summary_parts(std::move(decoded), options, directory)});
}

// `tracedoc check DIR --budget FILE -f json` from the measure parts of the job's rank files (and of
// the baseline's, when the budget compares one), merged as rank directories.
// The diagnosis of rank parts (PyTrace::diagnose_part), as `tracedoc diagnose DIR -f json` prints it.
std::string merge_diagnose_parts_json(const std::vector<nb::bytes>& parts, const std::string& config,
                                      const std::string& directory) {
  const diagnose::DiagnoseOptions options = diagnose_options(config);
  std::vector<diagnose::DiagnosePart> decoded = decode_parts(parts, diagnose::decode_diagnose_part);
  EngineWork work;
  return ::tracedoc::diagnose_json(
      {value_or_raise(diagnose::merge_diagnose_parts(std::move(decoded), options, directory))});
}

// The diff of two jobs' rank parts (PyTrace::diff_part), as `tracedoc diff BASE NEW -f json` prints it.
std::string diff_parts_json(const std::vector<nb::bytes>& base_parts, const std::string& base_directory,
                            const std::vector<nb::bytes>& new_parts, const std::string& new_directory, double alpha,
                            double min_change, const std::string& step_marker, bool findings,
                            const std::string& config) {
  const compare::DiffOptions options = diff_options(alpha, min_change, step_marker, findings, config);
  std::vector<compare::DiffPart> base = decode_parts(base_parts, compare::decode_diff_part);
  std::vector<compare::DiffPart> next = decode_parts(new_parts, compare::decode_diff_part);
  EngineWork work;
  compare::DiffSide base_side = value_or_raise(compare::merge_diff_parts(std::move(base), options, base_directory));
  compare::DiffSide new_side = value_or_raise(compare::merge_diff_parts(std::move(next), options, new_directory));
  return ::tracedoc::diff_json(value_or_raise(compare::diff_sides(std::move(base_side), std::move(new_side), options)));
}

std::string check_parts_json(const std::string& budget_path, const std::string& step_marker,
                             const std::vector<nb::bytes>& parts, const std::string& directory,
                             const std::optional<std::vector<nb::bytes>>& baseline_parts,
                             const std::string& baseline_directory) {
  const budget::Budget b = load_budget_for(budget_path, step_marker);
  std::vector<budget::MeasurePart> current = decode_parts(parts, budget::decode_measure_part);
  std::optional<std::vector<budget::MeasurePart>> base;
  if (baseline_parts) base = decode_parts(*baseline_parts, budget::decode_measure_part);
  EngineWork work;
  const budget::Measures measured = value_or_raise(budget::merge_measure_parts(std::move(current), b, directory));
  std::optional<budget::Measures> base_measured;
  if (base) base_measured = value_or_raise(budget::merge_measure_parts(std::move(*base), b, baseline_directory));
  return check_json(budget::evaluate(b, measured, base_measured ? &*base_measured : nullptr));
}

// Before a job is checked rank by rank: the baseline its budget reads (`given`, else the budget's
// [baseline] path; empty without one).
std::string job_check_baseline(const std::string& budget_path, const std::string& given) {
  const budget::Budget b = load_budget_for(budget_path, "");
  return value_or_raise(budget::baseline_trace_path(b, given, "baseline="));
}

}  // namespace
}  // namespace tracedoc::python

NB_MODULE(_tracedoc, m) {
  using namespace tracedoc;
  using namespace tracedoc::python;
  m.doc() = "tracedoc's engine (use the tracedoc package, not this module)";
  nb::exception<TraceError> trace_error(m, "TraceError");
  nb::exception<NoDataError>(m, "NoDataError", trace_error);

  m.def("load", &load, nb::arg("path"), nb::arg("rank") = nb::none(), nb::arg("max_memory") = nb::none(),
        nb::arg("threads") = nb::none(), nb::arg("filter_time") = "", nb::arg("filter_nvtx") = "",
        nb::arg("all_ranks") = false, nb::rv_policy::take_ownership);
  m.def("diff_json", &diff_of);
  m.def("merge_summary_parts_json", &merge_summary_parts_json);
  m.def("merge_diagnose_parts_json", &merge_diagnose_parts_json);
  m.def("diff_parts_json", &diff_parts_json);
  m.def("check_parts_json", &check_parts_json, nb::arg("budget"), nb::arg("step_marker"), nb::arg("parts"),
        nb::arg("directory"), nb::arg("baseline_parts").none(), nb::arg("baseline_directory"));
  m.def("job_check_baseline", &job_check_baseline);
  m.def("rank_files", &kineto_files_in);  // the files read_kineto_directory reads, by name
  // A file written as the CLI writes its outputs (report/output_file.h): whole or not at all, a
  // device or FIFO in place. View.save and Trace.to_parquet.
  m.def("write_output", [](const std::string& path, nb::bytes data) {
    Status st;
    {
      nb::gil_scoped_release unlocked;
      st = write_output(path, std::string_view(data.c_str(), data.size()));
    }
    raise_if_error(st);
  });
  m.def("rule_names", [] {
    std::vector<std::pair<std::string, std::string>> out;
    for (const auto& r : nsys_analyze::all_rules()) out.emplace_back(r.name, r.display_name);
    return out;
  });
  m.def("usable_cores", &usable_cores);
  m.def("report_names", [] {
    std::vector<std::pair<std::string, std::string>> out;
    for (const auto& r : all_reports()) out.emplace_back(r.name, r.display_name);
    return out;
  });
  m.def("default_reports", &default_reports);
  m.def("table_declarations", [] {
    // [(table, [(column, arrow type, unit, description), ...]), ...]
    std::vector<std::pair<std::string, std::vector<std::vector<std::string>>>> out;
    for (const ArrowTableInfo& t : arrow_tables()) {
      std::vector<std::vector<std::string>> columns;
      for (const ArrowColumnInfo& c : t.columns) columns.push_back({c.name, c.type, c.unit, c.description});
      out.emplace_back(t.name, std::move(columns));
    }
    return out;
  });

  nb::class_<PyTrace>(m, "Trace")
      .def("table", &PyTrace::table)
      .def("report", &PyTrace::report, nb::arg("request"), nb::arg("filter_name") = "")
      .def("sql", &PyTrace::sql)
      .def("analyze", &PyTrace::analyze)
      .def("check_json", &PyTrace::check_json, nb::arg("budget"), nb::arg("baseline").none(), nb::arg("baseline_path"),
           nb::arg("step_marker"))
      .def("view_html", &PyTrace::view_html)
      .def("summary_json", &PyTrace::summary_json)
      .def("summary_part", &PyTrace::summary_part)
      .def("diagnose_part", &PyTrace::diagnose_part)
      .def("diff_part", &PyTrace::diff_part)
      .def("measure_part", &PyTrace::measure_part)
      .def("diagnose_json", &PyTrace::diagnose_json)
      .def("row_counts", &PyTrace::row_counts)
      .def("read_warnings", &PyTrace::read_warnings)
      .def_prop_ro("path", &PyTrace::path)
      .def_prop_ro("format", &PyTrace::format);
}
