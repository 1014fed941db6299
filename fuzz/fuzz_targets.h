// The bodies of the libFuzzer targets, header-only so that two programs run the very same code:
// the fuzzers (fuzz/fuzz_<name>.cpp, built with TRACEDOC_FUZZ=ON) and the regression test
// (tests/fuzz_regression_test.cpp, in every build, sanitized or not), which replays each input of
// fuzz/regressions/<target>/ through the function kTargets names for <target>.
//
// What a body must do (fuzz/README.md, "Adding a target"): take any bytes, never crash, hang or
// leak on them, and go as deep as the CLI would with them: a parser alone finds its own bugs, but
// the reports then find the values the parser let through and nothing downstream expects (negative
// durations, INT64_MIN "no value" markers, ids past every table). Errors are normal results: the
// return value is always 0 (libFuzzer's "input processed"), and only crashes, sanitizer reports,
// timeouts and leaks count as findings.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/ncu_reports.h"
#include "analysis/nsys_analyze/rules.h"
#include "analysis/report_registry.h"
#include "analysis/summary.h"
#include "analysis/result.h"
#include "diagnose/engine.h"
#include "ingest/capture_format.h"
#include "ingest/capture_reader.h"
#include "ingest/kineto_reader.h"
#include "ingest/ncu_csv_reader.h"
#include "ingest/ncu_report_reader.h"
#include "ingest/ncu_timeline.h"
#include "ingest/nsys_sqlite_reader.h"
#include "model/trace.h"
#include "report/diagnose_writer.h"
#include "report/diff_writer.h"
#include "report/html_view_writer.h"
#include "report/svg_timeline_writer.h"
#include "compare/trace_diff.h"
#include "report/summary_writer.h"
#include "report/writers.h"
#include "view/view_model.h"
#include "trace_recipe.h"

namespace tracedoc::fuzz {

// Runs one report ("name" plus arguments) and renders it as `tracedoc stats -f csv` does, into
// /dev/null: the number formatting of the writers sees every value the report computes.
inline void run_report(const Trace& trace, const ReportDef& def, std::vector<std::string> args = {}) {
  static FILE* const sink = std::fopen("/dev/null", "w");
  ReportArgs report_args;
  report_args.args = std::move(args);
  TextOut out(sink);
  WriterOptions options;
  options.report_name = def.name;
  options.display_name = def.display_name;
  auto writer = make_writer(options, out);
  // NoData (nsys's SKIPPED) and errors are answers, not findings; a writer left without begin()
  // is what the CLI leaves too.
  (void)def.run(trace, report_args, *writer);
}

inline void run_report(const Trace& trace, std::string_view name, std::vector<std::string> args = {}) {
  if (const auto* def = find_report(name)) run_report(trace, *def, std::move(args));
}

// What the commands past the reports compute, rendered: the summary, which gathers every analysis,
// the diagnosis rules, the diff against itself (every item on both sides) and against an empty
// trace (every item on one), and the viewer's page and picture with the critical path and a tiny
// exact-event budget (the window selection, the buckets and every writer path). The hostile-input
// tests run the same.
inline void run_analyses(const Trace& trace) {
  (void)summary_json({summarize(trace)});
  (void)diagnose_json({diagnose::diagnose(trace, {})});
  (void)diff_json(compare::diff_traces(trace, trace));
  (void)diff_json(compare::diff_traces(Trace{}, trace));
  view::ViewOptions view_options;
  view_options.colors = view::ColorScheme::critical_preset();
  view_options.lod.max_events = 3;
  const view::ViewModel vm = view::build_view(trace, view_options);
  (void)render_view_html(trace, vm);
  (void)render_timeline_svg(vm, SvgOptions{});
}

// Report argument variants that switch a report onto another code path (kernel naming, grouping).
inline void run_report_variants(const Trace& trace) {
  run_report(trace, "cuda_gpu_kern_sum", {"base"});
  run_report(trace, "cuda_gpu_kern_sum", {"nvtx-name"});
  run_report(trace, "cuda_gpu_trace", {"mangled"});
  run_report(trace, "op_sum", {"shapes"});
  run_report(trace, "step_sum", {"detect"});
  // The analyze rules with their extreme options, then everything past the reports.
  for (const auto& rule : nsys_analyze::all_rules()) {
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{"rows=-1", "gap=0"}, std::vector<std::string>{"threshold=101", "chunks=1000"}}) {
      auto parsed = nsys_analyze::parse_rule_args(rule.name, args);
      TableSink sink;
      if (parsed.ok()) (void)rule.run(trace, *parsed, sink);
    }
  }
  run_analyses(trace);
}

