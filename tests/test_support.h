// Helpers shared by the tests: where the real traces are, running a report to CSV text, CSV parsing.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "analysis/report_registry.h"
#include "common/status.h"
#include "diagnose/engine.h"
#include "model/trace.h"

// The ctest labels of test suite `suite`, declared once, beside its tests:
//   TRACEDOC_TEST_LABELS(HostileJson, unit sanitize);
// CMakeLists.txt reads the declarations and makes each suite one ctest test, run as one process (a
// trace its tests read is read once), with these labels: unit (needs nothing), corpus (reads the
// real traces of ../shared; skips without them), golden (compares with expected outputs), capture
// (the recorder), slow (tens of seconds), sanitize (the AddressSanitizer pass runs it), threads (the
// ThreadSanitizer pass runs it). A suite without a declaration fails the configuration.
#define TRACEDOC_TEST_LABELS(suite, ...) static_assert(true, #suite)

namespace tracedoc::testing {

// Whether a sanitizer instruments this build (the passes of scripts/test-sanitized.sh, where code
// runs 5 to 20 times slower): a test that repeats a costly check over many inputs checks a spread of
// them there, and the Release build checks them all.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
inline constexpr bool kSanitized = true;
#else
inline constexpr bool kSanitized = false;
#endif

// ../shared next to the checkout, or $TRACEDOC_SHARED when set; empty when absent.
std::filesystem::path shared_dir();
std::filesystem::path nsys_traces_dir();

// The real exports of ../shared/traces/nsys by oracle name: "<folder>_<file stem>" -> path (the
// names of the oracles/ folders). Empty when ../shared is absent.
std::map<std::string, std::string> shared_nsys_exports();

// Reads (and caches for the whole test run) an nsys export with every table loaded.
const Trace& load_nsys(const std::string& path);
// The same for a PyTorch profiler trace.
const Trace& load_kineto(const std::string& path);

// Runs a report ("name[:arg...]") and renders it as `tracedoc stats -f csv` would.
// Returns std::nullopt when the report reports NoData (nsys's SKIPPED).
std::optional<std::string> report_csv(const Trace& trace, const std::string& report_with_args);

// The same for an `nsys analyze` rule ("name[:key=value...]"), as `tracedoc analyze -f csv`.
std::optional<std::string> rule_csv(const Trace& trace, const std::string& rule_with_args);

// Two reads of one trace hold the same model: every table column by column (NaN equal to NaN),
// the strings in id order, the warnings, threads, processes, devices and the PyTorch scalars.
// Failures name `what`.
void expect_same_trace(const Trace& a, const Trace& b, const std::string& what);

std::vector<std::vector<std::string>> parse_csv(const std::string& text);

// One CSV cell: equal text, or both numbers with the same value ("12.0" == "12").
bool cell_equal(const std::string& expected, const std::string& actual);

// Equal after parsing: same shape, text cells equal, numeric cells equal as numbers.
// On mismatch, `why` names the first differing cell.
bool csv_equal(const std::string& expected, const std::string& actual, std::string* why);

std::string read_file(const std::filesystem::path& p);
// The bytes of a gzip file, inflated (empty when it cannot be read).
std::string gunzip(const std::filesystem::path& p);

// What a run of the tracedoc binary printed and returned.
struct CliRun {
  int exit_code = -1;
  std::string out, err;
  uint64_t peak_rss = 0;  // the process's peak resident memory, bytes (getrusage's ru_maxrss)
};
// Runs this build's tracedoc (TRACEDOC_BINARY_DIR: build/, or build-asan/ for the sanitized suite)
// with `args`; `path_env` replaces PATH when given; `stdout_path` (e.g. /dev/full) receives standard
// output instead of `out`. A signal N is exit code 128 + N.
CliRun tracedoc(const std::vector<std::string>& args, const std::string& path_env = "",
                const std::string& stdout_path = "");

// What the real `nsys stats -r REPORT -f csv` prints for an export (the blank line it ends with
// taken off), with nsys from PATH or where ../shared/tools/install-nsys.sh puts it; nullopt when no
// nsys is installed. A failing nsys run is a test failure (the text is then empty).
std::optional<std::string> real_nsys_stats(const std::string& report, const std::filesystem::path& sqlite);

// A fresh folder for one test's files, removed with everything in it at the end of the test.
class ScratchDir {
 public:
  ScratchDir();
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  // Writes `bytes` to a file of the folder; returns its path.
  std::filesystem::path write(const std::string& name, const std::string& bytes) const;

 private:
  std::filesystem::path path_;
};

// A shared trace's path under traces/ as a gtest name part ([A-Za-z0-9_]): without "kineto/" and
// the extension.
std::string trace_test_name(std::string path);

std::vector<std::string> split(const std::string& text, char sep);

// A table written by one of the independent reference scripts (tests/kineto/*_reference.py): a
// tab-separated header line, then rows; comment lines start with '#', and "# name = path" comments
// name the traces (paths under shared/traces).
struct ReferenceRow {
  std::map<std::string, std::string> cols;
  const std::string& at(const std::string& c) const { return cols.at(c); }
  int64_t num(const std::string& c) const { return std::stoll(cols.at(c)); }
};
struct ReferenceTable {
  std::map<std::string, std::string> traces;  // trace name -> path under shared/traces
  std::vector<ReferenceRow> rows;             // in file order
};
ReferenceTable read_reference_tsv(const std::filesystem::path& file);

// The cases of a golden folder's cases.txt: each line that is neither empty nor a comment ('#'),
// split into its whitespace-separated fields.
std::vector<std::vector<std::string>> read_case_lines(const std::filesystem::path& cases_txt);

// What a tool recorded for `rule` (with its options) in case `name` of a golden folder:
// expected/<name>/analyze_<rule, ':' as '_'>.csv, or .skipped when it printed SKIPPED.
struct RecordedRule {
  std::string path;
  bool skipped = false;
};
RecordedRule recorded_rule(const std::filesystem::path& golden_dir, const std::string& name, const std::string& rule);

// A diagnosis's finding of a rule (nullptr when it did not fire), and a figure of a finding (a
// test failure when the finding has no such figure).
const diagnose::Finding* finding(const diagnose::Diagnosis& d, const std::string& id);
double figure(const diagnose::Finding& f, const std::string& key);

// A `tracedoc synth` spec of examples/synth (e.g. "straggler") built and written as one PyTorch
// trace per rank into a folder of its own: a rank directory (written once per test process).
std::filesystem::path synth_rank_directory(const std::string& spec_name);

// The first column of the first row of `query` on the SQLite file `path` (opened read-only) as an
// integer: the independent computation a test compares with; -1 when the query returns no row.
int64_t sql_int(const std::string& path, const std::string& query);

// Runs SQL scripts, in order, into a fresh SQLite file in the temporary directory (as the sqlite3
// shell would) and returns its path; `name` makes the file name unique per case. Used to build
// synthetic nsys exports for cases no real export has.
Result<std::string> write_sql_export(const std::vector<std::filesystem::path>& scripts, const std::string& name);

}  // namespace tracedoc::testing
