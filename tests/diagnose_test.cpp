// Tests of the diagnosis engine (src/diagnose): the findings on the bundled example and on real
// traces whose problem is known (the TensorBoard plugin's ResNet-50 samples with and without
// DataLoader workers, PyTorch CPU-only traces), cross-checked against the reports that compute the
// same figures; configuration; and the rule registry.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "diagnose/engine.h"
#include "diagnose/rules.h"
#include "ingest/nsys_sqlite_reader.h"
#include "report/diagnose_writer.h"
#include "test_support.h"

namespace tracedoc::testing {
namespace {

namespace fs = std::filesystem;
using diagnose::Diagnosis;
using diagnose::Finding;
using diagnose::Severity;

const fs::path kExample = fs::path(TRACEDOC_SOURCE_DIR) / "examples" / "toy_training.sqlite";

std::vector<std::string> ids(const Diagnosis& d) {
  std::vector<std::string> out;
  for (const Finding& f : d.findings) out.push_back(f.id);
  return out;
}

TRACEDOC_TEST_LABELS(Diagnose, corpus golden);

TEST(Diagnose, RegistryIsSortedAndEveryRuleHasItsThresholds) {
  const auto& rules = diagnose::all_rules();
  ASSERT_EQ(rules.size(), 26u);
  for (const char* id :
       {"comb_pattern",       "dataloader_bound",      "long_tail",           "staircase_memory",   "sync_stall",
        "memcpy_heavy",       "pageable_memcpy",       "launch_bound",        "kernel_config",      "exposed_comm",
        "straggler",          "layout_overhead",       "tensor_cores_unused", "gpu_idle",           "host_waits",
        "uncoalesced_access", "bank_conflicts",        "barrier_stalls",      "occupancy_limited",  "memory_bound",
        "compute_bound",      "cpu_bound_during_idle", "sm_underused",        "oversubscribed_cpu", "low_mfu",
        "gemm_shape"}) {
    const diagnose::RuleDef* r = diagnose::find_rule(id);
    ASSERT_NE(r, nullptr) << id;
    EXPECT_NE(r->run == nullptr, r->run_on_job == nullptr) << r->id;  // one way to run, per rank or on the job
    const auto has = [&](const char* p) {
      return std::any_of(r->params.begin(), r->params.end(), [&](const diagnose::Param& x) { return x.name == p; });
    };
    EXPECT_TRUE(has("warning") && has("critical")) << id;
  }
  EXPECT_TRUE(std::is_sorted(rules.begin(), rules.end(), [](const auto& a, const auto& b) { return a.id < b.id; }));
  EXPECT_NE(rules_text().find("comb_pattern\n  GPU work in regular bursts"), std::string::npos);
}

// host_waits on an export made for it (tests/golden/host_waits/host_waits.sql: the launching
// thread waits 8 ms on a condition and 2 ms in polls while the GPU idles, and calls that must not
// count: nested, under a kernel, outside the GPU's span, not a wait, on a thread that launches
// nothing), and on the real exports with OS runtime calls, whose launching threads wait only before
// their first kernel: no finding there.
TEST(Diagnose, HostWaits) {
  auto path =
      write_sql_export({fs::path(TRACEDOC_SOURCE_DIR) / "tests/golden/host_waits/host_waits.sql"}, "host_waits");
  ASSERT_TRUE(path.ok()) << path.status().message();
  auto trace = read_nsys_sqlite(*path);
  fs::remove(*path);
  ASSERT_TRUE(trace.ok()) << trace.status().message();
  const Diagnosis d = diagnose::diagnose(*trace, {});
  const Finding* f = finding(d, "host_waits");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->scope, "pid 100");
  EXPECT_EQ(f->savings_ns, 10'000'000);
  EXPECT_DOUBLE_EQ(f->savings_share, 0.5);  // of the 20 ms the GPU's work spans
  EXPECT_EQ(f->severity, Severity::kCritical);
  EXPECT_EQ(figure(*f, "os_wait_ns"), 12'100'000);  // 8 + 0.6 + 2 + 1 + 0.5 ms: futex nested, ioctl no wait
  EXPECT_EQ(figure(*f, "lock_wait_idle_ns"), 8'000'000);
  EXPECT_EQ(figure(*f, "io_wait_idle_ns"), 2'000'000);
  EXPECT_EQ(figure(*f, "sleep_idle_ns"), 0);
  ASSERT_EQ(f->offenders.size(), 4u);
  EXPECT_EQ(f->offenders[0].name, "pthread_cond_timedwait");
  EXPECT_EQ(f->offenders[1].name, "poll");
  EXPECT_EQ(f->offenders[1].count, 2);
  EXPECT_EQ(f->offenders[1].total_ns, 2'000'000);
  ASSERT_EQ(f->ranges.size(), 2u);
  EXPECT_EQ(f->ranges[0].start, 3'000'000);
  EXPECT_EQ(f->ranges[0].end, 11'000'000);
  EXPECT_NE(f->title.find("mostly lock waits (pthread_cond_timedwait)"), std::string::npos) << f->title;
  EXPECT_NE(f->remedy.find("GIL"), std::string::npos);