// Kineto / Chrome-trace JSON, plain or gzip (read_kineto_bytes inflates when the bytes start with
// the gzip magic): used by fuzz_kineto_json and fuzz_kineto_gzip alike. The name has no "rank" in
// it so that the file-name fallback stays out. The reports: first the ones a PyTorch trace is read
// for, then every other one (`tracedoc stats` runs any report on a PyTorch trace, and the Kineto
// model has shapes no nsys export has: no global pids, collectives, CPU ops).
inline int fuzz_kineto(std::string_view bytes) {
  // With the opt-in tables stored (python_function events), as the CLI reads for python_func_sum:
  // they change no other table, so one read serves every report.
  KinetoReadOptions options;
  options.python_functions = true;
  auto trace = read_kineto_bytes(bytes, "fuzz-input.json", options);
  if (!trace.ok()) return 0;
  static constexpr std::string_view kFirst[] = {"cuda_gpu_kern_sum", "cuda_api_sum", "op_sum",
                                                "step_sum",          "nvtx_sum",     "cuda_gpu_trace"};
  for (std::string_view name : kFirst) run_report(*trace, name);
  for (const auto& def : all_reports()) {
    bool done = false;
    for (std::string_view name : kFirst) done = done || name == def.name;
    if (!done) run_report(*trace, def);
  }
  run_report_variants(*trace);
  return 0;
}

// A file in memory-backed storage (/dev/shm when there is one, else $TMPDIR or /tmp) that each
// input is written to: the nsys reader takes a path (SQLite and the page scanner map the file).
// One per process, tracedoc-fuzz-<pid>, rewritten for each input and removed at exit. A run that
// ends in a finding exits without destructors, so each new one first removes the files of
// processes that no longer exist. (Unlinking at once and reading /proc/self/fd/N does not work:
// SQLite resolves the link to the deleted name.) A body that needs a file of its own in the same
// process (the regression test runs every body) names it with a suffix: tracedoc-fuzz-<pid><suffix>.
class ScratchFile {
 public:
  explicit ScratchFile(std::string_view suffix = {}) {
    std::string dir = "/dev/shm";
    if (::access(dir.c_str(), W_OK) != 0) {
      const char* tmp = std::getenv("TMPDIR");
      dir = tmp && *tmp ? tmp : "/tmp";
    }
    remove_stale(dir);
    path_ = dir + "/" + std::string(kPrefix) + std::to_string(::getpid()) + std::string(suffix);
    fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd_ < 0) fail("cannot create a scratch file");
  }
  ~ScratchFile() {
    ::close(fd_);
    ::unlink(path_.c_str());
  }
  ScratchFile(const ScratchFile&) = delete;
  ScratchFile& operator=(const ScratchFile&) = delete;

  // Replaces the file's content with `bytes`; returns its path.
  const std::string& write(std::string_view bytes) {
    if (::ftruncate(fd_, 0) != 0) fail("cannot truncate the scratch file");
    size_t done = 0;
    while (done < bytes.size()) {
      const ssize_t n = ::pwrite(fd_, bytes.data() + done, bytes.size() - done, static_cast<off_t>(done));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) fail("cannot write the scratch file");
      done += static_cast<size_t>(n);
    }
    return path_;
  }

 private:
  static constexpr std::string_view kPrefix = "tracedoc-fuzz-";

  // Removes tracedoc-fuzz-<pid>[.suffix] files whose process is gone.
  static void remove_stale(const std::string& dir) {
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
      const std::string name = entry.path().filename().string();
      if (name.rfind(kPrefix, 0) != 0) continue;
      const std::string rest = name.substr(kPrefix.size());
      const std::string digits = rest.substr(0, rest.find_first_not_of("0123456789"));
      if (digits.empty() || (digits.size() < rest.size() && rest[digits.size()] != '.')) continue;
      const long pid = std::strtol(digits.c_str(), nullptr, 10);
      if (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) std::filesystem::remove(entry.path(), ec);
    }
  }
  [[noreturn]] static void fail(const char* what) {
    std::fprintf(stderr, "tracedoc fuzz: %s: %s\n", what, std::strerror(errno));
    std::abort();
  }

  int fd_ = -1;
  std::string path_;
};

// nsys SQLite export: every table, then every report. One thread (the parallel loader only moves
// the same table loads onto a second thread, and a deterministic run keeps libFuzzer's coverage
// stable). The direct page scanner reads every table it can, so the SQLite-library path would only
// see files the scanner rejects: an odd byte 72 of the file (in the SQLite header's "reserved for
// expansion" zeros, which SQLite ignores) switches the scanner off, a one-byte mutation away.
inline int fuzz_nsys_sqlite(std::string_view bytes) {
  static ScratchFile scratch;
  NsysReadOptions options;
  options.tables = kLoadAll;
  options.parallel = false;
  options.fast_scan = !(bytes.size() > 72 && (static_cast<unsigned char>(bytes[72]) & 1));
  auto trace = read_nsys_sqlite(scratch.write(bytes), options);
  if (!trace.ok()) return 0;
  for (const auto& def : all_reports()) run_report(*trace, def);
  run_report_variants(*trace);
  return 0;
}

