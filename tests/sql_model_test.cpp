// `tracedoc sql`'s tables (src/report/sql_model.h): every row of the model lands in them, and queries
// give what the reports give.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <memory>
#include <string>

#include "analysis/gpu_memory.h"
#include "report/sql_model.h"
#include "test_support.h"

namespace tracedoc::testing {
namespace {

namespace fs = std::filesystem;

struct Db {
  std::unique_ptr<sqlite3, int (*)(sqlite3*)> db{nullptr, sqlite3_close};
  explicit Db(const Trace& t, const diagnose::Diagnosis* d = nullptr) {
    sqlite3* raw = nullptr;
    EXPECT_EQ(sqlite3_open(":memory:", &raw), SQLITE_OK);
    db.reset(raw);
    const Status st = load_sql_model(t, d, raw);
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
  EXPECT_EQ(std::to_string(db.value("SELECT sum(duration_ns) FROM kernels WHERE name = 'ampere_sgemm_64x64_nn'")), kern[1][1]);
  EXPECT_EQ(std::to_string(db.value("SELECT count(*) FROM kernels WHERE name = 'ampere_sgemm_64x64_nn'")), kern[1][2]);
  EXPECT_EQ(db.value("SELECT count(*) FROM memcpy WHERE kind = 'Host-to-Device' AND src_kind = 'Pageable'"), 5);
  EXPECT_EQ(db.value("SELECT count(*) FROM kernels WHERE rank IS NOT NULL"), 0);  // nsys exports have no rank
}

TEST(SqlModel, PyTorchTraceOperatorsStepsAndMemory) {
  if (shared_dir().empty()) GTEST_SKIP() << "../shared (the real traces) is absent";
  const Trace& t = load_kineto(
      (shared_dir() / "traces/kineto/TraceLens/tests/traces/h100/gaunernst_bert-small-uncased__1016001.json.gz").string());
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
}

}  // namespace
}  // namespace tracedoc::testing
