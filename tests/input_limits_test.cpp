// Inputs that once killed or fooled tracedoc, through the `tracedoc` binary, each built at test
// time: a folder given where a file is expected (SIGABRT from inside std::ifstream), a small
// .ncu-repz that inflates to gigabytes, values that do not fit (an ncu metric of inf printed as
// INT64_MIN, shapes whose FLOPs pinned at INT64_MAX, an MFU of millions of percent), a capture
// whose ranges end before they start, folders of several formats and of entries that are not files,
// a budget that checks nothing. Each asserts the exit code, the message and what is left behind.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include <algorithm>
#include <filesystem>
#include <memory>

#include "ingest/capture_format.h"
#include "test_support.h"

namespace tracedoc::testing {
namespace {

namespace fs = std::filesystem;

const fs::path kExample = fs::path(TRACEDOC_SOURCE_DIR) / "examples" / "toy_training.sqlite";

size_t line_count(const std::string& s) { return static_cast<size_t>(std::count(s.begin(), s.end(), '\n')); }

// An Nsight Compute report's container header: "NVR\0", a u32 length, FileHeader {1: version}.
std::string ncu_header(int version) { return std::string("NVR\0\x02\0\0\0\x08", 9) + static_cast<char>(version); }

// `head` then `zeros` zero bytes, compressed by zstd a megabyte at a time (as `zstd` would).
std::string zstd_of(const std::string& head, size_t zeros) {
  std::unique_ptr<ZSTD_CCtx, size_t (*)(ZSTD_CCtx*)> ctx(ZSTD_createCCtx(), ZSTD_freeCCtx);
  std::string out, buffer(ZSTD_CStreamOutSize(), '\0');
  const std::string chunk(1 << 20, '\0');
  auto feed = [&](std::string_view in, ZSTD_EndDirective mode) {
    ZSTD_inBuffer input{in.data(), in.size(), 0};
    for (bool done = false; !done;) {
      ZSTD_outBuffer output{buffer.data(), buffer.size(), 0};
      const size_t left = ZSTD_compressStream2(ctx.get(), &output, &input, mode);
      out.append(buffer.data(), output.pos);
      done = mode == ZSTD_e_end ? left == 0 : input.pos == input.size;
    }
  };
  feed(head, ZSTD_e_continue);
  for (size_t n = 0; n < zeros; n += chunk.size()) feed(chunk, ZSTD_e_continue);
  feed("", ZSTD_e_end);
  return out;
}

// A capture file of one process (pid 42, started at `start`) holding `records` (capture::append_record).
std::string capture_file(int64_t start, const std::string& records) {
  std::string process, body;
  capture::BodyWriter(body).put(int64_t{42}).put(int64_t{1}).put(start).bytes("prog");
  capture::append_record(process, capture::RecordType::kProcess, body);
  return std::string(capture::kFileMagic, sizeof(capture::kFileMagic)) + capture::frame_of(process + records);
}

TRACEDOC_TEST_LABELS(InputLimits, unit sanitize);

TEST(InputLimits, AFolderWhereAReportIsExpectedIsAnError) {
  ScratchDir dir;
  for (const char* name : {"x.ncu-rep", "y.ncu-repz", "z.csv"}) {
    const fs::path folder = dir.path() / name;
    fs::create_directory(folder);
    for (const auto& args : {std::vector<std::string>{"ncu", folder.string()},
                             std::vector<std::string>{"stats", "--ncu", folder.string(), kExample.string()}}) {
      const CliRun r = tracedoc(args);
      EXPECT_EQ(r.exit_code, 2) << args[0] << " " << name << ": " << r.err;
      EXPECT_EQ(r.err, "tracedoc: " + folder.string() + ": is a directory, not a file\n");
      EXPECT_EQ(r.out, "");
    }
  }
  // Every configuration file: a folder is refused, never read as an empty file (a budget that
  // checks nothing, default synth spec).
  const fs::path folder = dir.path() / "conf";
  fs::create_directory(folder);
  const std::vector<std::vector<std::string>> runs = {
      {"check", "--budget", folder.string(), kExample.string()},
      {"diagnose", "--config", folder.string(), kExample.string()},
      {"summary", "--gpu-peaks", folder.string(), kExample.string()},
      {"view", "--colors", folder.string(), "-o", (dir.path() / "v.html").string(), kExample.string()},
      {"synth", folder.string(), "-o", (dir.path() / "s").string()}};
  for (const auto& args : runs) {
    const CliRun r = tracedoc(args);
    EXPECT_EQ(r.exit_code, 2) << args[0] << ": " << r.err;
    EXPECT_EQ(line_count(r.err), 1u) << r.err;
    EXPECT_NE(r.err.find(folder.string() + ": is a"), std::string::npos) << r.err;
  }
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.path()), {}), 4) << "an output was left";
}

