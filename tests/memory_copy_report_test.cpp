// Tests of the GPU memory and copy reports (gpu_mem_sum, gpu_mem_step_sum, gpu_mem_trace,
// gpu_copy_sum, gpu_copy_step_sum) with real values.
//
// The golden tables in tests/golden/memory_copy/ are written by
// tests/memory_copy/memory_copy_reference.py, which recomputes every figure from the raw JSON
// (Python json, exact decimals) and the raw SQLite (Python sqlite3), sharing no code with tracedoc.
// They cover every shared PyTorch trace with GPU `[memory]` events (19) or copies, every real nsys
// export with copies, and tests/golden/memory_copy/synthetic_export.sql (no real nsys export was
// captured with --cuda-memory-usage or annotates ProfilerStep ranges). Integers must be equal, and
// throughputs equal to the last bit (both sides compute bytes * 1e9 / ns in IEEE doubles).
// The hand-checked cases at the end pin values worked out on paper, in the comments.
#include <gtest/gtest.h>

#include <cctype>
#include <cstdlib>
#include <set>

#include "analysis/gpu_memory.h"
#include "analysis/host_link.h"
#include "ingest/nsys_sqlite_reader.h"
#include "report/number_format.h"
#include "test_support.h"

namespace tracedoc::testing {
namespace {

namespace fs = std::filesystem;

const fs::path kGolden = fs::path(TRACEDOC_SOURCE_DIR) / "tests" / "golden" / "memory_copy";

using GoldenRow = std::map<std::string, std::string>;

// Rows of one golden table, by source.
std::map<std::string, std::vector<GoldenRow>> load_table(const std::string& name) {
  std::map<std::string, std::vector<GoldenRow>> out;
  std::vector<std::string> header;
  for (const std::string& line : split(read_file(kGolden / name), '\n')) {
    if (line.empty() || line[0] == '#') continue;
    const std::vector<std::string> cells = split(line, '\t');
    if (header.empty()) {
      header = cells;
      continue;
    }
    GoldenRow r;
    for (size_t i = 0; i < header.size(); ++i) r[header[i]] = i < cells.size() ? cells[i] : "";
    out[r["source"]].push_back(std::move(r));
  }
  return out;
}

struct Golden {
  std::map<std::string, std::vector<GoldenRow>> mem = load_table("gpu_mem.tsv");
  std::map<std::string, std::vector<GoldenRow>> mem_steps = load_table("gpu_mem_steps.tsv");
  std::map<std::string, std::vector<GoldenRow>> copy = load_table("gpu_copy.tsv");
  std::map<std::string, std::vector<GoldenRow>> copy_steps = load_table("gpu_copy_steps.tsv");
  std::set<std::string> sources() const {
    std::set<std::string> s;
    for (const auto* t : {&mem, &mem_steps, &copy, &copy_steps})
      for (const auto& [k, v] : *t) s.insert(k);
    return s;
  }
};

const Golden& golden() {
  static const Golden g;
  return g;
}

const Trace& synthetic_trace() {
  static const Trace& trace = []() -> const Trace& {
    auto p = write_sql_export({kGolden / "synthetic_export.sql"}, "memory_copy");
    if (!p.ok()) throw std::runtime_error(p.status().message());
    const Trace& t = load_nsys(*p);
    fs::remove(*p);  // read once and kept by load_nsys: no temporary file outlives the test
    return t;
  }();
  return trace;
}

// The trace a golden source names; nullptr when the shared traces are absent.
const Trace* trace_of(const std::string& source) {
  if (source == "synthetic") return &synthetic_trace();
  const fs::path shared = shared_dir();
  if (shared.empty()) return nullptr;
  const fs::path path = shared / "traces" / source;
  return source.rfind("nsys/", 0) == 0 ? &load_nsys(path.string()) : &load_kineto(path.string());
}

// Runs a report; an empty table on NoData.
TableSink run(const Trace& trace, const std::string& report, const std::string& name_filter = "") {
  const auto* def = find_report(report);
  if (!def) throw std::runtime_error("unknown report " + report);
  ReportArgs args;
  if (!name_filter.empty()) args.name_filter = *NamePattern::compile(name_filter);
  TableSink sink;
  const Status st = def->run(trace, args, sink);
  if (!st.ok() && st.code() != ErrorCode::kNoData) throw std::runtime_error(st.message());
  return sink;
}

size_t column(const TableSink& t, const std::string& name) {
  for (size_t i = 0; i < t.columns().size(); ++i) {
    if (t.columns()[i].name == name) return i;
  }
  throw std::runtime_error("no column " + name);
}

// A golden cell ("-" = NULL, integers, Python float reprs, text) against a report cell.
std::string mismatch(const std::string& expected, const Cell& c) {
  const bool null = expected == "-";
  switch (c.type) {
    case Cell::Type::kNull: return null ? "" : "NULL";
    case Cell::Type::kInt: return !null && std::to_string(c.i) == expected ? "" : std::to_string(c.i);
    case Cell::Type::kReal: return !null && std::strtod(expected.c_str(), nullptr) == c.d ? "" : python_float_repr(c.d);
    case Cell::Type::kText: return std::string(c.s) == expected ? "" : std::string(c.s);
  }
  return "?";
}

// Report rows must be the golden rows, in order; `columns` maps golden columns to report columns.
void expect_rows(const std::string& source, const std::string& report, const std::vector<GoldenRow>& expected,
                 const std::vector<std::pair<std::string, std::string>>& columns) {
  const Trace* trace = trace_of(source);
  ASSERT_NE(trace, nullptr);
  const TableSink t = run(*trace, report);
  ASSERT_EQ(t.row_count(), expected.size()) << source << " " << report;
  for (size_t r = 0; r < expected.size(); ++r) {
    for (const auto& [g, c] : columns) {
      const std::string why = mismatch(expected[r].at(g), t.row_at(r)[column(t, c)]);
      EXPECT_EQ(why, "") << source << " " << report << " row " << r << " column " << c << ": expected "
                         << expected[r].at(g) << ", got " << why;
    }
  }
}

class MemoryCopyGolden : public ::testing::TestWithParam<std::string> {};

TRACEDOC_TEST_LABELS(MemoryCopyGolden, corpus golden);

TEST_P(MemoryCopyGolden, MatchesPythonReference) {
  const std::string& source = GetParam();
  if (source != "synthetic" && shared_dir().empty()) GTEST_SKIP() << "../shared/traces not found";
  const Golden& g = golden();
  static const std::vector<GoldenRow> kNone;
  auto rows = [&](const std::map<std::string, std::vector<GoldenRow>>& t) -> const std::vector<GoldenRow>& {
    auto it = t.find(source);
    return it == t.end() ? kNone : it->second;
  };
  expect_rows(source, "gpu_mem_sum", rows(g.mem),
              {{"pid", "PID"},
               {"device", "Device"},
               {"peak", "Peak Allocated"},
               {"peak_time", "Peak Time"},
               {"start_allocated", "Start Allocated"},
               {"end_allocated", "End Allocated"},
               {"allocations", "Allocations"},
               {"frees", "Frees"},
               {"bytes_allocated", "Bytes Allocated"},
               {"bytes_freed", "Bytes Freed"},
               {"peak_reserved", "Peak Reserved"},
               {"totals", "Source"}});
  expect_rows(source, "gpu_mem_step_sum", rows(g.mem_steps),
              {{"pid", "PID"},
               {"device", "Device"},
               {"step", "Step"},
               {"start", "Start"},
               {"duration", "Duration"},
               {"start_allocated", "Start Allocated"},
               {"end_allocated", "End Allocated"},
               {"peak", "Peak Allocated"},
               {"peak_time", "Peak Time"},
               {"allocations", "Allocations"},
               {"frees", "Frees"},
               {"name", "Name"}});
  expect_rows(source, "gpu_copy_sum", rows(g.copy),
              {{"pid", "PID"},
               {"device", "Device"},
               {"copy_kind", "Copy Kind"},
               {"src_kind", "Src Kind"},
               {"dst_kind", "Dst Kind"},
               {"count", "Count"},
               {"bytes", "Total Bytes"},
               {"total_ns", "Total Time"},
               {"throughput", "Throughput"},
               {"median_throughput", "Med Throughput"}});
  expect_rows(source, "gpu_copy_step_sum", rows(g.copy_steps),
              {{"pid", "PID"},
               {"step", "Step"},
               {"start", "Start"},
               {"duration", "Duration"},
               {"copies", "Copies"},
               {"bytes", "Bytes"},
               {"copy_ns", "Copy Time"},
               {"htod_ns", "HtoD Time"},
               {"dtoh_ns", "DtoH Time"},
               {"dtod_ns", "DtoD Time"},
               {"other_ns", "Other Time"},
               {"name", "Name"}});

  // Growth is End - Start, row by row; the trace report holds each series' events, ending at End.
  const Trace& trace = *trace_of(source);
  const TableSink steps = run(trace, "gpu_mem_step_sum");
  for (size_t r = 0; r < steps.row_count(); ++r) {
    const auto row = steps.row_at(r);
    EXPECT_EQ(row[column(steps, "Growth")].i,
              row[column(steps, "End Allocated")].i - row[column(steps, "Start Allocated")].i);
  }
  const TableSink events = run(trace, "gpu_mem_trace");
  for (const GoldenRow& m : rows(g.mem)) {
    int64_t n = 0, last = 0;
    for (size_t r = 0; r < events.row_count(); ++r) {
      const auto row = events.row_at(r);
      if (std::to_string(row[column(events, "PID")].i) != m.at("pid") ||
          std::to_string(row[column(events, "Device")].i) != m.at("device"))
        continue;
      ++n;
      last = row[column(events, "Allocated")].i;
    }
    EXPECT_EQ(std::to_string(n), m.at("events")) << source << " pid " << m.at("pid") << " device " << m.at("device");
    EXPECT_EQ(std::to_string(last), m.at("end_allocated")) << source;
  }
}

std::vector<std::string> golden_sources() {
  const auto s = golden().sources();
  return s.empty() ? std::vector<std::string>{"missing_golden"} : std::vector<std::string>(s.begin(), s.end());
}

INSTANTIATE_TEST_SUITE_P(Sources, MemoryCopyGolden, ::testing::ValuesIn(golden_sources()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string n;
                           for (char c : info.param) n += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
                           return n + "_" + std::to_string(info.index);
                         });

TRACEDOC_TEST_LABELS(MemoryCopyReference, corpus golden);

// Every shared trace that has GPU memory events or copies is in the golden tables (a trace added to
// ../shared without regenerating them is noticed), and the others have neither.
TEST(MemoryCopyReference, CoversEveryTrace) {
  const fs::path shared = shared_dir();
  if (shared.empty()) GTEST_SKIP() << "../shared/traces not found";
  const auto sources = golden().sources();
  const fs::path traces = shared / "traces";
  auto ends = [](const std::string& n, const std::string& s) {
    return n.size() >= s.size() && n.compare(n.size() - s.size(), s.size(), s) == 0;
  };
  int checked = 0;
  for (const auto& e : fs::recursive_directory_iterator(traces)) {
    if (!e.is_regular_file()) continue;
    const std::string rel = fs::relative(e.path(), traces).generic_string();
    const std::string name = e.path().filename().string();
    const bool kineto = rel.rfind("kineto/", 0) == 0 && (ends(name, ".json") || ends(name, ".json.gz")) &&
                        name != "execution_details.json" && name != "memory_timeline.raw.gz" &&
                        !ends(name, "_et.json.gz");
    const bool nsys = rel.rfind("nsys/", 0) == 0 && rel.find("/oracles/") == std::string::npos && ends(name, ".sqlite");
    if ((!kineto && !nsys) || sources.count(rel)) continue;
    const Trace& t = nsys ? load_nsys(e.path().string()) : load_kineto(e.path().string());
    EXPECT_FALSE(has_gpu_memory_events(t)) << rel << " has GPU memory events but no golden rows";
    EXPECT_EQ(t.memcpys.size(), 0u) << rel << " has copies but no golden rows";
    ++checked;
  }
  EXPECT_GT(checked, 0);
  EXPECT_GE(golden().mem.size(), 20u);  // 19 PyTorch traces with [memory] events + the synthetic export
}

TRACEDOC_TEST_LABELS(HostLink, unit);

// The host link table on the GPUs of the shared traces, checked against the makers' data sheets.
// Theoretical unidirectional PCIe bandwidth: GT/s x lanes x 128/130 / 8 bits.
TEST(HostLink, SharedTraceGpus) {
  const double gen3x16 = 8e9 * 16 * 128 / 130 / 8;   // 15.754 GB/s
  const double gen4x16 = 16e9 * 16 * 128 / 130 / 8;  // 31.508 GB/s
  const double gen4x8 = gen4x16 / 2;
  const double gen5x16 = 32e9 * 16 * 128 / 130 / 8;  // 63.015 GB/s
  const struct {
    const char* gpu;
    const char* link;
    double peak;
  } cases[] = {
      {"Tesla V100-DGXS-32GB", "PCIe 3.0 x16", gen3x16},  // tb_plugin resnet50 samples
      {"Tesla V100-SXM2-32GB", "PCIe 3.0 x16", gen3x16},
      {"Tesla T4", "PCIe 3.0 x16", gen3x16},  // SC23 OpenMP export
      {"Quadro GP100", "PCIe 3.0 x16", gen3x16},
      {"NVIDIA GeForce RTX 2070 SUPER", "PCIe 3.0 x16", gen3x16},  // DLProf export
      {"NVIDIA GeForce RTX 3060", "PCIe 4.0 x16", gen4x16},        // cuda-perf-sandbox
      {"NVIDIA GeForce RTX 3080", "PCIe 4.0 x16", gen4x16},        // nsys-ai mock
      {"NVIDIA GeForce RTX 4060 Ti", "PCIe 4.0 x8", gen4x8},       // test-cuda: an x8 board
      {"NVIDIA A100-PG509-200", "PCIe 4.0 x16", gen4x16},
      {"NVIDIA A100-SXM4-80GB", "PCIe 4.0 x16", gen4x16},
      {"NVIDIA H100 80GB HBM3", "PCIe 5.0 x16", gen5x16},
      {"NVIDIA B200", "PCIe 5.0 x16", gen5x16},
      {"AMD Instinct MI300X", "PCIe 5.0 x16", gen5x16},
      {"AMD Instinct MI300X VF", "PCIe 5.0 x16", gen5x16},
      {"NVIDIA GH200 480GB", "NVLink-C2C", 450e9},
  };
  for (const auto& c : cases) {
    const HostLink link = host_link_for_gpu(c.gpu);
    EXPECT_EQ(link.name, c.link) << c.gpu;
    EXPECT_DOUBLE_EQ(link.peak_bytes_per_s, c.peak) << c.gpu;
  }
  // Not guessed: laptop parts (lanes vary), names the table lacks, traces without a name.
  for (const char* gpu : {"NVIDIA GeForce GTX 1050 Ti with Max-Q Design", "NVIDIA GeForce RTX 4060 Laptop GPU",
                          "AMD Radeon Graphics", "ARTEMIS", ""}) {
    EXPECT_FALSE(host_link_for_gpu(gpu).known()) << gpu;
  }
}

Cell cell(const TableSink& t, size_t row, const std::string& col) { return t.row_at(row)[column(t, col)]; }

TRACEDOC_TEST_LABELS(MemoryCopyReports, corpus);

// The synthetic export, worked out by hand (times in ns, sizes in bytes).
// Process 100, device 0, in time order: 500 +1000 -> 1000, 1000 +4000 -> 5000, 1500 +2000 -> 7000,
// 1500 -1000 -> 6000, 2000 -2000 -> 4000, 2500 +8000 (managed) -> 12000, 2600 -8000 -> 4000,
// 3200 +500 (static) -> 4500, 4500 -4000 -> 500, 5000 +100 -> 600; the pinned allocation at 1800
// is host memory and not counted.
TEST(MemoryCopyReports, SyntheticExportByHand) {
  const Trace& t = synthetic_trace();
  const TableSink sum = run(t, "gpu_mem_sum");
  ASSERT_EQ(sum.row_count(), 3u);  // (100, 0), (100, 1), (200, 0)
  EXPECT_EQ(cell(sum, 0, "Peak Allocated").i, 12000);
  EXPECT_EQ(cell(sum, 0, "Peak Time").i, 2500);
  EXPECT_EQ(cell(sum, 0, "Growth").i, 600);
  EXPECT_EQ(cell(sum, 0, "Bytes Allocated").i, 1000 + 4000 + 2000 + 8000 + 500 + 100);
  EXPECT_EQ(cell(sum, 0, "Bytes Freed").i, 1000 + 2000 + 8000 + 4000);
  EXPECT_TRUE(cell(sum, 0, "Peak Reserved").is_null());  // nsys records no reserve
  EXPECT_EQ(cell(sum, 0, "Source").s, "event sizes");

  // Step 1 [1000, 2000) holds the event at 1000, not the one at 2000: 1000 -> 6000, peak 7000.
  // Step 2 [2000, 3000): 6000 -> 4000 (growth -2000), peak 12000 at 2500.
  // Device 1 in step 2 has no event: its peak is its start value, with no time.
  const TableSink steps = run(t, "gpu_mem_step_sum");
  ASSERT_EQ(steps.row_count(), 7u);
  EXPECT_EQ(cell(steps, 0, "Start Allocated").i, 1000);
  EXPECT_EQ(cell(steps, 0, "End Allocated").i, 6000);
  EXPECT_EQ(cell(steps, 0, "Peak Allocated").i, 7000);
  EXPECT_EQ(cell(steps, 1, "Growth").i, -2000);
  EXPECT_EQ(cell(steps, 1, "Peak Time").i, 2500);
  EXPECT_EQ(cell(steps, 4, "Device").i, 1);
  EXPECT_EQ(cell(steps, 4, "Peak Allocated").i, 300);
  EXPECT_TRUE(cell(steps, 4, "Peak Time").is_null());
  EXPECT_EQ(cell(steps, 6, "Name").s, "(whole trace)");  // process 200: 100 .. 900
  EXPECT_TRUE(cell(steps, 6, "Step").is_null());
  EXPECT_EQ(cell(steps, 6, "Duration").i, 800);
  EXPECT_EQ(cell(steps, 6, "Peak Allocated").i, 120);

  // Pageable HtoD on the A100: 2000 B in 200 ns and 1000 B in 200 ns: 3000 B / 400 ns = 7.5 GB/s,
  // 23.8% of PCIe 4.0 x16 (31.508 GB/s). The laptop GPU's link is unknown.
  const TableSink copies = run(t, "gpu_copy_sum");
  ASSERT_EQ(copies.row_count(), 7u);
  EXPECT_EQ(cell(copies, 0, "Throughput").d, 7.5e9);
  EXPECT_EQ(cell(copies, 0, "Link").s, "PCIe 4.0 x16");
  EXPECT_EQ(cell(copies, 0, "Link Use").d, 23.8);
  // Pinned HtoD: 3000 B/100 ns, 100 B/0 ns (no duration: counted, not in the median), 2500 B/100 ns.
  EXPECT_EQ(cell(copies, 1, "Count").i, 3);
  EXPECT_EQ(cell(copies, 1, "Throughput").d, 28e9);
  EXPECT_EQ(cell(copies, 1, "Med Throughput").d, 27.5e9);
  EXPECT_TRUE(cell(copies, 3, "Link").is_null());  // DtoD stays on the device
  EXPECT_EQ(cell(copies, 5, "Link").s, "unknown");

  // Step 3 [3000, 4500): the DtoH copy's tail [3000, 3100), DtoD [3500, 3600) and PtoP [3550, 3650)
  // overlapping it: union 100 + 150 = 250 ns, 16.7% of 1500 ns.
  const TableSink share = run(t, "gpu_copy_step_sum");
  ASSERT_EQ(share.row_count(), 4u);
  EXPECT_EQ(cell(share, 2, "Copy Time").i, 250);
  EXPECT_EQ(cell(share, 2, "Copy").d, 16.7);
  EXPECT_EQ(cell(share, 2, "Other Time").i, 100);
  EXPECT_EQ(cell(share, 3, "Start").i, 100);  // process 200: its kernel [100, 1000) opens the window
  EXPECT_EQ(cell(share, 3, "Copy").d, 22.2);  // 200 / 900

  // --filter-name keeps the matching steps.
  EXPECT_EQ(run(t, "gpu_mem_step_sum", "ProfilerStep#2").row_count(), 2u);  // devices 0 and 1
  EXPECT_EQ(run(t, "gpu_copy_step_sum", "ProfilerStep#[13]").row_count(), 2u);
}

// test-cuda/report1 (RTX 4060 Ti, pinned memory), checked with sqlite3 on the export:
//   SELECT copyKind, count(*), sum(bytes), sum(end - start) FROM CUPTI_ACTIVITY_KIND_MEMCPY GROUP BY 1
//   -> 1|8|800000000|61322687 and 2|4|400000000|30323492.
// 800000000 B / 61322687 ns = 13.046 GB/s, 82.8% of PCIe 4.0 x8: above what an x8 link can carry at
// Gen3 (7.9 GB/s), so the board's x8 width in the table is consistent with the trace.
TEST(MemoryCopyReports, TestCudaPinnedCopies) {
  const fs::path nsys = nsys_traces_dir();
  if (nsys.empty()) GTEST_SKIP() << "../shared/traces not found";
  const Trace& t = load_nsys((nsys / "test-cuda" / "report1.sqlite").string());
  const TableSink copies = run(t, "gpu_copy_sum");
  ASSERT_EQ(copies.row_count(), 2u);
  EXPECT_EQ(cell(copies, 0, "Src Kind").s, "Pinned");
  EXPECT_EQ(cell(copies, 0, "Total Bytes").i, 800000000);
  EXPECT_EQ(cell(copies, 0, "Total Time").i, 61322687);
  EXPECT_EQ(cell(copies, 0, "Link").s, "PCIe 4.0 x8");
  EXPECT_EQ(cell(copies, 0, "Link Use").d, 82.8);
  EXPECT_EQ(cell(copies, 1, "Link Use").d, 83.7);  // 400000000 B / 30323492 ns = 13.191 GB/s
  // No memory events in any real export: the memory reports say so, as nsys's SKIPPED lines do.
  const auto* def = find_report("gpu_mem_sum");
  TableSink sink;
  const Status st = def->run(t, {}, sink);
  EXPECT_EQ(st.code(), ErrorCode::kNoData);
  EXPECT_NE(st.message().find("does not contain GPU memory usage data."), std::string::npos);
}

}  // namespace
}  // namespace tracedoc::testing
