// The trace's tables and a report's rows as Arrow record batches, through the Arrow C data interface
// (report/arrow_c_data.h), for the Python package: pyarrow, and from there pandas and polars, take
// them without a copy of the numeric columns and without tracedoc linking any Arrow library.
//
// A table's Arrow columns are its declared columns (model/columns.h), in declaration order, under
// the names the declarations give; each field's metadata carries the declaration's description and
// unit ("ns" for times, "bytes" for sizes). Times are int64 ns on the trace's timebase, global
// thread and process ids as the model keeps them, kinds as their codes.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/result.h"
#include "common/status.h"
#include "model/trace.h"
#include "report/arrow_c_data.h"
#include "report/number_format.h"

namespace tracedoc {

struct ArrowColumnInfo {
  std::string name;
  std::string type;  // the Arrow type: int64, int32, uint8, ..., double, dictionary<utf8>, utf8
  std::string unit;  // "ns", "bytes" or empty
  std::string description;
};
struct ArrowTableInfo {
  std::string name;
  std::vector<ArrowColumnInfo> columns;
};

// Every table of the model with its columns, in model/trace.h's order: the list the Python package
// documents and exports.
std::vector<ArrowTableInfo> arrow_tables();

struct ArrowStringDictionary;

// Exports one trace's tables. The buffers of numeric columns are the model's own vectors; every
// exported array holds a reference to the trace, which must not change while any array is alive.
// String columns are dictionary-encoded: the indices are the model's string ids, the dictionary is
// the trace's string pool, laid out once per exporter and shared by every array it exports. A value
// equal to its column's declared absent value (SQL NULL in the source) is a null; an optional column
// the source did not record is all nulls. Only the validity bitmaps and the dictionary are new memory.
class ArrowTraceExporter {
 public:
  explicit ArrowTraceExporter(std::shared_ptr<const Trace> trace);
  ~ArrowTraceExporter();
  // Fills `array` with a struct array of the table's rows (a record batch) and `schema` with its
  // schema; both are the caller's to release. NotFound for a table the model does not have.
  Status export_table(std::string_view table, ArrowArray* array, ArrowSchema* schema);

 private:
  std::shared_ptr<const Trace> trace_;
  std::shared_ptr<const ArrowStringDictionary> dictionary_;
};

// A report's rows as a record batch of new buffers, the CSV's headers under `units` as the column
// names: a column of integers is int64, of reals double, of text utf8, with nulls where the report
// wrote none. A column that mixes integers and reals holds each cell's CSV text, so that no number
// prints otherwise than the CSV prints it.
Status export_report(const TableSink& rows, const UnitChoice& units, ArrowArray* array, ArrowSchema* schema);

}  // namespace tracedoc
