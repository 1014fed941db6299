// `tracedoc sql`'s tables (src/report/sql_model.h): every row of the model lands in them, and queries
// give what the reports give.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <fmt/format.h>

#include <cmath>
#include <fstream>
#include <map>
#include <memory>
#include <string>

#include "analysis/gpu_memory.h"
#include "analysis/steps.h"
#include "report/sql_model.h"
#include "test_support.h"

namespace tracedoc::testing {
namespace {

namespace fs = std::filesystem;

struct Db {
  std::unique_ptr<sqlite3, int (*)(sqlite3*)> db{nullptr, sqlite3_close};
  StepSet steps;
  std::vector<MemorySeries> memory;
  explicit Db(const Trace& t, const diagnose::Diagnosis* d = nullptr, std::string_view query = {}) {
    sqlite3* raw = nullptr;
    EXPECT_EQ(sqlite3_open(":memory:", &raw), SQLITE_OK);
    db.reset(raw);
    if (auto s = find_steps(t); s.ok()) steps = *s;
    memory = collect_gpu_memory(t);
    const Status st = load_sql_model(t, SqlAnalyses{&steps, &memory, d}, raw, query);
    EXPECT_TRUE(st.ok()) << st.message();
  }
  int64_t value(const std::string& sql) {
    sqlite3_stmt* s = nullptr;
    EXPECT_EQ(sqlite3_prepare_v2(db.get(), sql.c_str(), -1, &s, nullptr), SQLITE_OK) << sql;
    EXPECT_EQ(sqlite3_step(s), SQLITE_ROW) << sql;
    const int64_t v = sqlite3_column_int64(s, 0);
    sqlite3_finalize(s);
    return v;
  }
  std::string text(const std::string& sql) {
    sqlite3_stmt* s = nullptr;
    EXPECT_EQ(sqlite3_prepare_v2(db.get(), sql.c_str(), -1, &s, nullptr), SQLITE_OK) << sql;
    EXPECT_EQ(sqlite3_step(s), SQLITE_ROW) << sql;
    const std::string v = reinterpret_cast<const char*>(sqlite3_column_text(s, 0));
    sqlite3_finalize(s);
    return v;
  }
};

TRACEDOC_TEST_LABELS(SqlModel, corpus);

TEST(SqlModel, NsysExportTablesAndAReportByQuery) {
  const Trace& t = load_nsys((fs::path(TRACEDOC_SOURCE_DIR) / "examples" / "toy_training.sqlite").string());
  const diagnose::Diagnosis d = diagnose::diagnose(t, {});
  Db db(t, &d);
  EXPECT_EQ(db.value("SELECT count(*) FROM kernels"), static_cast<int64_t>(t.kernels.size()));
  EXPECT_EQ(db.value("SELECT count(*) FROM memcpy"), static_cast<int64_t>(t.memcpys.size()));
  EXPECT_EQ(db.value("SELECT count(*) FROM memset"), static_cast<int64_t>(t.memsets.size()));
  EXPECT_EQ(db.value("SELECT count(*) FROM api"), static_cast<int64_t>(t.api.size()));
  EXPECT_EQ(db.value("SELECT count(*) FROM ranges"), static_cast<int64_t>(t.ranges.size()));
  EXPECT_EQ(db.value("SELECT count(*) FROM ops"), 0);
  EXPECT_EQ(db.value("SELECT count(*) FROM steps WHERE source = 'detected'"), 3);
  EXPECT_EQ(db.value("SELECT count(*) FROM findings"), static_cast<int64_t>(d.findings.size()));
  EXPECT_EQ(db.text("SELECT id FROM findings ORDER BY savings_ns DESC, id LIMIT 1"), "comb_pattern");
  // cuda_gpu_kern_sum's first row: ampere_sgemm_64x64_nn, 24 instances, 8,943,132 ns.
  const auto kern = parse_csv(report_csv(t, "cuda_gpu_kern_sum").value());
  EXPECT_EQ(db.text("SELECT name FROM kernels GROUP BY name ORDER BY sum(duration_ns) DESC LIMIT 1"), kern[1].back());
  EXPECT_EQ(std::to_string(db.value("SELECT sum(duration_ns) FROM kernels WHERE name = 'ampere_sgemm_64x64_nn'")),
            kern[1][1]);
  EXPECT_EQ(std::to_string(db.value("SELECT count(*) FROM kernels WHERE name = 'ampere_sgemm_64x64_nn'")), kern[1][2]);
  EXPECT_EQ(db.value("SELECT count(*) FROM memcpy WHERE copy_kind = 'Host-to-Device' AND src_kind = 'Pageable'"), 5);
  EXPECT_EQ(db.value("SELECT count(*) FROM kernels WHERE rank IS NOT NULL"), 0);  // nsys exports have no rank
  // Every model table is a SQL table with all its rows, its columns described in tracedoc_columns.
  for_each_table(t, [&](const TableInfo& info, const auto& table) {
    EXPECT_EQ(db.value(fmt::format("SELECT count(*) FROM {}", info.name)), static_cast<int64_t>(table.size()))
        << info.name;
    EXPECT_GE(db.value(fmt::format("SELECT count(*) FROM tracedoc_columns WHERE table_name = '{}'", info.name)),
              static_cast<int64_t>(column_count<std::decay_t<decltype(table)>>()))
        << info.name;
  });
  EXPECT_EQ(db.value("SELECT count(*) FROM tracedoc_columns WHERE description = ''"), 0);
  EXPECT_EQ(db.text("SELECT group_concat(column_name, ' ') FROM tracedoc_columns WHERE table_name = 'api'"),
            "start_ns end_ns duration_ns rank pid tid correlation return_value name api_class stack");
  EXPECT_EQ(
      db.text("SELECT description FROM tracedoc_columns WHERE table_name = 'kernels' AND column_name = 'short_name'"),
      "name without arguments or templates");
  // The first kernel, cell by cell, as the model holds it.
  const KernelTable& k = t.kernels;
  EXPECT_EQ(db.value("SELECT start_ns FROM kernels WHERE rowid = 1"), k.start[0]);
  EXPECT_EQ(db.value("SELECT duration_ns FROM kernels WHERE rowid = 1"), k.end[0] - k.start[0]);
  EXPECT_EQ(db.value("SELECT pid FROM kernels WHERE rowid = 1"), pid_of(k.global_pid[0]));
  EXPECT_EQ(db.text("SELECT short_name FROM kernels WHERE rowid = 1"), std::string(t.str(k.short_name[0])));
  EXPECT_EQ(db.value("SELECT registers_per_thread FROM kernels WHERE rowid = 1"), k.registers_per_thread[0]);
  EXPECT_EQ(db.value("SELECT count(*) FROM kernels WHERE est_occupancy IS NULL"),
            static_cast<int64_t>(k.size()));  // nsys records none
  EXPECT_EQ(db.value("SELECT count(*) FROM memcpy WHERE src_kind IS NULL"), 0);
}

// docs/sql.md lists every model table with its columns, as the declarations derive them.
TEST(SqlModel, TheDocsListEveryTableAndColumn) {
  std::ifstream in(fs::path(TRACEDOC_SOURCE_DIR) / "docs" / "sql.md");
  std::map<std::string, std::string> documented;  // table -> its row's last cell
  for (std::string line; std::getline(in, line);) {
    if (!line.starts_with("| `")) continue;
    const size_t name_end = line.find('`', 3);
    documented[line.substr(3, name_end - 3)] = line.substr(line.rfind('|', line.size() - 2) + 2, std::string::npos);
  }
  const Trace& t = load_nsys((fs::path(TRACEDOC_SOURCE_DIR) / "examples" / "toy_training.sqlite").string());
  Db db(t, nullptr, "-");
  for_each_trace_table([&](const TableInfo& info, auto) {
    const std::string name(info.name);
    ASSERT_TRUE(documented.count(name)) << "docs/sql.md does not list table " << name;
    std::string cell = documented[name];
    while (!cell.empty() && (cell.back() == '|' || cell.back() == ' ')) cell.pop_back();
    EXPECT_EQ(cell, db.text(fmt::format(
                        "SELECT group_concat(column_name, ', ') FROM tracedoc_columns WHERE table_name = '{}'", name)))
        << "docs/sql.md's columns of " << name;
  });
}

TEST(SqlModel, OnlyTheTablesAQueryNamesAreFilled) {
  EXPECT_TRUE(sql_query_names("SELECT * FROM Kernels", "kernels"));
  EXPECT_TRUE(sql_query_names("select count(*) from \"memcpy\"", "memcpy"));
  EXPECT_FALSE(sql_query_names("SELECT * FROM memory_events", "memory"));
  EXPECT_FALSE(sql_query_names("SELECT * FROM kernels_x", "kernels"));
  EXPECT_TRUE(sql_query_names("", "ops"));  // no query: every table
  const Trace& t = load_nsys((fs::path(TRACEDOC_SOURCE_DIR) / "examples" / "toy_training.sqlite").string());
  Db db(t, nullptr, "SELECT count(*) FROM api");
  EXPECT_EQ(db.value("SELECT count(*) FROM api"), static_cast<int64_t>(t.api.size()));
  EXPECT_EQ(db.value("SELECT count(*) FROM kernels"), 0);  // created, not filled: the query does not read it
}

TEST(SqlModel, PyTorchTraceOperatorsStepsAndMemory) {
  if (shared_dir().empty()) GTEST_SKIP() << "../shared (the real traces) is absent";
  const Trace& t = load_kineto(
      (shared_dir() / "traces/kineto/TraceLens/tests/traces/h100/gaunernst_bert-small-uncased__1016001.json.gz")
          .string());
  Db db(t);
  EXPECT_EQ(db.value("SELECT count(*) FROM ops"), static_cast<int64_t>(t.pytorch.ops.size()));
  EXPECT_GT(db.value("SELECT count(*) FROM steps WHERE source = 'ProfilerStep' AND name LIKE 'ProfilerStep#%'"), 0);
  int64_t events = 0;
  for (const MemorySeries& s : collect_gpu_memory(t)) events += static_cast<int64_t>(s.size());
  ASSERT_GT(events, 0);
  EXPECT_EQ(db.value("SELECT count(*) FROM memory"), events);
  // gpu_mem_sum's peak equals the largest allocated level.
  const auto mem = parse_csv(report_csv(t, "gpu_mem_sum").value());
  const double peak_mb = std::stod(mem[1][3]);
  EXPECT_NEAR(static_cast<double>(db.value("SELECT max(allocated_bytes) FROM memory")) / 1e6, peak_mb, 0.001);
  EXPECT_EQ(db.value("SELECT count(*) FROM findings"), 0);  // no diagnosis given
  // Kineto's occupancy estimate, and the operators' cells.
  int64_t with_occupancy = 0;
  for (double o : t.kernels.est_occupancy) with_occupancy += !std::isnan(o);
  EXPECT_EQ(db.value("SELECT count(*) FROM kernels WHERE est_occupancy IS NOT NULL"), with_occupancy);
  EXPECT_EQ(db.text("SELECT name FROM ops WHERE rowid = 1"), std::string(t.str(t.pytorch.ops.name[0])));
  EXPECT_EQ(db.value("SELECT count(*) FROM gpu_annotations"), static_cast<int64_t>(t.pytorch.gpu_annotations.size()));
}

TEST(SqlModel, CollectivesNameTheirKernelsByRowid) {
  if (shared_dir().empty()) GTEST_SKIP() << "../shared (the real traces) is absent";
  const Trace& t = load_kineto(
      (shared_dir() / "traces/kineto/HolisticTraceAnalysis/tests/data/nccl_parser_config/nccl_data.json.gz").string());
  ASSERT_EQ(t.pytorch.collectives.size(), 21u);
  Db db(t);
  EXPECT_EQ(db.value("SELECT count(*) FROM collectives c JOIN kernels k ON k.rowid = c.kernel_rowid"),
            static_cast<int64_t>(t.pytorch.collectives.size()));
  const uint32_t row = t.pytorch.collectives.kernel[0];
  EXPECT_EQ(db.text("SELECT k.name FROM collectives c JOIN kernels k ON k.rowid = c.kernel_rowid WHERE c.rowid = 1"),
            std::string(t.str(t.kernels.name[row])));
  EXPECT_EQ(db.text("SELECT min(k.name) FROM collectives c JOIN kernels k ON k.rowid = c.kernel_rowid"),
            "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)");
}

}  // namespace
}  // namespace tracedoc::testing
