// The Arrow export (report/arrow_export.h) on a real nsys export: every declared column, numeric
// buffers that are the model's own vectors, nulls for absent values, string columns whose
// dictionary is the string pool, and release callbacks that free everything (the sanitizer build
// checks for leaks). A report's rows as typed columns. The Python package's tests
// (tests/python) check the same through pyarrow.
#include <gtest/gtest.h>

#include <cstring>
#include <string_view>

#include "analysis/report_runs.h"
#include "ingest/nsys_sqlite_reader.h"
#include "report/arrow_export.h"
#include "test_support.h"

namespace tracedoc::testing {
namespace {

namespace fs = std::filesystem;

std::shared_ptr<const Trace> real_export() {
  const fs::path shared = shared_dir();
  if (shared.empty()) return nullptr;
  auto trace = read_nsys_sqlite((shared / "traces/nsys/nsys-ai/mfu_2gpu_before.sqlite").string());
  if (!trace.ok()) ADD_FAILURE() << trace.status().message();
  return trace.ok() ? std::make_shared<const Trace>(std::move(trace).value()) : nullptr;
}

const ArrowSchema* field(const ArrowSchema& schema, std::string_view name, int64_t* index) {
  for (int64_t i = 0; i < schema.n_children; ++i) {
    if (name == schema.children[i]->name) {
      *index = i;
      return schema.children[i];
    }
  }
  return nullptr;
}

TRACEDOC_TEST_LABELS(ArrowExport, corpus sanitize);

TEST(ArrowExport, KernelsInPlaceWithNullsAndThePoolAsDictionary) {
  auto trace = real_export();
  if (!trace) GTEST_SKIP() << "../shared/traces not found";
  ArrowTraceExporter exporter(trace);
  ArrowArray array{};
  ArrowSchema schema{};
  ASSERT_TRUE(exporter.export_table("kernels", &array, &schema).ok());
  EXPECT_STREQ(schema.format, "+s");
  EXPECT_EQ(array.length, 4010);
  EXPECT_EQ(static_cast<size_t>(schema.n_children), column_count<KernelTable>());
  ASSERT_EQ(array.n_children, schema.n_children);

  int64_t i = 0;
  ASSERT_NE(field(schema, "start", &i), nullptr);
  EXPECT_STREQ(schema.children[i]->format, "l");
  EXPECT_EQ(array.children[i]->buffers[1], trace->kernels.start.data());  // the model's vector, not a copy
  EXPECT_EQ(array.children[i]->null_count, 0);

  ASSERT_NE(field(schema, "name", &i), nullptr);
  ASSERT_STREQ(schema.children[i]->format, "I");
  ASSERT_NE(schema.children[i]->dictionary, nullptr);
  EXPECT_STREQ(schema.children[i]->dictionary->format, "u");
  const ArrowArray* dictionary = array.children[i]->dictionary;
  ASSERT_NE(dictionary, nullptr);
  EXPECT_EQ(static_cast<size_t>(dictionary->length), trace->strings.size());
  const StrId first = trace->kernels.name[0];
  const auto* offsets = static_cast<const int32_t*>(dictionary->buffers[1]);
  const auto* text = static_cast<const char*>(dictionary->buffers[2]);
  EXPECT_EQ(std::string_view(text + offsets[first], offsets[first + 1] - offsets[first]), trace->str(first));

  // No kernel of this export was launched by a CUDA graph: graph_node_id holds the declared absent
  // value on every row, every one a null. est_occupancy is an optional column nsys exports do not
  // fill: all nulls too, over zeros.
  for (const char* name : {"graph_node_id", "est_occupancy"}) {
    ASSERT_NE(field(schema, name, &i), nullptr) << name;
    EXPECT_EQ(array.children[i]->null_count, 4010) << name;
    const auto* bits = static_cast<const uint8_t*>(array.children[i]->buffers[0]);
    ASSERT_NE(bits, nullptr) << name;
    EXPECT_EQ(bits[0], 0) << name;
    EXPECT_EQ(bits[4009 / 8] & (1u << (4009 % 8)), 0u) << name;
  }
  EXPECT_TRUE(trace->kernels.est_occupancy.empty());

  // The consumer may move a child out (it then releases it itself): the parent skips it.
  ArrowArray moved = *array.children[0];
  array.children[0]->release = nullptr;
  array.release(&array);
  EXPECT_EQ(array.release, nullptr);
  moved.release(&moved);
  schema.release(&schema);
}

TEST(ArrowExport, UnknownTableAndDeclarations) {
  auto trace = real_export();
  if (!trace) GTEST_SKIP() << "../shared/traces not found";
  ArrowTraceExporter exporter(trace);
  ArrowArray array{};
  ArrowSchema schema{};
  const Status st = exporter.export_table("kernel", &array, &schema);
  EXPECT_EQ(st.message(), "no table 'kernel' in the trace model");
  EXPECT_EQ(array.release, nullptr);
  const std::vector<ArrowTableInfo> tables = arrow_tables();
  ASSERT_FALSE(tables.empty());
  EXPECT_EQ(tables[0].name, "kernels");
  EXPECT_EQ(tables[0].columns[0].name, "start");
  EXPECT_EQ(tables[0].columns[0].unit, "ns");
  EXPECT_EQ(tables[0].columns[0].type, "int64");
}

TEST(ArrowExport, ReportRowsAsTypedColumns) {
  auto trace = real_export();
  if (!trace) GTEST_SKIP() << "../shared/traces not found";
  auto requests = report_requests({"cuda_gpu_kern_sum"}, std::nullopt);
  ASSERT_TRUE(requests.ok());
  TableSink rows;
  ASSERT_TRUE(ReportRuns(*trace, *requests).produce(0, rows).ok());
  ArrowArray array{};
  ArrowSchema schema{};
  ASSERT_TRUE(export_report(rows, UnitChoice{}, &array, &schema).ok());
  EXPECT_EQ(static_cast<size_t>(array.length), rows.row_count());
  int64_t i = 0;
  ASSERT_NE(field(schema, "Total Time (ns)", &i), nullptr);
  ASSERT_STREQ(schema.children[i]->format, "l");
  int64_t total = 0;
  for (int64_t r = 0; r < array.length; ++r) total += static_cast<const int64_t*>(array.children[i]->buffers[1])[r];
  EXPECT_EQ(total, 535200650);
  ASSERT_NE(field(schema, "Avg (ns)", &i), nullptr);
  EXPECT_STREQ(schema.children[i]->format, "g");
  ASSERT_NE(field(schema, "Name", &i), nullptr);
  ASSERT_STREQ(schema.children[i]->format, "U");
  const auto* offsets = static_cast<const int64_t*>(array.children[i]->buffers[1]);
  const auto* text = static_cast<const char*>(array.children[i]->buffers[2]);
  EXPECT_EQ(std::string_view(text + offsets[0], offsets[1] - offsets[0]), rows.row_at(0)[i].s);
  array.release(&array);
  schema.release(&schema);
}

// How each column is typed, from the text the CSV prints (default units: MB for bytes).
TEST(ArrowExport, ReportColumnsTypedByTheirCsvText) {
  TableSink rows;
  rows.begin({{"Total", Unit::kMemB}, {"Change", Unit::kMemB}, {"Mixed", Unit::kNone}, {"Count", Unit::kNone}});
  const Cell table[3][4] = {
      {Cell::integer(8046134272), Cell::integer(1076), Cell::integer(5), Cell::integer(3)},
      {Cell::integer(1076), Cell::integer(-1), Cell::real(2.5), Cell::null()},
      {Cell::integer(272), Cell::integer(2000), Cell::null(), Cell::integer(-7)},
  };
  for (const auto& row : table) rows.row(row);
  ArrowArray array{};
  ArrowSchema schema{};
  ASSERT_TRUE(export_report(rows, UnitChoice{}, &array, &schema).ok());
  EXPECT_STREQ(schema.children[0]->name, "Total (MB)");
  ASSERT_STREQ(schema.children[0]->format, "d:38,3");  // 8046.134, 0.001, 0.000
  const auto* totals = static_cast<const __int128*>(array.children[0]->buffers[1]);
  EXPECT_TRUE(totals[0] == 8046134 && totals[1] == 1 && totals[2] == 0);
  ASSERT_STREQ(schema.children[1]->format, "U");  // 0.001, -0.000 (no decimal prints "-0.000"), 0.002
  const auto* offsets = static_cast<const int64_t*>(array.children[1]->buffers[1]);
  const auto* text = static_cast<const char*>(array.children[1]->buffers[2]);
  EXPECT_EQ(std::string_view(text + offsets[1], offsets[2] - offsets[1]), "-0.000");
  EXPECT_STREQ(schema.children[2]->format, "U");  // 5 and 2.5: one column cannot be int64 and double
  EXPECT_EQ(array.children[2]->null_count, 1);
  ASSERT_STREQ(schema.children[3]->format, "l");
  EXPECT_EQ(array.children[3]->null_count, 1);
  EXPECT_EQ(static_cast<const uint8_t*>(array.children[3]->buffers[0])[0] & 0b111, 0b101);  // rows 0 and 2 valid
  array.release(&array);
  schema.release(&schema);
}

}  // namespace
}  // namespace tracedoc::testing
