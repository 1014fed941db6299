// `tracedoc synth`: the spec parser's errors, determinism, the two output formats read back and
// agreeing with each other, the clean loop's shape, and each plant changing the figure it targets
// against the clean loop, measured with the existing reports.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>

#include "diagnose/engine.h"
#include "ingest/kineto_reader.h"
#include "ingest/nsys_sqlite_reader.h"
#include "report/kineto_json_writer.h"
#include "report/nsys_sqlite_writer.h"
#include "synth/synth_spec.h"
#include "synth/training_loop.h"
#include "test_support.h"

namespace tracedoc::testing {
namespace {

namespace fs = std::filesystem;
using synth::Plant;

const fs::path kSpecs = fs::path(TRACEDOC_SOURCE_DIR) / "examples" / "synth";

fs::path temp_path(const std::string& name) {
  static const struct Dir {
    fs::path path = fs::temp_directory_path() / ("tracedoc-synth-test-" + std::to_string(::getpid()));
    ~Dir() {
      std::error_code ec;
      fs::remove_all(path, ec);
    }
  } dir;
  fs::create_directories(dir.path);
  return dir.path / name;
}

// One example spec, generated, written in both formats and read back (cached for the test run).
struct Generated {
  synth::SynthResult result;
  std::vector<Trace> json, sqlite;  // read back, per rank
};

const Generated& generated(const std::string& name) {
  static std::mutex mu;
  static std::map<std::string, std::unique_ptr<Generated>> cache;
  std::lock_guard<std::mutex> lock(mu);
  auto& slot = cache[name];
  if (slot) return *slot;
  auto spec = synth::read_synth_spec((kSpecs / (name + ".toml")).string());
  if (!spec.ok()) throw std::runtime_error(spec.status().message());
  auto built = synth::build_training_loop(*spec);
  if (!built.ok()) throw std::runtime_error(built.status().message());
  auto g = std::make_unique<Generated>();
  g->result = std::move(built).value();
  for (size_t r = 0; r < g->result.ranks.size(); ++r) {
    // As `tracedoc synth` names them: a file name with "rank" in it gives a single trace its rank.
    const std::string base = temp_path(g->result.ranks.size() > 1 ? fmt::format("{}_rank{}", name, r) : name).string();
    if (!write_kineto_json(g->result.ranks[r], base + ".json").ok()) throw std::runtime_error("kineto write failed");
    if (!write_nsys_sqlite(g->result.ranks[r], base + ".sqlite").ok()) throw std::runtime_error("sqlite write failed");
    auto j = read_kineto_trace(base + ".json");
    if (!j.ok()) throw std::runtime_error(j.status().message());
    auto s = read_nsys_sqlite(base + ".sqlite");
    if (!s.ok()) throw std::runtime_error(s.status().message());
    g->json.push_back(std::move(j).value());
    g->sqlite.push_back(std::move(s).value());
  }
  slot = std::move(g);
  return *slot;
}

// A report's rows (header first) and its cells by column name.
struct Table {
  std::vector<std::vector<std::string>> rows;
  size_t col(const std::string& name) const {
    const auto& h = rows.at(0);
    const auto it = std::find(h.begin(), h.end(), name);
    if (it == h.end()) throw std::runtime_error("no column " + name);
    return static_cast<size_t>(it - h.begin());
  }
  double num(size_t row, const std::string& name) const { return std::stod(rows.at(row).at(col(name))); }
  const std::string& text(size_t row, const std::string& name) const { return rows.at(row).at(col(name)); }
  size_t size() const { return rows.empty() ? 0 : rows.size() - 1; }  // data rows
  // The first data row whose `name_col` contains `part` (0 when none).
  size_t find(const std::string& name_col, const std::string& part) const {
    for (size_t r = 1; r < rows.size(); ++r)
      if (text(r, name_col).find(part) != std::string::npos) return r;
    return 0;
  }
};
Table report(const Trace& t, const std::string& name) { return {parse_csv(report_csv(t, name).value_or(""))}; }
Table rule(const Trace& t, const std::string& name) { return {parse_csv(rule_csv(t, name).value_or(""))}; }

const Trace& json(const std::string& name, size_t rank = 0) { return generated(name).json.at(rank); }

// Mean over steps of a step_sum column ratio: GPU Busy / CPU Duration.
double mean_busy_share(const Trace& t) {
  const Table s = report(t, "step_sum");
  double sum = 0;
  for (size_t r = 1; r <= s.size(); ++r) sum += s.num(r, "GPU Busy (ns)") / s.num(r, "CPU Duration (ns)");
  return sum / static_cast<double>(s.size());
}
double mean_step_ns(const Trace& t) {
  const Table s = report(t, "step_sum");
  double sum = 0;
  for (size_t r = 1; r <= s.size(); ++r) sum += s.num(r, "CPU Duration (ns)");
  return sum / static_cast<double>(s.size());
}
// tb_step_breakdown's Average row.
double tb_average(const Trace& t, const std::string& column) {
  const Table s = report(t, "tb_step_breakdown");
  return s.num(s.find("Name", "Average"), column);
}
// Summed kernel time of the kernels whose name contains any of `parts`.
double kernel_total(const Trace& t, const std::vector<std::string>& parts) {
  const Table k = report(t, "cuda_gpu_kern_sum");
  double sum = 0;
  for (size_t r = 1; r <= k.size(); ++r) {
    for (const auto& p : parts) {
      if (k.text(r, "Name").find(p) != std::string::npos) {
        sum += k.num(r, "Total Time (ns)");
        break;
      }
    }
  }
  return sum;
}
const std::vector<std::string> kGemms = {"gemm", "sgemm"};

// ---- the spec ----

std::string spec_error(const std::string& text) {
  auto r = synth::parse_synth_spec(text, "bad.toml");
  return r.ok() ? std::string("(accepted)") : r.status().message();
}

TRACEDOC_TEST_LABELS(SynthSpec, unit);

TEST(SynthSpec, DefaultsAndKnownGpus) {
  auto s = synth::parse_synth_spec(
      "gpu = \"NVIDIA H100 80GB HBM3\"\nsteps = 3\n[model]\nlayers = 2\nbatch_mib = 4\n"
      "[plant.long_tail]\nstrength = 0.5\n",
      "ok.toml");
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->gpu_sms, 132);
  EXPECT_EQ(s->compute_major, 9);
  EXPECT_EQ(s->steps, 3);
  EXPECT_EQ(s->layers, 2);
  EXPECT_EQ(s->batch_bytes, int64_t{4} << 20);
  EXPECT_TRUE(s->planted(Plant::kLongTail));
  EXPECT_DOUBLE_EQ(s->of(Plant::kLongTail), 0.5);
  EXPECT_FALSE(s->planted(Plant::kGpuIdle));
  auto custom = synth::parse_synth_spec("gpu = \"Lab GPU\"\ngpu_sms = 40\ngpu_memory_gib = 16\ngpu_compute = \"7.5\"\n",
                                        "ok.toml");
  ASSERT_TRUE(custom.ok()) << custom.status().message();
  EXPECT_EQ(custom->gpu_sms, 40);
  EXPECT_EQ(custom->compute_minor, 5);
}

TEST(SynthSpec, ErrorsNameTheFileAndTheKey) {
  EXPECT_EQ(spec_error("stepz = 3\n").rfind("bad.toml: stepz: unknown key", 0), 0u) << spec_error("stepz = 3\n");
  EXPECT_EQ(spec_error("[plant.longtail]\nstrength = 1\n"),
            "bad.toml: plant.longtail: unknown plant (docs/synth.md lists them)");
  EXPECT_EQ(spec_error("[plant.long_tail]\nstrenght = 1\n"),
            "bad.toml: plant.long_tail.strenght: unknown key (a plant takes only strength)");
  EXPECT_EQ(spec_error("[plant.launch_bound]\nstrength = 0.3\nshape = \"graph\"\n"),
            "bad.toml: plant.launch_bound.shape: must be \"tiny_kernels\", \"eager_block\" or \"gemm_queue\" (got "
            "\"graph\")");
  EXPECT_EQ(spec_error("[plant.long_tail]\nstrength = 1\nshape = \"eager_block\"\n"),
            "bad.toml: plant.long_tail.shape: unknown key (a plant takes only strength)");
  EXPECT_EQ(spec_error("[plant.long_tail]\nstrength = 1.5\n"),
            "bad.toml: plant.long_tail.strength: must be between 0 and 1 (got 1.5)");
  EXPECT_EQ(spec_error("[plant.long_tail]\nstrength = \"high\"\n"),
            "bad.toml: plant.long_tail.strength: must be a number between 0 and 1");
  EXPECT_EQ(spec_error("[plant.long_tail]\n"), "bad.toml: plant.long_tail.strength: missing");
  EXPECT_EQ(spec_error("steps = 0\n"), "bad.toml: steps: must be between 1 and 10000 (got 0)");
  EXPECT_EQ(spec_error("steps = 2.5\n"), "bad.toml: steps: must be an integer between 1 and 10000");
  EXPECT_EQ(spec_error("[model]\nstep_sync = \"always\"\n"),
            "bad.toml: model.step_sync: must be \"item\", \"device\" or \"none\" (got \"always\")");
  EXPECT_EQ(spec_error("[model]\nlayer = 3\n").rfind("bad.toml: model.layer: unknown key", 0), 0u);
  EXPECT_EQ(spec_error("[plant.straggler]\nstrength = 0.5\n"), "bad.toml: plant.straggler: needs ranks >= 2");
  EXPECT_EQ(spec_error("[plant.comb_pattern]\nstrength = 0.5\n[plant.dataloader_bound]\nstrength = 0.5\n"),
            "bad.toml: plant.dataloader_bound: is the same plant as plant.comb_pattern: set one of them");
  EXPECT_EQ(
      spec_error("gpu = \"Mystery GPU\"\n"),
      "bad.toml: gpu: \"Mystery GPU\" is not in the built-in table: give gpu_sms, gpu_memory_gib and gpu_compute");
  const std::string syntax = spec_error("steps = = 3\n");
  EXPECT_EQ(syntax.rfind("bad.toml:1:", 0), 0u) << syntax;
  for (const std::string& e : {spec_error("stepz = 3\n"), syntax}) EXPECT_EQ(e.find('\n'), std::string::npos) << e;
}

TEST(SynthSpec, CliBadSpecIsOneLineAndExit2) {
  const fs::path bad = temp_path("bad_cli.toml");
  std::ofstream(bad) << "[plant.long_tail]\nstrength = 2\n";
  const fs::path err = temp_path("bad_cli.err");
  const pid_t pid = fork();
  if (pid == 0) {
    if (!std::freopen(err.c_str(), "w", stderr) || !std::freopen("/dev/null", "w", stdout)) _exit(126);
    const std::string exe = std::string(TRACEDOC_BINARY_DIR) + "/tracedoc";
    execl(exe.c_str(), exe.c_str(), "synth", bad.c_str(), "-o", temp_path("never").c_str(),
          static_cast<char*>(nullptr));
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 2);
  const std::string text = read_file(err);
  EXPECT_EQ(text, "tracedoc: " + bad.string() + ": plant.long_tail.strength: must be between 0 and 1 (got 2)\n");
  EXPECT_FALSE(fs::exists(temp_path("never.json")));
}

// ---- generation ----

const std::vector<std::string> kExamples = {
    "clean",      "clean_2ranks",    "comb_pattern",        "dataloader_bound", "long_tail",     "staircase_memory",
    "sync_stall", "memcpy_heavy",    "pageable_memcpy",     "launch_bound",     "kernel_config", "exposed_comm",
    "straggler",  "layout_overhead", "tensor_cores_unused", "gpu_idle"};

class SynthExample : public ::testing::TestWithParam<std::string> {};

TRACEDOC_TEST_LABELS(SynthExample, unit);

// The trace is one a profiler could have recorded: ops nest per thread, every GPU operation starts
// after its launch call returned, correlation ids are unique in the process, one stream runs one
// thing at a time.
TEST_P(SynthExample, IsPhysicallyConsistent) {
  for (const Trace& t : generated(GetParam()).result.ranks) {
    std::map<int64_t, std::pair<TimeNs, TimeNs>> launch;  // correlation -> API span
    for (size_t i = 0; i < t.api.size(); ++i) {
      EXPECT_TRUE(launch.emplace(t.api.correlation[i], std::pair{t.api.start[i], t.api.end[i]}).second)
          << "duplicate correlation";
      EXPECT_LE(t.api.start[i], t.api.end[i]);
    }
    std::map<int32_t, TimeNs> stream_end;
    const auto check_gpu = [&](const auto& table, const char* what) {
      for (size_t i = 0; i < table.size(); ++i) {
        const auto it = launch.find(table.correlation[i]);
        ASSERT_NE(it, launch.end()) << what << " without a launch";
        EXPECT_GE(table.start[i], it->second.first) << what << " starts before its launch";
        EXPECT_LT(table.start[i], table.end[i]);
      }
    };
    check_gpu(t.kernels, "kernel");
    check_gpu(t.memcpys, "copy");
    for (size_t i = 0; i < t.kernels.size(); ++i) {  // tables are in start order
      TimeNs& end = stream_end[t.kernels.stream[i]];
      EXPECT_GE(t.kernels.start[i], end) << "kernels overlap on stream " << t.kernels.stream[i];
      end = t.kernels.end[i];
    }
    // Proper nesting per thread: each op ends before the op it started inside does.
    std::map<int64_t, std::vector<TimeNs>> open;  // thread -> ends of the open ops
    const auto& o = t.pytorch.ops;
    for (size_t i = 0; i < o.size(); ++i) {
      auto& stack = open[o.global_tid[i]];
      while (!stack.empty() && stack.back() <= o.start[i]) stack.pop_back();
      if (!stack.empty()) {
        EXPECT_LE(o.end[i], stack.back()) << t.str(o.name[i]) << " overlaps its parent";
      }
      stack.push_back(o.end[i]);
    }
    ASSERT_EQ(t.pytorch.steps.size(), 12u);
  }
}

// Both files read back, and say the same about kernels, copies and CUDA calls. Documented
// differences: the nsys export counts time from its session start (the last whole second before the
// first event), the Kineto trace from baseTimeNanoseconds, so reports with absolute times
// (cuda_gpu_trace, step_sum) differ by that constant: the export's META_DATA_EXPORT says how much
// (TRACEDOC_SOURCE_TIME_SHIFT_NS); the durations in them are equal. An nsys export has no PyTorch
// rank, so the Rank column of the reports that have one is empty there (compared without it).
TEST_P(SynthExample, BothFormatsAgree) {
  const Generated& g = generated(GetParam());
  for (size_t r = 0; r < g.json.size(); ++r) {
    for (const std::string rep : {"cuda_gpu_kern_sum", "cuda_gpu_mem_time_sum", "cuda_gpu_mem_size_sum", "cuda_api_sum",
                                  "cuda_gpu_kern_gb_sum", "cuda_kern_exec_sum", "nvtx_sum", "gpu_copy_sum"}) {
      Table a = report(g.json[r], rep), b = report(g.sqlite[r], rep);
      if (!a.rows.empty() && a.rows[0][0] == "Rank") {
        for (auto* t : {&a, &b})
          for (auto& row : t->rows) row.erase(row.begin());
      }
      EXPECT_EQ(a.rows, b.rows) << rep;
    }
    const int64_t shift = export_timebase(g.result.ranks[r]).shift_ns;
    const Table a = report(g.json[r], "cuda_gpu_trace"), b = report(g.sqlite[r], "cuda_gpu_trace");
    ASSERT_EQ(a.size(), b.size());
    ASSERT_GT(a.size(), 1000u);
    for (size_t i = 1; i <= a.size(); ++i) {
      std::vector<std::string> x = a.rows[i], y = b.rows[i];
      y[0] = std::to_string(std::stoll(y[0]) + shift);
      ASSERT_EQ(x, y) << "cuda_gpu_trace row " << i;
    }
    // The Kineto file is the in-memory trace: every report the same.
    for (const std::string rep :
         {"op_sum", "step_sum", "tb_step_breakdown", "tb_gpu_metrics", "kernel_launch_stats", "gpu_mem_sum",
          "gpu_mem_step_sum", "comm_comp_overlap", "gpu_time_breakdown", "op_kernel_sum"}) {
      EXPECT_EQ(report_csv(g.result.ranks[r], rep), report_csv(g.json[r], rep)) << rep;
    }
  }
}

TEST_P(SynthExample, SameSeedSameBytes) {
  auto spec = synth::read_synth_spec((kSpecs / (GetParam() + ".toml")).string());
  ASSERT_TRUE(spec.ok());
  auto again = synth::build_training_loop(*spec);
  ASSERT_TRUE(again.ok());
  const Generated& g = generated(GetParam());
  for (size_t r = 0; r < g.result.ranks.size(); ++r) {
    EXPECT_EQ(kineto_json(again->ranks[r]), kineto_json(g.result.ranks[r]));
    const std::string a = temp_path(GetParam() + "_again.sqlite").string(),
                      b = temp_path(GetParam() + "_again2.sqlite").string();
    ASSERT_TRUE(write_nsys_sqlite(again->ranks[r], a).ok());
    ASSERT_TRUE(write_nsys_sqlite(g.result.ranks[r], b).ok());
    EXPECT_TRUE(read_file(a) == read_file(b)) << "sqlite bytes differ";
  }
}

INSTANTIATE_TEST_SUITE_P(Examples, SynthExample, ::testing::ValuesIn(kExamples));

TRACEDOC_TEST_LABELS(Synth, unit);

TEST(Synth, OtherSeedOtherTrace) {
  auto spec = synth::read_synth_spec((kSpecs / "clean.toml").string());
  ASSERT_TRUE(spec.ok());
  spec->seed = 2;
  auto other = synth::build_training_loop(*spec);
  ASSERT_TRUE(other.ok());
  EXPECT_NE(kineto_json(other->ranks[0]), kineto_json(generated("clean").result.ranks[0]));
}

// ---- the clean loop ----

TEST(Synth, CleanLoopKeepsTheGpuBusy) {
  const Trace& t = json("clean");
  const Table steps = report(t, "step_sum");
  ASSERT_EQ(steps.size(), 12u);
  for (size_t r = 1; r <= steps.size(); ++r) {
    // Busy from the first GPU operation of the step to its last: the CPU stays ahead.
    EXPECT_GE(steps.num(r, "GPU Busy (ns)") / steps.num(r, "GPU Span (ns)"), 0.99);
    EXPECT_GE(steps.num(r, "GPU Busy (ns)") / steps.num(r, "CPU Duration (ns)"), 0.93);
  }
  const Table launches = report(t, "kernel_launch_stats");
  EXPECT_EQ(launches.num(1, "Short Kernels"), 0);
  EXPECT_GT(launches.num(1, "Delay Med (ns)"), 100'000);  // a queue of launches waits for the GPU
  EXPECT_EQ(rule(t, "cuda_memcpy_sync").size(), 0u);
  EXPECT_EQ(rule(t, "gpu_gaps:gap=1").size(), 0u);
  const Table mem = report(t, "gpu_mem_step_sum");
  for (size_t r = 1; r <= mem.size(); ++r) EXPECT_EQ(mem.text(r, "Growth (MB)"), "0.000");
  const Table tb = report(t, "tb_gpu_metrics");
  EXPECT_GT(tb.num(1, "Kernel Time using Tensor Cores (%)"), 50);
  // Every block a whole number of warps; no kernel below 25% estimated occupancy has 5% of the time.
  for (size_t i = 0; i < t.kernels.size(); ++i) {
    EXPECT_EQ(t.kernels.block_x[i] * t.kernels.block_y[i] % 32, 0) << t.str(t.kernels.name[i]);
  }
  // 41 forward and 82 backward kernels, 7 in the optimizer.
  EXPECT_EQ(t.kernels.size(), 12u * 130);
}

// ---- plants: each against the clean loop ----

TRACEDOC_TEST_LABELS(SynthPlant, unit);

TEST(SynthPlant, CombPatternAndDataLoaderBound) {
  const double clean = mean_busy_share(json("clean"));
  for (const std::string name : {"comb_pattern", "dataloader_bound"}) {
    const double s = 0.5;
    // The DataLoader range grows to s x the clean GPU step and the GPU waits for it: busy share
    // about 1 / (1 + s) of the clean one.
    EXPECT_NEAR(mean_busy_share(json(name)), clean / (1 + s), 0.03) << name;
    EXPECT_NEAR(tb_average(json(name), "DataLoader (%)"), 100 * s / (1 + s), 3) << name;
  }
  EXPECT_LT(tb_average(json("clean"), "DataLoader (%)"), 5);
}

TEST(SynthPlant, GpuIdle) {
  const double s = 0.5;
  EXPECT_NEAR(mean_busy_share(json("gpu_idle")), mean_busy_share(json("clean")) / (1 + s), 0.04);
  EXPECT_GT(tb_average(json("gpu_idle"), "CPU Exec (%)"), 100 * s / (1 + s) - 10);
  EXPECT_LT(tb_average(json("gpu_idle"), "DataLoader (%)"), 5);
  EXPECT_EQ(json("gpu_idle").kernels.size(), json("clean").kernels.size());  // CPU-only work
}

TEST(SynthPlant, LongTail) {
  // ceil(0.5 x 12) = 6 softmax kernels at 10x the median, same launch configuration.
  for (const std::string name : {"clean", "long_tail"}) {
    const Trace& t = json(name);
    const Table k = report(t, "cuda_gpu_kern_sum");
    const size_t row = k.find("Name", "softmax_warp_forward");
    ASSERT_NE(row, 0u);
    const double median = k.num(row, "Med (ns)");
    int outliers = 0;
    for (size_t i = 0; i < t.kernels.size(); ++i) {
      if (t.str(t.kernels.name[i]).find("softmax_warp_forward") == std::string::npos) continue;
      outliers += static_cast<double>(t.kernels.end[i] - t.kernels.start[i]) > 5 * median;
    }
    EXPECT_EQ(outliers, name == "clean" ? 0 : 6) << name;
    if (name == "long_tail") {
      EXPECT_NEAR(k.num(row, "Max (ns)") / median, 10, 0.6);
    }
    const Table gb = report(t, "cuda_gpu_kern_gb_sum");
    int configs = 0;
    for (size_t r = 1; r <= gb.size(); ++r)
      configs += gb.text(r, "Name").find("softmax_warp_forward") != std::string::npos;
    EXPECT_EQ(configs, 1);
  }
}

TEST(SynthPlant, StaircaseMemory) {
  // 1 GiB over 12 steps, never freed: each step grows by the same 512-byte multiple.
  const int64_t per_step = static_cast<int64_t>(1073741824.0 / 12 / 512) * 512;
  const Table mem = report(json("staircase_memory"), "gpu_mem_step_sum");
  ASSERT_EQ(mem.size(), 12u);
  for (size_t r = 1; r <= mem.size(); ++r) EXPECT_EQ(mem.text(r, "Growth (MB)"), fmt::format("{:.3f}", per_step / 1e6));
  const Table sum = report(json("staircase_memory"), "gpu_mem_sum");
  EXPECT_EQ(sum.text(1, "Growth (MB)"), fmt::format("{:.3f}", 12 * per_step / 1e6));
  EXPECT_EQ(report(json("clean"), "gpu_mem_sum").text(1, "Growth (MB)"), "0.000");
}

TEST(SynthPlant, SyncStall) {
  // ceil(8 x 0.5) = 4 aten::nonzero syncs a step, each blocking the host until the GPU drains and
  // then leaving the GPU idle while the host catches up.
  const Table clean = rule(json("clean"), "cuda_api_sync:rows=100000"),
              planted = rule(json("sync_stall"), "cuda_api_sync:rows=100000");
  EXPECT_EQ(clean.size(), 12u);  // loss.item()'s stream sync (the copy before it did the waiting)
  EXPECT_EQ(planted.size(), 12u + 48u);
  double blocked = 0;
  for (size_t r = 1; r <= planted.size(); ++r) blocked += planted.num(r, "Duration (ns)");
  EXPECT_GT(blocked / 12, 1e6);  // more than 1 ms a step with the host blocked
  EXPECT_LT(mean_busy_share(json("sync_stall")), mean_busy_share(json("clean")) - 0.04);
  const Table ops = report(json("sync_stall"), "op_sum");
  EXPECT_EQ(ops.num(ops.find("Operator", "aten::nonzero"), "Calls"), 48);
}

TEST(SynthPlant, MemcpyHeavy) {
  const double s = 0.5, gpu = static_cast<double>(generated("memcpy_heavy").result.clean.gpu_ns);
  const auto copy_ns = [](const Trace& t) {
    double sum = 0;
    for (size_t i = 0; i < t.memcpys.size(); ++i) sum += static_cast<double>(t.memcpys.end[i] - t.memcpys.start[i]);
    return sum / 12;
  };
  EXPECT_NEAR(copy_ns(json("memcpy_heavy")) - copy_ns(json("clean")), s * gpu, 0.03 * s * gpu);
  EXPECT_EQ(rule(json("memcpy_heavy"), "cuda_memcpy_async").size(),
            12u);  // still only item()'s: the new ones are pinned
  const Table copies = report(json("memcpy_heavy"), "gpu_copy_sum");
  EXPECT_NE(copies.find("Copy Kind", "Device-to-Host"), 0u);
}

TEST(SynthPlant, PageableMemcpy) {
  const Table sync = rule(json("pageable_memcpy"), "cuda_memcpy_sync");
  EXPECT_EQ(sync.size(), 12u);
  EXPECT_EQ(rule(json("clean"), "cuda_memcpy_sync").size(), 0u);
  const Table copies = report(json("pageable_memcpy"), "gpu_copy_sum");
  const size_t row = copies.find("Src Kind", "Pageable");
  ASSERT_NE(row, 0u);
  EXPECT_EQ(copies.text(row, "Copy Kind"), "Host-to-Device");
  EXPECT_NEAR(copies.num(row, "Throughput (MB/s)"), 6000, 60);
  const double gpu = static_cast<double>(generated("pageable_memcpy").result.clean.gpu_ns);
  EXPECT_NEAR(copies.num(row, "Total Time (ns)") / 12, 0.5 * gpu, 0.03 * 0.5 * gpu);
  EXPECT_EQ(copies.find("Src Kind", "Pinned"), 0u);
}

TEST(SynthPlant, LaunchBound) {
  const Table clean = report(json("clean"), "kernel_launch_stats"),
              planted = report(json("launch_bound"), "kernel_launch_stats");
  const int64_t tiny = static_cast<int64_t>(planted.num(1, "Launches") - clean.num(1, "Launches"));
  EXPECT_EQ(planted.num(1, "Short Kernels"), tiny);  // every one of them shorter than its launch
  EXPECT_GT(tiny, 12 * 500);
  // The stretch of tiny kernels is half of each step.
  const double before = mean_step_ns(json("clean")), after = mean_step_ns(json("launch_bound"));
  EXPECT_NEAR((after - before) / after, 0.5, 0.05);
  EXPECT_LT(mean_busy_share(json("launch_bound")), mean_busy_share(json("clean")) - 0.3);
}

TEST(SynthPlant, KernelConfig) {
  const Table gb = report(json("kernel_config"), "cuda_gpu_kern_gb_sum");
  const size_t row = gb.find("Name", "fused_bias_act_kernel");
  ASSERT_NE(row, 0u);
  EXPECT_EQ(gb.text(row, "BlockXYZ"), " 100    1    1");
  // s x the clean GPU step: a third of the planted kernel time.
  EXPECT_NEAR(gb.num(row, "Time (%)"), 100.0 * 0.5 / 1.5, 2);
  const Trace& t = json("kernel_config");
  for (size_t i = 0; i < t.kernels.size(); ++i) {
    if (t.kernels.block_x[i] == 100) {
      EXPECT_LE(t.kernels.est_occupancy[i], 12);
    }
  }
  EXPECT_LT(report(t, "tb_gpu_metrics").num(1, "Est. Achieved Occupancy (%)"),
            report(json("clean"), "tb_gpu_metrics").num(1, "Est. Achieved Occupancy (%)") - 5);
}

TEST(SynthPlant, LayoutOverhead) {
  const double copies = kernel_total(json("layout_overhead"), {"direct_copy_kernel_cuda"});
  const double all = kernel_total(json("layout_overhead"), {""});
  EXPECT_NEAR(copies / all, 0.5 / 1.5, 0.02);
  EXPECT_EQ(kernel_total(json("clean"), {"direct_copy_kernel_cuda"}), 0);
  const Table ops = report(json("layout_overhead"), "op_sum");
  EXPECT_EQ(ops.num(ops.find("Operator", "aten::contiguous"), "Calls"), 12 * 3 * 2);
}

TEST(SynthPlant, TensorCoresUnused) {
  EXPECT_EQ(report(json("tensor_cores_unused"), "tb_gpu_metrics").text(1, "Kernel Time using Tensor Cores (%)"), "0.0");
  // Every matmul 1 + 3 x 1.0 = 4 times slower.
  EXPECT_NEAR(kernel_total(json("tensor_cores_unused"), kGemms) / kernel_total(json("clean"), kGemms), 4, 0.1);
  EXPECT_NE(report(json("tensor_cores_unused"), "cuda_gpu_kern_sum").find("Name", "ampere_sgemm_128x64_tn"), 0u);
}

TEST(SynthPlant, ExposedComm) {
  const Table clean = report(json("clean_2ranks"), "comm_comp_overlap");
  EXPECT_GT(clean.num(1, "Overlap (%)"), 50);  // only the last bucket waits for the end of backward
  for (size_t r = 0; r < 2; ++r) {
    const Table t = report(json("exposed_comm", r), "comm_comp_overlap");
    EXPECT_EQ(t.num(1, "Overlap (%)"), 0);
    const double step = static_cast<double>(generated("exposed_comm").result.clean.step_ns);
    EXPECT_NEAR(t.num(1, "Communication (ns)") / 12, 0.5 * step, 0.03 * 0.5 * step);
  }
}

TEST(SynthPlant, Straggler) {
  // Rank 1 computes 1.5x longer; rank 0's all-reduces wait for it.
  const auto compute = [](const Trace& t) { return report(t, "comm_comp_overlap").num(1, "Computation (ns)"); };
  const auto comm = [](const Trace& t) { return report(t, "comm_comp_overlap").num(1, "Communication (ns)"); };
  EXPECT_NEAR(compute(json("straggler", 1)) / compute(json("straggler", 0)), 1.5, 0.02);
  EXPECT_GT(comm(json("straggler", 0)), 3 * comm(json("straggler", 1)));
  EXPECT_NEAR(comm(json("clean_2ranks", 0)) / comm(json("clean_2ranks", 1)), 1, 0.1);
  EXPECT_NEAR(mean_step_ns(json("straggler", 0)) / mean_step_ns(json("straggler", 1)), 1, 0.02);
  // The NCCL kernels carry the collective as Kineto writes it.
  const auto& c = json("straggler", 0).pytorch.collectives;
  ASSERT_EQ(c.size(), 36u);
  EXPECT_EQ(json("straggler", 0).str(c.collective[0]), "allreduce");
  EXPECT_EQ(c.group_size[0], 2);
  EXPECT_EQ(json("straggler", 1).pytorch.rank, 1);
}

// ---- tracedoc diagnose on the planted traces ------------------------------------------------------
// Every rule fires on its plant, in both formats, with the evidence the plant put there; nothing
// fires on the clean loops. The nsys export carries the allocator's events without its running
// totals (nsys records none), so its memory levels start from 0; the growth per step is the same.

std::string ids(const diagnose::Diagnosis& d) {
  std::string out;
  for (const auto& f : d.findings) out += f.id + " ";
  return out;
}

// The ranks of a multi-rank spec as one rank directory (PyTorch files), as a user would read them.
Trace rank_directory(const std::string& name) {
  const Generated& g = generated(name);
  const fs::path dir = temp_path(name + "_dir");
  fs::create_directories(dir);
  for (size_t r = 0; r < g.result.ranks.size(); ++r) {
    if (!write_kineto_json(g.result.ranks[r], (dir / fmt::format("{}_rank{}.json", name, r)).string()).ok()) {
      throw std::runtime_error("kineto write failed");
    }
  }
  auto t = read_kineto_directory(dir.string());
  if (!t.ok()) throw std::runtime_error(t.status().message());
  return std::move(t).value();
}

TRACEDOC_TEST_LABELS(SynthDiagnose, unit);

TEST(SynthDiagnose, CleanLoopsHaveNoFindings) {
  const Generated& clean = generated("clean");
  EXPECT_EQ(ids(diagnose::diagnose(clean.json[0], {})), "");
  EXPECT_EQ(ids(diagnose::diagnose(clean.sqlite[0], {})), "");
  const Generated& two = generated("clean_2ranks");
  for (size_t r = 0; r < 2; ++r) {
    EXPECT_EQ(ids(diagnose::diagnose(two.json[r], {})), "") << "rank " << r;
    EXPECT_EQ(ids(diagnose::diagnose(two.sqlite[r], {})), "") << "rank " << r;
  }
  EXPECT_EQ(ids(diagnose::diagnose(rank_directory("clean_2ranks"), {})), "");
}

class SynthDiagnosePlant : public ::testing::TestWithParam<std::string> {};

TRACEDOC_TEST_LABELS(SynthDiagnosePlant, unit);

TEST_P(SynthDiagnosePlant, FiresWithItsEvidence) {
  const std::string rule = GetParam();
  const Generated& g = generated(rule);
  const std::vector<std::pair<const char*, const Trace*>> inputs = {{"json", &g.json[0]}, {"sqlite", &g.sqlite[0]}};
  for (const auto& [format, trace] : inputs) {
    SCOPED_TRACE(format);
    const diagnose::Diagnosis d = diagnose::diagnose(*trace, {});
    const diagnose::Finding* f = finding(d, rule == "dataloader_bound" ? "dataloader_bound" : rule);
    ASSERT_NE(f, nullptr) << ids(d);
    EXPECT_FALSE(f->remedy.empty());
    if (rule == "comb_pattern" || rule == "dataloader_bound") {
      // DataLoader.__next__ takes half the clean GPU time of a step: a third of the planted step.
      const diagnose::Finding* comb = finding(d, "comb_pattern");
      ASSERT_NE(comb, nullptr);
      EXPECT_EQ(figure(*comb, "steps"), 12);
      EXPECT_NEAR(figure(*comb, "median_gap_share"), 1.0 / 3.0, 0.02);
      EXPECT_EQ(comb->offenders.at(0).name, "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__");
      const diagnose::Finding* dl = finding(d, "dataloader_bound");
      ASSERT_NE(dl, nullptr);
      EXPECT_EQ(figure(*dl, "calls"), 12);
      EXPECT_EQ(dl->severity, diagnose::Severity::kCritical);
    } else if (rule == "long_tail") {
      ASSERT_EQ(f->offenders.size(), 1u);  // the planted kernel alone
      EXPECT_NE(f->offenders[0].name.find("softmax_warp_forward"), std::string::npos);
      EXPECT_EQ(f->offenders[0].count, 6);  // ceil(0.5 x 12) instances 10x the median
    } else if (rule == "staircase_memory") {
      EXPECT_EQ(f->severity, diagnose::Severity::kCritical);  // the A100 fills in under 1000 steps
      EXPECT_NEAR(figure(*f, "growth_per_step_bytes"), 1073741824.0 / 12, 1 << 20);
      EXPECT_EQ(figure(*f, "rising_share"), 1.0);
    } else if (rule == "sync_stall") {
      // 48 planted syncs (4 per step) and the clean loop's loss.item() (1 per step).
      EXPECT_EQ(figure(*f, "calls"), 60);
      ASSERT_FALSE(f->offenders.empty());
      if (std::string(format) == "json") {  // the operator that synchronized: PyTorch traces only
        EXPECT_EQ(f->offenders[0].name, "cudaStreamSynchronize in aten::nonzero");
        EXPECT_EQ(f->offenders[0].count, 48);
      } else {
        EXPECT_EQ(f->offenders[0].name.rfind("cudaStreamSynchronize", 0), 0u);
      }
    } else if (rule == "memcpy_heavy") {
      EXPECT_NEAR(figure(*f, "exposed_copy_share"), 1.0 / 3.0, 0.05);
    } else if (rule == "pageable_memcpy") {
      EXPECT_EQ(figure(*f, "copies"), 24);
      EXPECT_EQ(figure(*f, "synchronous_copies"), 12);
      EXPECT_NEAR(figure(*f, "gb_per_s"), 6.0, 0.2);
    } else if (rule == "launch_bound") {
      EXPECT_GT(figure(*f, "short_kernel_share"), 0.8);
      EXPECT_GT(figure(*f, "median_launch_ns"), figure(*f, "median_kernel_ns"));
    } else if (rule == "kernel_config") {
      ASSERT_FALSE(f->offenders.empty());
      EXPECT_NE(f->offenders[0].detail.find("100 threads per block, not a multiple of 32"), std::string::npos);
    } else if (rule == "layout_overhead") {
      EXPECT_NEAR(figure(*f, "layout_share"), 1.0 / 3.0, 0.02);
    } else if (rule == "tensor_cores_unused") {
      EXPECT_EQ(figure(*f, "tensor_core_share"), 0.0);
      EXPECT_NE(f->offenders.at(0).name.find("sgemm"), std::string::npos);
    } else if (rule == "gpu_idle") {
      EXPECT_NEAR(figure(*f, "idle_share"), 1.0 / 3.0, 0.05);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Plants, SynthDiagnosePlant,
                         ::testing::Values("comb_pattern", "dataloader_bound", "long_tail", "staircase_memory",
                                           "sync_stall", "memcpy_heavy", "pageable_memcpy", "launch_bound",
                                           "kernel_config", "layout_overhead", "tensor_cores_unused", "gpu_idle"));

// The two shapes of launch overhead whose kernels are mostly not "short": an eager block with Python
// between the launches, and small matmuls draining a queue behind a large GEMM. The launch bubbles
// are most of the GPU's idle time; the block's final synchronize, on an idle GPU, stalls nothing.
TEST(SynthDiagnose, LaunchBoundShapesWithLongerKernels) {
  for (const char* spec : {"launch_bound_eager_block", "launch_bound_gemm_queue"}) {
    const Generated& g = generated(spec);
    for (const Trace* t : {&g.json[0], &g.sqlite[0]}) {
      SCOPED_TRACE(fmt::format("{} {}", spec, t->source.format));
      const diagnose::Diagnosis d = diagnose::diagnose(*t, {});
      const diagnose::Finding* f = finding(d, "launch_bound");
      ASSERT_NE(f, nullptr) << ids(d);
      EXPECT_LT(figure(*f, "short_kernel_share"), 0.5);
      EXPECT_GT(figure(*f, "launch_bubble_idle_share"), 0.85);
      EXPECT_GT(figure(*f, "launch_bubble_share"), 0.15);
      EXPECT_EQ(finding(d, "sync_stall"), nullptr) << ids(d);
    }
  }
  // The clean loop has neither.
  EXPECT_EQ(finding(diagnose::diagnose(json("clean"), {}), "launch_bound"), nullptr);
}

TEST(SynthDiagnose, ExposedCommunicationAndStraggler) {
  const Generated& exposed = generated("exposed_comm");
  for (const Trace* t : {&exposed.json[0], &exposed.sqlite[0]}) {
    const diagnose::Diagnosis d = diagnose::diagnose(*t, {});
    const diagnose::Finding* f = finding(d, "exposed_comm");
    ASSERT_NE(f, nullptr) << ids(d);
    EXPECT_NE(f->offenders.at(0).name.find("ncclDevKernel_AllReduce"), std::string::npos);
  }
  // A straggler shows across ranks: rank 1 computes 1.5x as long, and rank 0 waits in its collectives.
  const diagnose::Diagnosis d = diagnose::diagnose(rank_directory("straggler"), {});
  const diagnose::Finding* f = finding(d, "straggler");
  ASSERT_NE(f, nullptr) << ids(d);
  EXPECT_NEAR(figure(*f, "ratio"), 1.5 / 1.25, 0.02);  // over the median of two ranks: their mean
  EXPECT_EQ(f->offenders.at(0).name, "rank 1");
  const diagnose::Finding* wait = finding(d, "exposed_comm");
  ASSERT_NE(wait, nullptr);
  EXPECT_EQ(wait->scope.rfind("rank 0", 0), 0u) << wait->scope;
}

}  // namespace
}  // namespace tracedoc::testing
