// `tracedoc capture --sample cpu` and `--osrt-backtrace` on a real CPU program with known hot
// functions and a known blocking call site (tests/capture/cpu_program.cpp): the samples land in the
// function that burns the CPU, with the stacks that called it, on the threads and in the processes
// that ran it, through perf events and through the timer fallback; the stacks of OS calls name their
// call site; the SQLite export reads back the same and passes the real `nsys stats`. And the ELF
// symbolizer on this test binary's own functions.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "ingest/capture_reader.h"
#include "ingest/elf_symbols.h"
#include "test_support.h"

namespace tracedoc::testing {
namespace {

namespace fs = std::filesystem;

const fs::path kBin(TRACEDOC_BINARY_DIR);
const std::string kProgram = (kBin / "tracedoc_cpu_program").string();

// Sampling a sanitized program is not a supported configuration: the sanitizer intercepts the
// unwinder the signal handler calls, which is then not safe inside a signal handler.
#if defined(__SANITIZE_ADDRESS__)
#define REQUIRE_UNSANITIZED() \
  GTEST_SKIP() << "CPU sampling is not tested on the sanitized build (the sanitizer intercepts the unwinder)"
#else
#define REQUIRE_UNSANITIZED()
#endif

#define REQUIRE_INJECTION()                                                                          \
  if (!fs::exists(kBin / "libtracedoc_inject.so") || !fs::exists(kProgram)) {                        \
    GTEST_SKIP() << "libtracedoc_inject.so was not built (no NVTX 3 headers from the CUDA toolkit)"; \
  }

// The functions of a stack, innermost first.
std::vector<std::string> stack_names(const Trace& t, StackId stack) {
  std::vector<std::string> names;
  for (uint32_t f : t.stacks.stack(stack)) names.emplace_back(t.str(t.stacks.frame(f).symbol));
  return names;
}

struct SampleCounts {
  int64_t total = 0;
  std::map<std::string, int64_t> self;                   // innermost function -> samples
  std::map<std::string, int64_t> self_by_thread_name;    // thread name/"child" -> samples in burn_cycles
  std::map<std::string, std::set<std::string>> callers;  // thread -> the functions that called burn_cycles
};

SampleCounts count_samples(const Trace& t) {
  std::map<int64_t, std::string> thread_names;
  for (const ThreadInfo& th : t.threads) thread_names[th.global_tid] = std::string(t.str(th.name));
  int64_t parent = -1;
  for (const ProcessInfo& p : t.processes) parent = parent < 0 || p.pid < parent ? p.pid : parent;
  SampleCounts c;
  const CpuSampleTable& s = t.cpu_samples;
  for (size_t i = 0; i < s.size(); ++i) {
    ++c.total;
    const std::vector<std::string> names = stack_names(t, s.stack[i]);
    if (names.empty()) continue;
    ++c.self[names[0]];
    if (names[0] != "hot::burn_cycles(long)") continue;
    std::string who = pid_of(s.global_tid[i]) != parent   ? "child"
                      : tid_of(s.global_tid[i]) == parent ? "main"
                                                          : thread_names[s.global_tid[i]];
    ++c.self_by_thread_name[who];
    if (names.size() > 1) c.callers[who].insert(names[1]);
  }
  return c;
}

// The hot function, its callers, its threads and processes: everything the program did is where
// the samples say. `timers` forces the POSIX-timer fallback.
void expect_hot_program_sampled(bool timers) {
  ScratchDir dir;
  const fs::path out = dir.path() / "run";
  if (timers) ::setenv("TRACEDOC_CAPTURE_SAMPLE_TIMERS", "1", 1);
  CliRun r = tracedoc({"capture", "-o", out.string(), "--trace", "none", "--sample", "cpu", "--export", "sqlite", "--",
                       kProgram, "hot", "400"});
  ::unsetenv("TRACEDOC_CAPTURE_SAMPLE_TIMERS");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find(" CPU samples"), std::string::npos) << r.err;
  auto trace = read_capture(out.string());
  ASSERT_TRUE(trace.ok()) << trace.status().message();
  const Trace& t = *trace;
  ASSERT_EQ(t.processes.size(), 2u) << "the forked child samples itself into its own file";
  SampleCounts c = count_samples(t);
  // 600 ms of CPU at 1 kHz: perf events give about 600 samples, the tick-bound timers about 150.
  ASSERT_GE(c.total, 60) << r.err;
  const int64_t hot = c.self.count("hot::burn_cycles(long)") ? c.self.at("hot::burn_cycles(long)") : 0;
  EXPECT_GE(hot * 100, c.total * 80) << "at least 80% of the samples in the hot function: " << hot << " of " << c.total;
  // Every thread and process that ran it, each from its own caller.
  EXPECT_GE(c.self_by_thread_name.count("main") ? c.self_by_thread_name.at("main") : 0, 30);
  EXPECT_GE(c.self_by_thread_name.count("side") ? c.self_by_thread_name.at("side") : 0, 5)
      << "the short-lived thread named \"side\" is sampled and named";
  EXPECT_GE(c.self_by_thread_name.count("child") ? c.self_by_thread_name.at("child") : 0, 5);
  EXPECT_EQ(c.callers["main"], (std::set<std::string>{"hot::train_step(long)"}));
  EXPECT_EQ(c.callers["side"], (std::set<std::string>{"side_spin"}));
  EXPECT_EQ(c.callers["child"], (std::set<std::string>{"child_spin"}));
  // The main thread's whole stack, down to the program's entry.
  for (size_t i = 0; i < t.cpu_samples.size(); ++i) {
    const std::vector<std::string> names = stack_names(t, t.cpu_samples.stack[i]);
    if (names.size() < 2 || names[1] != "hot::train_step(long)") continue;
    ASSERT_GE(names.size(), 4u);
    EXPECT_EQ(names[2], "main");
    EXPECT_EQ(names.back(), "_start");
    EXPECT_EQ(t.str(t.stacks.frame(t.stacks.stack(t.cpu_samples.stack[i])[0]).module), kProgram);
    break;
  }
  // In time order, each sample running (a CPU-time sampler fires only then).
  EXPECT_TRUE(std::is_sorted(t.cpu_samples.time.begin(), t.cpu_samples.time.end()));
  EXPECT_TRUE(std::all_of(t.cpu_samples.state.begin(), t.cpu_samples.state.end(), [](uint8_t s) { return s == 1; }));