// tracedoc capture files (.tdcap, ingest/capture_format.h): read_capture on the bytes, then every
// report. Every frame carries a CRC-32 of its payload, which nearly every mutation breaks, and the
// reader stops at the first frame whose CRC does not match: so, unless byte 7 of the file (the
// version's high byte, which the reader ignores) is odd, the body first rewrites the CRC of every
// frame it can walk to (by the frames' lengths) to match, and mutations reach the records. An odd
// byte 7 leaves the file as it is (torn and damaged frames), a one-bit mutation away.
inline void fix_capture_crcs(std::string& file) {
  size_t at = sizeof(capture::kFileMagic);
  while (at <= file.size() && file.size() - at >= capture::kFrameHeader) {
    capture::BodyReader header(std::string_view(file).substr(at, capture::kFrameHeader));
    const uint32_t magic = header.get<uint32_t>(), length = header.get<uint32_t>();
    if (magic != capture::kFrameMagic || length > file.size() - at - capture::kFrameHeader) return;
    const uint32_t crc = capture::crc32_of(std::string_view(file).substr(at + capture::kFrameHeader, length));
    for (size_t i = 0; i < 4; ++i) file[at + 8 + i] = static_cast<char>((crc >> (8 * i)) & 0xFF);
    at += capture::kFrameHeader + length;
  }
}

inline int fuzz_capture(std::string_view bytes) {
  static ScratchFile scratch(".tdcap");
  std::string file(bytes);
  if (file.size() < 8 || !(static_cast<unsigned char>(file[7]) & 1)) fix_capture_crcs(file);
  auto trace = read_capture(scratch.write(file));
  if (!trace.ok()) return 0;
  for (const auto& def : all_reports()) run_report(*trace, def);
  run_report_variants(*trace);
  return 0;
}

// The analyses on small valid traces with hostile values: the bytes are a recipe (trace_recipe.h),
// not a file. The first byte picks the route: a Kineto JSON document read by read_kineto_bytes, or
// the tables of an nsys export filled as read_nsys_sqlite fills them. Then every report and
// everything past them, as the reader targets run them. A recipe whose document the reader rejects
// would be a harness bug (the JSON is well formed by construction): it aborts, so that a change of
// the reader or the recipe that loses the route is noticed at once.
inline int fuzz_analyses(std::string_view bytes) {
  recipe::Picker picker(bytes);
  const recipe::Shape shape = recipe::read_shape(picker);
  Trace trace;
  if (shape.nsys) {
    trace = recipe::nsys_model(picker, shape);
  } else {
    KinetoReadOptions options;
    options.python_functions = true;
    const std::string json = recipe::kineto_json(picker, shape);
    auto read = read_kineto_bytes(json, "fuzz-recipe.json", options);
    if (!read.ok()) {
      std::fprintf(stderr, "fuzz_analyses: the reader rejected a generated document: %s\n%s\n",
                   std::string(read.status().message()).c_str(), json.substr(0, 4000).c_str());
      std::abort();
    }
    trace = std::move(read).value();
  }
  for (const auto& def : all_reports()) run_report(trace, def);
  run_report_variants(trace);
  return 0;
}

// Nsight Compute report bytes (.ncu-rep, or zstd .ncu-repz) -> read_ncu_report_bytes, or an ncu
// CSV export -> read_ncu_csv_text -> every table of `tracedoc ncu`, every metric included.
inline int fuzz_ncu_report(std::string_view bytes) {
  auto report =
      looks_like_ncu_csv(bytes) ? read_ncu_csv_text(bytes, "fuzz.csv") : read_ncu_report_bytes(bytes, "fuzz.ncu-rep");
  if (!report.ok()) return 0;
  TableSink rows;
  NcuRowOptions options;
  (void)ncu_kernel_rows(*report, options, rows);
  (void)ncu_rule_rows(*report, options, rows);
  options.all_metrics = true;
  (void)ncu_metric_rows(*report, options, rows);
  // The report as its own timeline: the join, the summary and the diagnosis's ncu rules read it.
  const Trace trace = ncu_report_timeline(std::move(report).value());
  (void)summary_text(summarize(trace));
  (void)diagnose_text({diagnose::diagnose(trace, {})});
  return 0;
}

// Target name (the fuzzer executable, the fuzz/corpus/ and fuzz/regressions/ folder) -> body.
struct Target {
  std::string_view name;
  int (*run)(std::string_view bytes);
};
inline constexpr Target kTargets[] = {
    {"fuzz_kineto_json", fuzz_kineto}, {"fuzz_kineto_gzip", fuzz_kineto}, {"fuzz_nsys_sqlite", fuzz_nsys_sqlite},
    {"fuzz_capture", fuzz_capture},    {"fuzz_analyses", fuzz_analyses},  {"fuzz_ncu_report", fuzz_ncu_report},
};

inline const Target* find_target(std::string_view name) {
  for (const auto& t : kTargets) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

}  // namespace tracedoc::fuzz
