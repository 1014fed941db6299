#include "report/arrow_export.h"

#include <fmt/format.h>

#include <cstring>
#include <functional>
#include <limits>
#include <type_traits>

namespace tracedoc {

// The trace's string pool as an Arrow utf8 (or, past 2 GiB of text, large_utf8) array.
struct ArrowStringDictionary {
  bool large = false;
  std::vector<int32_t> offsets32;
  std::vector<int64_t> offsets64;
  std::string data;
  int64_t length = 0;
};

namespace {

// What one exported ArrowArray owns: the release callback frees it. Buffers point into `keep`
// (the trace, the dictionary) or into `owned` (validity bitmaps, offsets, data of a report).
struct ArrayData {
  std::vector<std::shared_ptr<const void>> keep;
  std::vector<std::vector<uint8_t>> owned;
  std::vector<const void*> buffers;
  std::vector<ArrowArray*> children;
  ArrowArray* dictionary = nullptr;
};

// What one exported ArrowSchema owns: its strings and its children.
struct SchemaData {
  std::string format, name, metadata;
  std::vector<ArrowSchema*> children;
  ArrowSchema* dictionary = nullptr;
};

// The release callback of an array (Node = ArrowArray, Data = ArrayData) or a schema. Children and
// the dictionary are released with their parent unless a consumer moved them out (their release is
// null then), as the interface specifies.
template <typename Node, typename Data>
void release_node(Node* node) {
  auto* data = static_cast<Data*>(node->private_data);
  auto release = [](Node* child) {
    if (child->release) child->release(child);
    delete child;
  };
  for (Node* child : data->children) release(child);
  if (data->dictionary) release(data->dictionary);
  delete data;
  node->release = nullptr;
}
constexpr auto release_array = release_node<ArrowArray, ArrayData>;
constexpr auto release_schema = release_node<ArrowSchema, SchemaData>;

// Fills `array` from `data` (which it then owns).
void finish_array(ArrowArray* array, ArrayData* data, int64_t length, int64_t null_count) {
  *array = ArrowArray{};
  array->length = length;
  array->null_count = null_count;
  array->n_buffers = static_cast<int64_t>(data->buffers.size());
  array->buffers = data->buffers.data();
  array->n_children = static_cast<int64_t>(data->children.size());
  array->children = data->children.empty() ? nullptr : data->children.data();
  array->dictionary = data->dictionary;
  array->release = release_array;
  array->private_data = data;
}

void finish_schema(ArrowSchema* schema, SchemaData* data, int64_t flags) {
  *schema = ArrowSchema{};
  schema->format = data->format.c_str();
  schema->name = data->name.c_str();
  schema->metadata = data->metadata.empty() ? nullptr : data->metadata.data();
  schema->flags = flags;
  schema->n_children = static_cast<int64_t>(data->children.size());
  schema->children = data->children.empty() ? nullptr : data->children.data();
  schema->dictionary = data->dictionary;
  schema->release = release_schema;
  schema->private_data = data;
}

// The interface's metadata encoding: a pair count, then each key and value with its length, all
// lengths int32 in native byte order.
std::string encode_metadata(const std::vector<std::pair<std::string, std::string>>& pairs) {
  if (pairs.empty()) return {};
  std::string out;
  auto put_int = [&](size_t n) {
    const auto v = static_cast<int32_t>(n);
    out.append(reinterpret_cast<const char*>(&v), sizeof v);
  };
  put_int(pairs.size());
  for (const auto& [key, value] : pairs) {
    put_int(key.size()), out += key;
    put_int(value.size()), out += value;
  }
  return out;
}

// One bit per row, set where the row has a value; empty when every row has one. Counts the nulls.
template <typename IsNull>
std::vector<uint8_t> validity(size_t length, IsNull is_null, int64_t& null_count) {
  null_count = 0;
  std::vector<uint8_t> bits;
  for (size_t i = 0; i < length; ++i) {
    if (!is_null(i)) continue;
    if (bits.empty()) bits.assign((length + 7) / 8, 0xFF);
    bits[i / 8] &= static_cast<uint8_t>(~(1u << (i % 8)));
    ++null_count;
  }
  return bits;
}

// The Arrow format string of a column's values.
template <typename T>
constexpr const char* arrow_format() {
  if constexpr (std::is_same_v<T, int64_t>) return "l";
  if constexpr (std::is_same_v<T, int32_t>) return "i";
  if constexpr (std::is_same_v<T, uint32_t>) return "I";
  if constexpr (std::is_same_v<T, uint16_t>) return "S";
  if constexpr (std::is_same_v<T, uint8_t>) return "C";
  if constexpr (std::is_same_v<T, char>) return "c";  // one byte, as int8
  if constexpr (std::is_same_v<T, double>) return "g";
}

constexpr std::string_view arrow_type_name(std::string_view format) {
  if (format == "l") return "int64";
  if (format == "i") return "int32";
  if (format == "I") return "uint32";
  if (format == "S") return "uint16";
  if (format == "C") return "uint8";
  if (format == "c") return "int8";
  if (format == "g") return "double";
  return "?";
}

template <typename Table, typename T>
ArrowColumnInfo column_info(const Column<Table, T>& column) {
  ArrowColumnInfo info;
  info.name = std::string(column.name);
  info.description = std::string(column.description);
  if (column.role == ColumnRole::kString)
    info.type = "dictionary<utf8>";
  else
    info.type = std::string(arrow_type_name(arrow_format<T>()));
  if (column.role == ColumnRole::kTime)
    info.unit = "ns";
  else if (column.name == "bytes" || column.description.find("bytes") != std::string_view::npos)
    info.unit = "bytes";
  return info;
}

std::string field_metadata(const ArrowColumnInfo& info) {
  std::vector<std::pair<std::string, std::string>> pairs = {{"description", info.description}};
  if (!info.unit.empty()) pairs.emplace_back("unit", info.unit);
  return encode_metadata(pairs);
}

std::shared_ptr<const ArrowStringDictionary> lay_out_pool(const StringPool& pool) {
  auto d = std::make_shared<ArrowStringDictionary>();
  size_t bytes = 0;
  for (StrId id = 0; id < pool.size(); ++id) bytes += pool.get(id).size();
  d->large = bytes > static_cast<size_t>(std::numeric_limits<int32_t>::max());
  d->length = static_cast<int64_t>(pool.size());
  d->data.reserve(bytes);
  (d->large ? d->offsets64.reserve(pool.size() + 1) : d->offsets32.reserve(pool.size() + 1));
  auto offset = [&] {
    d->large ? d->offsets64.push_back(static_cast<int64_t>(d->data.size()))
             : d->offsets32.push_back(static_cast<int32_t>(d->data.size()));
  };
  offset();
  for (StrId id = 0; id < pool.size(); ++id) {
    d->data += pool.get(id);
    offset();
  }
  return d;
}

// The dictionary array of a string column: the pool's strings, shared.
ArrowArray* dictionary_array(const std::shared_ptr<const ArrowStringDictionary>& d) {
  auto* data = new ArrayData;
  data->keep.push_back(d);
  data->buffers = {nullptr, d->large ? static_cast<const void*>(d->offsets64.data()) : d->offsets32.data(),
                   d->data.data()};
  auto* array = new ArrowArray;
  finish_array(array, data, d->length, 0);
  return array;
}

ArrowSchema* dictionary_schema(bool large) {
  auto* data = new SchemaData;
  data->format = large ? "U" : "u";
  auto* schema = new ArrowSchema;
  finish_schema(schema, data, 0);
  return schema;
}

// The array and schema of one model column of `rows` rows.
template <typename Table, typename T>
void export_column(const Column<Table, T>& column, const std::vector<T>& values, size_t rows,
                   const std::shared_ptr<const Trace>& trace,
                   const std::function<std::shared_ptr<const ArrowStringDictionary>()>& dictionary, ArrowArray* array,
                   ArrowSchema* schema) {
  const ArrowColumnInfo info = column_info(column);
  auto* data = new ArrayData;
  int64_t null_count = rows;
  std::vector<uint8_t> bits;
  const void* values_buffer = values.data();
  if (values.size() == rows) {
    bits = validity(
        rows, [&](size_t i) { return column.is_absent(values[i]); }, null_count);
    data->keep.push_back(trace);
  } else {  // an optional column the source did not record: all nulls, over zeros
    bits.assign((rows + 7) / 8, 0);
    data->owned.emplace_back(rows * sizeof(T) + 1, 0);
    values_buffer = data->owned.back().data();
  }
  const void* bits_buffer = nullptr;
  if (!bits.empty()) {
    data->owned.push_back(std::move(bits));
    bits_buffer = data->owned.back().data();
  }
  data->buffers = {bits_buffer, values_buffer};
  auto* schema_data = new SchemaData;
  schema_data->name = info.name;
  schema_data->metadata = field_metadata(info);
  schema_data->format = arrow_format<T>();
  if (column.role == ColumnRole::kString) {
    const auto d = dictionary();
    data->dictionary = dictionary_array(d);
    schema_data->dictionary = dictionary_schema(d->large);
  }
  finish_array(array, data, static_cast<int64_t>(rows), null_count);
  finish_schema(schema, schema_data, ARROW_FLAG_NULLABLE);
}

// A struct array (a record batch) over the given children.
void export_struct(int64_t rows, std::vector<ArrowArray*> children, std::vector<ArrowSchema*> fields,
                   std::string metadata, ArrowArray* array, ArrowSchema* schema) {
  auto* data = new ArrayData;
  data->buffers = {nullptr};
  data->children = std::move(children);
  finish_array(array, data, rows, 0);
  auto* schema_data = new SchemaData;
  schema_data->format = "+s";
  schema_data->metadata = std::move(metadata);
  schema_data->children = std::move(fields);
  finish_schema(schema, schema_data, 0);
}

// How a report column goes to Arrow, chosen from the text the CSV prints for its cells, so that a
// DataFrame prints each number as the CSV does: integers as int64, reals printed as Python's repr
// as double, numbers printed with a fixed count of decimals (converted units: "8046.134",
// "0.000") as decimal128 of that scale, anything else (text, a mix) as the text itself.
struct ReportColumn {
  enum Kind : uint8_t { kInt, kReal, kDecimal, kText } kind = kInt;
  int scale = 0;
};

// The count of decimals of "-?digits.digits" (0 for "-?digits"), or -1 for any other text.
int fixed_decimals(std::string_view text) {
  size_t i = !text.empty() && text[0] == '-';
  const size_t digits_from = i;
  while (i < text.size() && text[i] >= '0' && text[i] <= '9') ++i;
  if (i == digits_from || i - digits_from > 30) return -1;
  if (i == text.size()) return 0;
  if (text[i] != '.') return -1;
  const size_t point = i++;
  while (i < text.size() && text[i] >= '0' && text[i] <= '9') ++i;
  return i == text.size() && i > point + 1 && i - point - 1 <= 7 ? static_cast<int>(i - point - 1) : -1;
}

// "8046.134" as 8046134 (its digits without the point).
__int128 scaled_decimal(std::string_view text) {
  __int128 v = 0;
  for (char ch : text) {
    if (ch >= '0' && ch <= '9') v = v * 10 + (ch - '0');
  }
  return !text.empty() && text[0] == '-' ? -v : v;
}

template <typename CellAt>
ReportColumn report_column(size_t n, const CellAt& cell, const std::vector<std::string>& texts) {
  bool ints = false, reals = false, texts_seen = false, plain = true;
  int decimals = -2;  // -2: no number yet; -1: numbers without one common count of decimals
  for (size_t r = 0; r < n; ++r) {
    const Cell& c = cell(r);
    if (c.is_null()) continue;
    if (c.type == Cell::Type::kText) {
      texts_seen = true;
      continue;
    }
    ints |= c.type == Cell::Type::kInt, reals |= c.type == Cell::Type::kReal;
    plain &= texts[r] == (c.type == Cell::Type::kInt ? std::to_string(c.i) : python_float_repr(c.d));
    int d = fixed_decimals(texts[r]);
    if (d > 0 && texts[r][0] == '-' && scaled_decimal(texts[r]) == 0) d = -1;  // "-0.000": no decimal says it
    decimals = decimals == -2 || decimals == d ? d : -1;
  }
  if (texts_seen || (ints && reals && plain)) return {ReportColumn::kText};
  if (plain) return {reals ? ReportColumn::kReal : ReportColumn::kInt};
  if (decimals > 0) return {ReportColumn::kDecimal, decimals};
  return {ReportColumn::kText};
}

// n values of T laid out for an Arrow buffer.
template <typename T, typename ValueAt>
std::vector<uint8_t> fixed_width(size_t n, const ValueAt& value) {
  std::vector<uint8_t> out(n * sizeof(T) + 1, 0);  // + 1: never a null pointer, even for no rows
  for (size_t r = 0; r < n; ++r) {
    const T v = value(r);
    std::memcpy(out.data() + r * sizeof(T), &v, sizeof v);
  }
  return out;
}

}  // namespace

std::vector<ArrowTableInfo> arrow_tables() {
  std::vector<ArrowTableInfo> tables;
  for_each_trace_table([&](const TableInfo& info, auto get) {
    using Table = std::decay_t<decltype(get(std::declval<Trace&>()))>;
    ArrowTableInfo t{std::string(info.name), {}};
    for_each_column_of<Table>([&](const auto& column) { t.columns.push_back(column_info(column)); });
    tables.push_back(std::move(t));
  });
  return tables;
}

ArrowTraceExporter::ArrowTraceExporter(std::shared_ptr<const Trace> trace) : trace_(std::move(trace)) {}
ArrowTraceExporter::~ArrowTraceExporter() = default;

Status ArrowTraceExporter::export_table(std::string_view name, ArrowArray* array, ArrowSchema* schema) {
  bool found = false;
  auto dictionary = [this] {
    if (!dictionary_) dictionary_ = lay_out_pool(trace_->strings);
    return dictionary_;
  };
  for_each_table(*trace_, [&](const TableInfo& info, const auto& table) {
    if (found || info.name != name) return;
    found = true;
    using Table = std::decay_t<decltype(table)>;
    const size_t rows = table.size();
    std::vector<ArrowArray*> children;
    std::vector<ArrowSchema*> fields;
    for_each_column(table, [&](const auto& column, const auto& values) {
      children.push_back(new ArrowArray);
      fields.push_back(new ArrowSchema);
      export_column(column, values, rows, trace_, dictionary, children.back(), fields.back());
    });
    static_assert(column_count<Table>() > 0);
    export_struct(static_cast<int64_t>(rows), std::move(children), std::move(fields),
                  encode_metadata({{"table", std::string(name)}, {"source", trace_->source.path}}), array, schema);
  });
  if (!found) return UsageError(fmt::format("no table '{}' in the trace model", name));
  return Status::Ok();
}

Status export_report(const TableSink& rows, const UnitChoice& units, ArrowArray* array, ArrowSchema* schema) {
  const std::vector<ColumnSpec>& specs = rows.columns();
  const size_t n = rows.row_count();
  std::vector<ArrowArray*> children;
  std::vector<ArrowSchema*> fields;
  std::vector<std::string> texts(n);
  for (size_t c = 0; c < specs.size(); ++c) {
    const Cell* column = n ? &rows.row_at(0)[c] : nullptr;
    auto cell = [&](size_t r) -> const Cell& { return column[r * specs.size()]; };
    for (size_t r = 0; r < n; ++r)
      texts[r] = cell(r).is_null() ? std::string() : cell_text(cell(r), specs[c].unit, units);
    const ReportColumn how = report_column(n, cell, texts);
    auto* data = new ArrayData;
    int64_t null_count = 0;
    data->owned.push_back(validity(
        n, [&](size_t r) { return cell(r).is_null(); }, null_count));
    std::string format;
    switch (how.kind) {
      case ReportColumn::kInt:
        format = "l";
        data->owned.push_back(fixed_width<int64_t>(n, [&](size_t r) { return cell(r).is_null() ? 0 : cell(r).i; }));
        break;
      case ReportColumn::kReal:
        format = "g";
        data->owned.push_back(fixed_width<double>(n, [&](size_t r) { return cell(r).is_null() ? 0.0 : cell(r).d; }));
        break;
      case ReportColumn::kDecimal:
        format = fmt::format("d:38,{}", how.scale);
        data->owned.push_back(fixed_width<__int128>(n, [&](size_t r) { return scaled_decimal(texts[r]); }));
        break;
      case ReportColumn::kText: {
        format = "U";  // large_utf8: a report's text has no 2 GiB bound
        std::vector<uint8_t> offsets((n + 1) * sizeof(int64_t), 0), values;
        for (size_t r = 0; r < n; ++r) {
          values.insert(values.end(), texts[r].begin(), texts[r].end());
          const auto end = static_cast<int64_t>(values.size());
          std::memcpy(offsets.data() + (r + 1) * sizeof(int64_t), &end, sizeof end);
        }
        values.push_back(0);  // never a null pointer, even for no text
        data->owned.push_back(std::move(offsets));
        data->owned.push_back(std::move(values));
        break;
      }
    }
    data->buffers.push_back(data->owned[0].empty() ? nullptr : data->owned[0].data());
    for (size_t b = 1; b < data->owned.size(); ++b) data->buffers.push_back(data->owned[b].data());
    children.push_back(new ArrowArray);
    finish_array(children.back(), data, static_cast<int64_t>(n), null_count);
    auto* schema_data = new SchemaData;
    schema_data->name = header_text(specs[c], units);
    schema_data->format = format;
    fields.push_back(new ArrowSchema);
    finish_schema(fields.back(), schema_data, ARROW_FLAG_NULLABLE);
  }
  export_struct(static_cast<int64_t>(n), std::move(children), std::move(fields), {}, array, schema);
  return Status::Ok();
}

}  // namespace tracedoc