  // The export: the same report from it, a row per sample and per frame, and the real nsys reads it.
  const fs::path sqlite = dir.path() / "run.sqlite";
  CliRun direct = tracedoc({"stats", "-r", "cpu_sample_sum", "-f", "csv", out.string()});
  CliRun exported = tracedoc({"stats", "-r", "cpu_sample_sum", "-f", "csv", sqlite.string()});
  ASSERT_EQ(direct.exit_code, 0) << direct.err;
  EXPECT_EQ(direct.out, exported.out);
  EXPECT_NE(direct.out.find(",hot::burn_cycles(long)," + kProgram + "\n"), std::string::npos) << direct.out;
  EXPECT_EQ(sql_int(sqlite.string(), "SELECT count(*) FROM COMPOSITE_EVENTS"), c.total);
  int64_t frames = 0;
  for (StackId s : t.cpu_samples.stack) frames += static_cast<int64_t>(t.stacks.stack(s).size());
  EXPECT_EQ(sql_int(sqlite.string(), "SELECT count(*) FROM SAMPLING_CALLCHAINS"), frames);
  EXPECT_EQ(sql_int(sqlite.string(),
                    "SELECT count(*) FROM SAMPLING_CALLCHAINS c JOIN StringIds s ON s.id = c.symbol "
                    "WHERE c.stackDepth = 0 AND s.value = 'hot::burn_cycles(long)'"),
            hot);
  // nsys's default reports run on it (none reads samples; all must accept the file).
  if (!real_nsys_stats("nvtx_sum,osrt_sum,cuda_api_sum,cuda_gpu_kern_sum,cuda_gpu_mem_time_sum,cuda_gpu_mem_size_sum",
                       sqlite))
    GTEST_SKIP() << "no nsys installed (shared/tools/install-nsys.sh installs one): the nsys check is skipped";
}

TRACEDOC_TEST_LABELS(CaptureSampling, capture);

TEST(CaptureSampling, HotFunctionTakesTheSamplesWithItsCallers) {
  REQUIRE_INJECTION();
  REQUIRE_UNSANITIZED();
  expect_hot_program_sampled(false);
}

TEST(CaptureSampling, TimerFallbackSamplesTheSame) {
  REQUIRE_INJECTION();
  REQUIRE_UNSANITIZED();
  expect_hot_program_sampled(true);
}

// --osrt-backtrace: each recorded poll carries the stack of its call site, wait_for_data called by
// main; the export's OSRT_CALLCHAINS hold them and the real nsys's OS runtime summary equals tracedoc's.
TEST(CaptureSampling, OsCallStacksNameTheirCallSite) {
  REQUIRE_INJECTION();
  ScratchDir dir;
  const fs::path out = dir.path() / "run";
  CliRun r = tracedoc({"capture", "-o", out.string(), "--trace", "osrt-lite", "--osrt-threshold", "1000000",
                       "--osrt-backtrace", "--export", "sqlite", "--", kProgram, "wait", "3"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto t = read_capture(out.string());
  ASSERT_TRUE(t.ok()) << t.status().message();
  const OsCallTable& o = t->os_calls;
  ASSERT_EQ(o.stack.size(), o.size()) << "the stacks are a full column";
  int polls = 0;
  for (size_t i = 0; i < o.size(); ++i) {
    if (t->str(o.name[i]) != "poll") continue;
    ++polls;
    const std::vector<std::string> names = stack_names(*t, o.stack[i]);
    ASSERT_GE(names.size(), 3u);
    EXPECT_EQ(names[0], "wait_for_data");
    EXPECT_EQ(names[1], "main");
  }
  EXPECT_EQ(polls, 3);
  const fs::path sqlite = dir.path() / "run.sqlite";
  EXPECT_EQ(sql_int(sqlite.string(),
                    "SELECT count(*) FROM OSRT_API o JOIN OSRT_CALLCHAINS c ON c.id = o.callchainId "
                    "JOIN StringIds s ON s.id = c.symbol WHERE c.stackDepth = 0 AND s.value = 'wait_for_data'"),
            3);
  CliRun direct = tracedoc({"stats", "-r", "osrt_sum", "-f", "csv", out.string()});
  ASSERT_EQ(direct.exit_code, 0) << direct.err;
  const std::optional<std::string> printed = real_nsys_stats("osrt_sum", sqlite);
  if (!printed)
    GTEST_SKIP() << "no nsys installed (shared/tools/install-nsys.sh installs one): the nsys comparison is skipped";
  EXPECT_EQ(*printed, direct.out);
}

// The capture names its addresses when the program ends, on the machine it ran on: rebuilding (here:
// replacing) the program afterwards changes nothing in what the capture reads.
TEST(CaptureSampling, NamesAreRecordedWhenTheProgramEnds) {
  REQUIRE_INJECTION();
  REQUIRE_UNSANITIZED();
  ScratchDir dir;
  const fs::path program = dir.path() / "cpu_program";
  fs::copy_file(kProgram, program);
  const fs::path out = dir.path() / "run";
  CliRun r = tracedoc(
      {"capture", "-o", out.string(), "--trace", "none", "--sample", "cpu", "--", program.string(), "hot", "200"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  CliRun before = tracedoc({"stats", "-r", "cpu_sample_sum", "-f", "csv", out.string()});
  ASSERT_EQ(before.exit_code, 0) << before.err;
  EXPECT_NE(before.out.find(",hot::burn_cycles(long)," + program.string() + "\n"), std::string::npos) << before.out;
  fs::remove(program);
  fs::copy_file((kBin / "tracedoc_nvtx_program").string(), program);  // another program at the same path
  CliRun after = tracedoc({"stats", "-r", "cpu_sample_sum", "-f", "csv", out.string()});
  EXPECT_EQ(after.out, before.out);
}

TEST(CaptureSampling, BadSamplingOptionsAreUsageErrors) {
  ScratchDir dir;
  const std::string out = (dir.path() / "run").string();
  for (const std::vector<std::string>& args : {std::vector<std::string>{"--sample", "gpu"},
                                               {"--sample", "cpu", "--sampling-frequency", "50"},
                                               {"--sample", "cpu", "--sampling-frequency", "9000"},
                                               {"--osrt-backtrace"}}) {
    std::vector<std::string> cmd{"capture", "-o", out};
    cmd.insert(cmd.end(), args.begin(), args.end());
    cmd.insert(cmd.end(), {"--", "true"});
    CliRun r = tracedoc(cmd);
    EXPECT_EQ(r.exit_code, 2) << args[0] << ": " << r.err;
    EXPECT_NE(r.err.find("capture: "), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
}

// The symbolizer on this process: the mappings from /proc/self/maps, a function of this binary
// named and demangled, a return address just past a function's end named as the call it returns from,
// and addresses no mapping or no symbol covers named by their value.
std::vector<MappedModule> own_mappings() {
  std::vector<MappedModule> modules;
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    std::istringstream in(line);
    std::string range, perms, offset, dev, inode, path;
    in >> range >> perms >> offset >> dev >> inode >> path;
    if (perms.size() < 3 || perms[2] != 'x') continue;
    MappedModule m;
    m.start = std::stoull(range.substr(0, range.find('-')), nullptr, 16);
    m.end = std::stoull(range.substr(range.find('-') + 1), nullptr, 16);
    m.offset = std::stoull(offset, nullptr, 16);
    m.path = path;
    modules.push_back(m);
  }
  std::sort(modules.begin(), modules.end(), [](const auto& a, const auto& b) { return a.start < b.start; });
  return modules;
}

}  // namespace

// Outside the anonymous namespace, so that its symbol keeps a plain name the test can expect.
__attribute__((noinline)) int symbolizer_probe(int x) { return x * 3 + 1; }

namespace {

TRACEDOC_TEST_LABELS(ElfSymbols, capture);

TEST(ElfSymbols, NamesThisBinarysFunctions) {
  const std::vector<MappedModule> modules = own_mappings();
  ASSERT_FALSE(modules.empty());
  Symbolizer symbols;
  const auto probe = reinterpret_cast<uint64_t>(&symbolizer_probe);
  const Symbolizer::Frame f = symbols.resolve(modules, probe, false);
  EXPECT_TRUE(f.resolved);
  EXPECT_EQ(f.symbol, "tracedoc::testing::symbolizer_probe(int)");
  EXPECT_EQ(fs::path(f.module).filename().string().rfind("tracedoc_tests", 0), 0u) << f.module;
  // A libc function (one no sanitizer intercepts), through the shared library's own mapping and
  // symbol table.
  const Symbolizer::Frame libc = symbols.resolve(modules, reinterpret_cast<uint64_t>(&::getpid), false);
  EXPECT_TRUE(libc.resolved);
  EXPECT_NE(libc.module.find("libc.so"), std::string::npos) << libc.module;
  EXPECT_NE(libc.symbol.find("getpid"), std::string::npos) << libc.symbol;
  // A return address one past the probe's first byte is looked up at the byte before it.
  EXPECT_EQ(symbols.resolve(modules, probe + 1, true).symbol, "tracedoc::testing::symbolizer_probe(int)");
  // No mapping: the address's value and "[unknown]", as nsys names an unresolved frame.
  const Symbolizer::Frame none = symbols.resolve(modules, 0x10, false);
  EXPECT_FALSE(none.resolved);
  EXPECT_EQ(none.symbol, "0x10");
  EXPECT_EQ(none.module, "[unknown]");
  // A mapping whose file cannot be read: the module is named, the function is not.
  const std::vector<MappedModule> gone{{0x1000, 0x2000, 0, "/nonexistent/libgone.so"}};
  const Symbolizer::Frame unread = symbols.resolve(gone, 0x1800, false);
  EXPECT_FALSE(unread.resolved);
  EXPECT_EQ(unread.symbol, "0x1800");
  EXPECT_EQ(unread.module, "/nonexistent/libgone.so");
}

}  // namespace
}  // namespace tracedoc::testing