  const fs::path root = nsys_traces_dir();
  if (root.empty()) GTEST_SKIP() << "../shared/traces/nsys not found";
  for (const char* file :
       {"cuda-perf-sandbox/report1.sqlite", "cuda-thinkering/output.sqlite", "test-cuda/report1.sqlite"}) {
    SCOPED_TRACE(file);
    const Trace& real = load_nsys((root / file).string());
    ASSERT_GT(real.os_calls.size(), 0u);
    EXPECT_EQ(finding(diagnose::diagnose(real, {}), "host_waits"), nullptr);
  }
}

// The bundled example: three steps in which the CPU waits in `data_wait` while the GPU idles,
// synchronous copies from pageable memory, FP32 GEMMs on an A100. Figures equal what the reports say
// (step_sum windows, gpu_copy_sum, cuda_gpu_kern_sum).
TEST(Diagnose, BundledExample) {
  const Diagnosis d = diagnose::diagnose(load_nsys(kExample.string()), {});
  EXPECT_EQ(d.basis, "steps");
  EXPECT_EQ(d.steps, 3);
  EXPECT_EQ(d.basis_ns, 72434547);  // the three detected steps, each to the end of its GPU work
  EXPECT_EQ(ids(d), (std::vector<std::string>{"comb_pattern", "gpu_idle", "host_waits", "sync_stall",
                                              "tensor_cores_unused", "pageable_memcpy"}));
  const Finding* comb = finding(d, "comb_pattern");
  ASSERT_NE(comb, nullptr);
  EXPECT_EQ(comb->severity, Severity::kCritical);
  EXPECT_EQ(comb->savings_ns, 55295335);
  EXPECT_EQ(figure(*comb, "steps"), 3);
  EXPECT_EQ(figure(*comb, "median_gap_ns"), 17757213);
  ASSERT_FALSE(comb->offenders.empty());
  EXPECT_EQ(comb->offenders[0].name, "data_wait");  // the NVTX range the CPU is in during the gaps
  EXPECT_NE(comb->title.find("the CPU is in data_wait"), std::string::npos) << comb->title;
  ASSERT_EQ(comb->ranges.size(), 3u);

  const Finding* idle = finding(d, "gpu_idle");
  ASSERT_NE(idle, nullptr);
  EXPECT_EQ(figure(*idle, "busy_ns") + figure(*idle, "long_gap_ns"), 72434547);  // no short gaps in this trace

  // The main thread waits on a condition (pthread_cond_wait, 4 calls: OSRT_API) for the loader
  // thread's batch: the same gaps seen from the CPU, each ending a little before the GPU starts again.
  const Finding* waits = finding(d, "host_waits");
  ASSERT_NE(waits, nullptr);
  EXPECT_EQ(waits->savings_ns, 54997226);
  EXPECT_LT(waits->savings_ns, comb->savings_ns);
  EXPECT_EQ(figure(*waits, "os_wait_ns"), 71678776);  // sum(end - start) of the 4 calls
  ASSERT_EQ(waits->offenders.size(), 1u);
  EXPECT_EQ(waits->offenders[0].name, "pthread_cond_wait");
  EXPECT_EQ(waits->offenders[0].count, 4);

  const Finding* copies = finding(d, "pageable_memcpy");
  ASSERT_NE(copies, nullptr);
  // gpu_copy_sum: Host-to-Device (Pageable) 5 copies ... and Device-to-Host (Pageable) 4: 97,517,584 B.
  EXPECT_EQ(figure(*copies, "copies"), 9);
  EXPECT_EQ(figure(*copies, "bytes"), 97517584);
  EXPECT_EQ(figure(*copies, "synchronous_copies"), 5);

  const Finding* tc = finding(d, "tensor_cores_unused");
  ASSERT_NE(tc, nullptr);
  EXPECT_EQ(tc->offenders.size(), 2u);  // ampere_sgemm_64x64_nn, ampere_sgemm_128x64_tn
  EXPECT_EQ(tc->offenders[0].name, "ampere_sgemm_64x64_nn");

  const Finding* sync = finding(d, "sync_stall");
  ASSERT_NE(sync, nullptr);
  EXPECT_EQ(figure(*sync, "calls"), 9);

  // Ordered by estimated savings.
  for (size_t i = 1; i < d.findings.size(); ++i) EXPECT_GE(d.findings[i - 1].savings_ns, d.findings[i].savings_ns);
}

// The TensorBoard plugin's ResNet-50 samples: with num_workers=0 the DataLoader holds the GPU up
// (the plugin shows DataLoader 33% of the step); with 4 workers it does not.
TEST(Diagnose, DataLoaderWorkersMakeTheCombGoAway) {
  if (shared_dir().empty()) GTEST_SKIP() << "../shared (the real traces) is absent";
  const fs::path samples = shared_dir() / "traces/kineto/kineto/tb_plugin/samples";
  const Trace& slow = load_kineto((samples / "resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz").string());
  const Diagnosis d = diagnose::diagnose(slow, {});
  const Finding* dl = finding(d, "dataloader_bound");
  ASSERT_NE(dl, nullptr);
  EXPECT_EQ(dl->severity, Severity::kCritical);
  // The GPU-idle part of the loading equals the plugin's DataLoader role summed over the six steps
  // (tb_step_breakdown: mean 59,261,833.3 ns per step).
  const auto tb = parse_csv(report_csv(slow, "tb_step_breakdown").value());
  int64_t role = 0;
  for (size_t i = 1; i + 1 < tb.size(); ++i) role += std::stoll(tb[i][9]);
  EXPECT_EQ(dl->savings_ns, role);
  EXPECT_EQ(figure(*dl, "calls"), 6);
  EXPECT_EQ(d.basis_ns, 1065553000);  // tb_gpu_metrics' window: the six steps stretched to their GPU work
  const Finding* comb = finding(d, "comb_pattern");
  ASSERT_NE(comb, nullptr);
  EXPECT_EQ(comb->offenders.at(0).name, "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__");
  EXPECT_NE(finding(d, "tensor_cores_unused"), nullptr);  // FP32 cuDNN kernels on a V100

  const Trace& fast = load_kineto((samples / "resnet50_num_workers_4/worker0.1623212756351.pt.trace.json.gz").string());
  const Diagnosis e = diagnose::diagnose(fast, {});
  EXPECT_EQ(finding(e, "dataloader_bound"), nullptr);
  EXPECT_EQ(finding(e, "comb_pattern"), nullptr);
}

// Launch-bound means the GPU waited for launches: on TraceLens' H100 Falconsai inference the median
// kernel runs 8 µs and most of the step passes in short gaps ending with a kernel still being
// launched; on HTA's trace_diff
// control the gaps between short kernels are dependency waits with ~40 launches queued.
TEST(Diagnose, LaunchBoundNeedsTheGpuToWaitForTheLaunch) {
  if (shared_dir().empty()) GTEST_SKIP() << "../shared (the real traces) is absent";
  const fs::path traces = shared_dir() / "traces/kineto";
  const Diagnosis yes = diagnose::diagnose(
      load_kineto((traces / "TraceLens/tests/traces/h100/Falconsai_nsfw_image_detection__1016002.json.gz").string()),
      {});
  const Finding* f = finding(yes, "launch_bound");
  ASSERT_NE(f, nullptr);
  EXPECT_GT(figure(*f, "short_kernel_share"), 0.5);
  EXPECT_LT(figure(*f, "median_kernel_ns"), 10000);
  EXPECT_GT(figure(*f, "launch_bubble_share"), 0.5);
  const Diagnosis no = diagnose::diagnose(
      load_kineto((traces / "HolisticTraceAnalysis/tests/data/trace_diff/control/control.json.gz").string()), {});
  EXPECT_EQ(finding(no, "launch_bound"), nullptr);
  EXPECT_NE(finding(no, "exposed_comm"), nullptr);
}

// PyTorch traces of CPU-only runs give no GPU findings (nothing at all here).
TEST(Diagnose, CpuOnlyTracesHaveNoGpuFindings) {
  if (shared_dir().empty()) GTEST_SKIP() << "../shared (the real traces) is absent";
  for (const char* path :
       {"torch113-cpu/cnn_fastdata.json", "torch113-cpu/inference_annot.json",
        "kineto/HolisticTraceAnalysis/tests/data/cpu_only/rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz"}) {
    const fs::path input = shared_dir() / "traces" / path;
    if (!fs::exists(input)) continue;
    const Diagnosis d = diagnose::diagnose(load_kineto(input.string()), {});
    EXPECT_TRUE(d.findings.empty()) << path << ": " << (d.findings.empty() ? "" : d.findings[0].title);
  }
}

TEST(Diagnose, RuleSelectionParametersAndMinimumSavings) {
  const Trace& t = load_nsys(kExample.string());
  diagnose::DiagnoseOptions only;
  only.rules = {"sync_stall"};
  const Diagnosis a = diagnose::diagnose(t, only);
  EXPECT_EQ(a.rules_run, std::vector<std::string>{"sync_stall"});
  EXPECT_EQ(ids(a), std::vector<std::string>{"sync_stall"});

  diagnose::DiagnoseOptions strict;
  strict.settings["comb_pattern"].params["min_gap_share"] = 0.9;  // the example's gaps are 78% of a step
  strict.settings["gpu_idle"].enabled = false;
  const Diagnosis b = diagnose::diagnose(t, strict);
  EXPECT_EQ(finding(b, "comb_pattern"), nullptr);
  EXPECT_EQ(finding(b, "gpu_idle"), nullptr);
  EXPECT_NE(finding(b, "sync_stall"), nullptr);

  diagnose::DiagnoseOptions quiet;
  quiet.min_savings_share = 0.5;  // only comb_pattern, gpu_idle and host_waits save more than half the steps
  EXPECT_EQ(ids(diagnose::diagnose(t, quiet)), (std::vector<std::string>{"comb_pattern", "gpu_idle", "host_waits"}));

  diagnose::DiagnoseOptions bad;
  bad.rules = {"no_such_rule"};
  EXPECT_FALSE(diagnose::check_options(bad).ok());
  bad.rules.clear();
  bad.settings["gpu_idle"].params["nope"] = 1;
  EXPECT_FALSE(diagnose::check_options(bad).ok());
}

TEST(Diagnose, ConfigFile) {
  const fs::path dir = fs::temp_directory_path() / ("tracedoc-diag-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  auto write = [&](const std::string& name, const std::string& text) {
    std::ofstream(dir / name) << text;
    return (dir / name).string();
  };
  diagnose::DiagnoseOptions o;
  ASSERT_TRUE(
      diagnose::load_config(write("ok.toml",
                                  "[rules.gpu_idle]\nenabled = false\n[rules.comb_pattern]\nmin_gap_share = 0.3\n"
                                  "[steps]\nmarker = \"train_step*\"\n[diagnose]\nmin_savings_ns = 1000\n"),
                            o)
          .ok());
  EXPECT_FALSE(o.settings["gpu_idle"].enabled);
  EXPECT_DOUBLE_EQ(o.settings["comb_pattern"].params["min_gap_share"], 0.3);
  EXPECT_EQ(o.steps.marker, "train_step*");
  EXPECT_EQ(o.min_savings_ns, 1000);
  for (const auto& [name, text, message] : std::vector<std::tuple<std::string, std::string, std::string>>{
           {"rule.toml", "[rules.nope]\nx = 1\n", "unknown rule [rules.nope]"},
           {"param.toml", "[rules.gpu_idle]\nmin_idel = 0.2\n", "rule gpu_idle has no parameter 'min_idel'"},
           {"type.toml", "[rules.gpu_idle]\nmin_idle = \"high\"\n", "rules.gpu_idle.min_idle must be a number"},
           {"section.toml", "[budget]\nx = 1\n", "unknown section [budget]"},
           {"syntax.toml", "[rules.gpu_idle\n", "syntax.toml:1:"}}) {
    diagnose::DiagnoseOptions x;
    const Status st = diagnose::load_config(write(name, text), x);
    EXPECT_FALSE(st.ok()) << name;
    EXPECT_NE(st.message().find(message), std::string::npos) << st.message();
    EXPECT_NE(st.message().find(name), std::string::npos) << st.message();  // names the file
  }
  fs::remove_all(dir);
}

TEST(Diagnose, WritersCarryEveryFinding) {
  const Diagnosis d = diagnose::diagnose(load_nsys(kExample.string()), {});
  const std::string json = diagnose_json({d});
  EXPECT_EQ(json.rfind("{\n  \"schema_version\": 1,\n  \"diagnoses\": [", 0), 0u);
  for (const char* key : {"\"id\": \"comb_pattern\"", "\"severity\": \"critical\"", "\"savings_ns\": 55295335",
                          "\"median_gap_ns\": 17757213", "\"offenders\": [", "\"ranges\": [",
                          "\"remedy\": \"The CPU prepares", "\"basis\": \"steps\""}) {
    EXPECT_NE(json.find(key), std::string::npos) << key;
  }
  const std::string md = diagnose_markdown({d});
  EXPECT_NE(md.find("| critical | `comb_pattern` |"), std::string::npos) << md;
  EXPECT_NE(md.find("<details><summary><code>sync_stall</code>"), std::string::npos);
  const std::string text = diagnose_text({d});
  EXPECT_NE(text.find("CRITICAL comb_pattern"), std::string::npos) << text;
  EXPECT_NE(text.find("remedy: "), std::string::npos);
}

}  // namespace
}  // namespace tracedoc::testing