// A 100 KB .ncu-repz of a valid header and 3 GiB of zeros: every command stops at --max-memory,
// naming the report it was reading; a report of another version is refused before its body is
// inflated; a device that never ends is not a report.
TEST(InputLimits, AnNcuReportIsReadWithinTheMemoryLimit) {
  ScratchDir dir;
  // What the process takes before it reads anything much (a sanitized build takes more).
  const uint64_t baseline = tracedoc({"ncu", "/dev/zero"}).peak_rss;
  const fs::path bomb = dir.write("bomb.ncu-repz", zstd_of(ncu_header(7), size_t{3} << 30));
  ASSERT_LT(fs::file_size(bomb), size_t{1} << 20);
  CliRun r = tracedoc({"ncu", "--max-memory", "300M", bomb.string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err.rfind("tracedoc: " + bomb.string() + ": needs more memory than the limit of 300 MiB", 0), 0u)
      << r.err;
  EXPECT_LT(r.peak_rss, std::max(baseline, uint64_t{300} << 20) + (uint64_t{128} << 20));
  r = tracedoc({"stats", "--ncu", bomb.string(), "--max-memory", "300M", kExample.string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err.rfind("tracedoc: " + bomb.string() + ": needs more memory than the limit", 0), 0u) << r.err;
  EXPECT_EQ(r.out, "");

  const fs::path future = dir.write("v8.ncu-repz", zstd_of(ncu_header(8), size_t{3} << 30));
  r = tracedoc({"ncu", future.string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "tracedoc: " + future.string() +
                       ": Nsight Compute report format version 8 (this tracedoc reads version 7)\n");
  EXPECT_LT(r.peak_rss, baseline + (uint64_t{64} << 20)) << "the body was inflated before the version was checked";

  r = tracedoc({"ncu", "/dev/zero"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "tracedoc: /dev/zero: not an Nsight Compute report (no NVR header) nor an ncu CSV export\n");
  // The limit is every command's option, checked when the command line is parsed.
  r = tracedoc({"ncu", "--max-memory", "inf", bomb.string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("'inf' is larger than any memory"), std::string::npos) << r.err;
}

// An ncu CSV export as Excel saves it (a UTF-8 byte order mark first) with values that fit no
// integer and counts below zero: read, the values absent and counted, never INT64_MIN.
TEST(InputLimits, NcuValuesThatDoNotFitAreAbsentAndCounted) {
  ScratchDir dir;
  const std::string header =
      "\xEF\xBB\xBF\"ID\",\"Kernel Name\",\"Section Name\",\"Metric Name\",\"Metric Unit\","
      "\"Metric Value\"\n";
  auto row = [](int id, const char* kernel, const char* metric, const char* unit, const char* value) {
    return "\"" + std::to_string(id) + "\",\"" + kernel + "\",\"Section\",\"" + metric + "\",\"" + unit + "\",\"" +
           value + "\"\n";
  };
  const fs::path csv =
      dir.write("odd.csv", header + row(0, "k_inf", "gpu__time_duration.sum", "nsecond", "inf") +
                               row(0, "k_inf", "launch__registers_per_thread", "register/thread", "1e300") +
                               row(1, "k_neg", "gpu__time_duration.sum", "nsecond", "-5") +
                               row(1, "k_neg", "launch__registers_per_thread", "register/thread", "-32") +
                               row(2, "k_ok", "gpu__time_duration.sum", "nsecond", "1,234") +
                               row(2, "k_ok", "launch__registers_per_thread", "register/thread", "40"));
  const CliRun r = tracedoc({"ncu", "-f", "csv", csv.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.find("9223372036854775808"), std::string::npos) << r.out;
  EXPECT_EQ(r.err, "tracedoc: warning: " + csv.string() +
                       ": 4 metric value(s) not finite, past 2^63, or negative where they count (read as absent)\n");
  const auto rows = parse_csv(r.out.substr(0, r.out.find("\n\n")));
  ASSERT_GE(rows.size(), 4u) << r.out;
  const auto& head = rows[0];
  const size_t duration = std::find(head.begin(), head.end(), "Duration (ns)") - head.begin();
  const size_t registers = std::find(head.begin(), head.end(), "Registers") - head.begin();
  ASSERT_LT(duration, head.size()) << r.out;
  ASSERT_LT(registers, head.size()) << r.out;
  EXPECT_EQ(rows[1][duration], "");
  EXPECT_EQ(rows[2][duration], "");
  EXPECT_EQ(rows[3][duration], "1234");
  EXPECT_EQ(rows[1][registers], "0");
  EXPECT_EQ(rows[3][registers], "40");
}

TEST(InputLimits, OptionValuesOutOfRangeAreUsageErrors) {
  for (const char* gap : {"nan", "inf", "1e300", "-1"}) {
    const CliRun r = tracedoc({"summary", "--gap", gap, kExample.string()});
    EXPECT_EQ(r.exit_code, 2) << gap;
    EXPECT_EQ(r.out, "");
    EXPECT_NE(r.err.find("summary: --gap: the gap must be from 0 to 1e+09 ms"), std::string::npos) << r.err;
  }
  for (const auto& args :
       {std::vector<std::string>{"summary", "--peak-tflops", "nan", kExample.string()},
        std::vector<std::string>{"diff", "--fail-on-regression", "inf", kExample.string(), kExample.string()},
        std::vector<std::string>{"summary", "--max-memory", "nan", kExample.string()}}) {
    const CliRun r = tracedoc(args);
    EXPECT_EQ(r.exit_code, 2) << args[1];
    EXPECT_EQ(line_count(r.err), 1u) << r.err;
    EXPECT_NE(r.err.find(args[1]), std::string::npos) << r.err;
  }
}

// A PyTorch trace on an A100 whose shapes give FLOPs past int64 (dims of 2^40), and a matmul of
// 2^48 FLOPs in one microsecond: the first is an operator of unknown cost, said so; the second
// would be an MFU of millions of percent, which is never printed as one.
TEST(InputLimits, FlopsPastTheRangeOrThePeakAreNotFigures) {
  ScratchDir dir;
  auto op = [](int id, const std::string& dims, int ts) {
    return R"({"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": )" + std::to_string(ts) +
           R"(, "dur": 5, "args": {"External id": )" + std::to_string(id) + R"(, "Input Dims": )" + dims +
           R"(, "Input type": ["float", "float"]}},
{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": )" +
           std::to_string(ts + 1) + R"(, "dur": 2, "args": {"External id": )" + std::to_string(id) +
           R"(, "correlation": )" + std::to_string(id) + R"(}},
{"ph": "X", "cat": "kernel", "name": "ampere_sgemm_128x64_nn", "pid": 0, "tid": 7, "ts": )" +
           std::to_string(ts + 4) + R"(, "dur": 1, "args": {"External id": )" + std::to_string(id) +
           R"(, "correlation": )" + std::to_string(id) + R"(, "device": 0, "stream": 7}})";
  };
  const std::string doc =
      R"({"deviceProperties": [{"id": 0, "name": "NVIDIA A100-SXM4-80GB", "computeMajor": 8, "computeMinor": 0,)"
      R"( "numSms": 108, "totalGlobalMem": 85899345920}], "traceEvents": [
{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1, "tid": 1, "ts": 0, "dur": 100},
)" + op(1, "[[1099511627776, 1048576], [1048576, 1048576]]", 10) +
      ",\n" + op(2, "[[65536, 65536], [65536, 32]]", 30) + "]}";
  const fs::path trace = dir.write("big.json", doc);
  CliRun r = tracedoc({"summary", trace.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("MFU unknown (the FLOPs would run past the peak of A100 SXM4 80GB)"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("(1 operator call with too few recorded shapes for a formula; 1 of them with shapes giving "
                       "2^63 FLOPs or bytes or more)"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("9223372036854775807"), std::string::npos) << r.out;
  r = tracedoc({"summary", "-f", "json", trace.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\"median_step_mfu_pct\": null"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"unknown_operators\": 1,\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"overflowing_operators\": 1,\n"), std::string::npos) << r.out;
  r = tracedoc({"stats", "-r", "step_mfu_sum", "-f", "csv", trace.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out,
            "Rank,Step,Wall (ns),Model FLOPs,TFLOP/s,MFU (%),GPU\n,1,100000,274877906944,2748.779,,A100 SXM4 80GB\n");
  r = tracedoc({"stats", "-r", "op_flops_sum", "-f", "csv", trace.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto rows = parse_csv(r.out);
  ASSERT_EQ(rows.size(), 2u) << r.out;  // the overflowing call is not a row
  EXPECT_EQ(rows[1][2], "274877906944");
  EXPECT_EQ(rows[1][8], "") << "a share of the peak above 100%: " << r.out;
}

// tracedoc's own capture files get the checks the other readers make: a range that ends before it
// starts and an OS call whose times are near 2^63 are dropped and counted, never summed.
TEST(InputLimits, CaptureEventsAreCheckedLikeEveryReaders) {
  ScratchDir dir;
  using capture::RecordType;
  const int64_t start = 1'700'000'000'000'000'000;
  std::string payload, body;
  auto record = [&](RecordType type, auto build) {
    body.clear();
    capture::BodyWriter w(body);
    build(w);
    capture::append_record(payload, type, body);
  };
  record(RecordType::kString, [&](auto& w) { w.put(uint32_t{1}).bytes("good"); });
  record(RecordType::kString, [&](auto& w) { w.put(uint32_t{2}).bytes("backwards"); });
  record(RecordType::kString, [&](auto& w) { w.put(uint32_t{3}).bytes("poll"); });
  auto push = [&](int64_t t, uint32_t text) {
    record(RecordType::kNvtxPush,
           [&](auto& w) { w.put(int64_t{42}).put(t).put(uint32_t{0}).put(text).put(uint32_t{0}).put(uint32_t{0}); });
  };
  auto pop = [&](int64_t t) {
    record(RecordType::kNvtxPop, [&](auto& w) { w.put(int64_t{42}).put(t).put(uint32_t{0}); });
  };
  push(start + 1000, 1), pop(start + 2000);  // 1 µs
  push(start + 5000, 2), pop(start + 3000);  // ends 2 µs before it starts
  capture::OsCallBody good{42, start + 100, start + 600, 0, 3}, far{42, INT64_MAX - 10, INT64_MAX - 5, 0, 3};
  for (const auto* call : {&good, &far}) record(RecordType::kOsCall, [&](auto& w) { capture::put_body(w, *call); });
  const fs::path tdcap = dir.write("odd.tdcap", capture_file(start, payload));

  CliRun r = tracedoc({"stats", "-r", "nvtx_sum", "-f", "csv", tdcap.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "tracedoc: warning: " + tdcap.string() +
                       ": events 1 ending before they start (skipped); 1 without a usable timestamp (skipped)\n");
  EXPECT_EQ(parse_csv(r.out).size(), 2u) << r.out;  // "good" only
  EXPECT_NE(r.out.find("\n100.0,1000,1,1000.0,1000.0,1000,1000,0.0,PushPop,good\n"), std::string::npos) << r.out;
  r = tracedoc({"stats", "-r", "osrt_sum", "-f", "csv", tdcap.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\n100.0,500,1,500.0,500.0,500,500,0.0,poll\n"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("92233720"), std::string::npos) << r.out;
}

// A folder of several formats, and rank files that are not files: each entry not read is named
// with the reason; a folder with nothing left to read says what it holds.
TEST(InputLimits, FoldersSayWhatTheyDidNotRead) {
  ScratchDir dir;
  const fs::path rank = dir.write("rank0.json", R"({"traceEvents": [
{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 10, "dur": 5, "args": {"stream": 7, "device": 0}}]})");
  fs::create_directory(dir.path() / "rank1.json");
  ASSERT_EQ(::mkfifo((dir.path() / "rank2.json").c_str(), 0600), 0);
  fs::create_symlink("gone.json", dir.path() / "rank3.json");
  fs::create_symlink("/dev/zero", dir.path() / "rank4.json");
  dir.write("meta.json", R"({"run": "x"})");
  fs::copy_file(kExample, dir.path() / "export.sqlite");
  dir.write("notes.txt", "not a trace, not mentioned");
  CliRun r = tracedoc({"summary", dir.path().string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string d = dir.path().string() + "/";
  EXPECT_EQ(r.err,
            "tracedoc: warning: " + d +
                "rank1.json: not read: named as a PyTorch profiler trace, but a folder, not a file\n"
                "tracedoc: warning: " +
                d +
                "rank2.json: not read: named as a PyTorch profiler trace, but a FIFO, not a file\n"
                "tracedoc: warning: " +
                d +
                "rank3.json: not read: named as a PyTorch profiler trace, but a symbolic link to nothing (dangling)\n"
                "tracedoc: warning: " +
                d +
                "rank4.json: not read: named as a PyTorch profiler trace, but a device, not a file\n"
                "tracedoc: warning: " +
                d +
                "export.sqlite: not read: an Nsight Systems export, in a folder read as a PyTorch job's rank traces; "
                "give it on its own\n"
                "tracedoc: warning: " +
                d + "meta.json: not read: not a PyTorch profiler trace: the JSON has no traceEvents array\n");
  // With a capture file, the folder is a capture: its PyTorch traces are named as not read.
  fs::copy_file(kExample, dir.path() / "also.ncu-rep");  // named as one; never opened
  dir.write("p1.tdcap", capture_file(1'700'000'000'000'000'000, {}));
  r = tracedoc({"summary", dir.path().string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find(d + "rank0.json: not read: a PyTorch profiler trace, in a folder read as a tracedoc capture"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find(d + "also.ncu-rep: not read: an Nsight Compute report, in a folder read as a tracedoc capture"),
            std::string::npos)
      << r.err;
  // Nothing left to read: an error naming the folder and what it holds.
  ScratchDir empty;
  fs::create_directory(empty.path() / "only.json");
  r = tracedoc({"summary", empty.path().string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "tracedoc: " + empty.path().string() +
                       ": no PyTorch profiler traces (*.json, *.json.gz) or tracedoc capture files (*.tdcap) to read "
                       "in this folder (1 entry not read: " +
                       empty.path().string() +
                       "/only.json: not read: named as a PyTorch profiler trace, but a folder, "
                       "not a file)\n");
  // A folder that cannot be listed says so (root reads any folder: nothing to test then).
  if (::geteuid() != 0) {
    ScratchDir locked;
    fs::permissions(locked.path(), fs::perms::none);
    r = tracedoc({"summary", locked.path().string()});
    fs::permissions(locked.path(), fs::perms::owner_all);
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_EQ(r.err, "tracedoc: " + locked.path().string() + ": cannot read the folder: Permission denied\n");
  }
}

// A SQLite export that cannot be written names the file and SQLite's reason, not "not an error".
TEST(InputLimits, AnExportThatCannotBeWrittenSaysWhy) {
  ScratchDir dir;
  const fs::path out = dir.path() / "out.sqlite";
  CliRun r = tracedoc({"export", "--to", "sqlite", "-o", "/dev/full", kExample.string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "tracedoc: /dev/full: write failed: No space left on device\n");
  struct rlimit saved {};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &saved), 0);
  struct rlimit small = saved;
  small.rlim_cur = 16 * 1024;
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
  r = tracedoc({"export", "--to", "sqlite", "-o", out.string(), kExample.string()});
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &saved), 0);
  EXPECT_EQ(r.exit_code, 2);
  // SQLite's reason and the system's: past the limit, its first write of the schema fails.
  EXPECT_EQ(r.err, "tracedoc: " + out.string() + ": cannot create export schema: disk I/O error (File too large)\n");
  EXPECT_TRUE(fs::is_empty(dir.path()));
}

}  // namespace
}  // namespace tracedoc::testing
