#include "report/writers.h"

#include "common/human_units.h"
#include "common/utf8.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <vector>

namespace tracedoc {

const std::vector<std::pair<std::string, OutputFormat>>& output_formats() {
  static const std::vector<std::pair<std::string, OutputFormat>> formats = {{"column", OutputFormat::kColumn},
                                                                            {"table", OutputFormat::kTable},
                                                                            {"csv", OutputFormat::kCsv},
                                                                            {"tsv", OutputFormat::kTsv},
                                                                            {"json", OutputFormat::kJson}};
  return formats;
}

Result<OutputFormat> parse_output_format(std::string_view s) {
  for (const auto& [name, format] : output_formats()) {
    if (s == name) return format;
  }
  return UsageError(fmt::format("unknown output format '{}' (use column, table, csv, tsv or json)", s));
}

const char* format_extension(OutputFormat f) {
  switch (f) {
    case OutputFormat::kCsv: return "csv";
    case OutputFormat::kTsv: return "tsv";
    case OutputFormat::kColumn: return "txt";
    case OutputFormat::kTable: return "txt";
    case OutputFormat::kJson: return "json";
  }
  return "txt";
}

namespace {

bool numeric(const Cell& c) { return c.type == Cell::Type::kInt || c.type == Cell::Type::kReal; }

// nsys's CSV quotes a field only when it holds the separator or a line break (a lone quote
// character, as in JSON-like NVTX texts, is written as is); quotes inside a quoted field are doubled.
void append_csv_field(std::string& line, std::string_view text, char sep) {
  bool quote = text.find_first_of("\r\n") != std::string_view::npos || text.find(sep) != std::string_view::npos;
  if (!quote) {
    line.append(text);
    return;
  }
  line.push_back('"');
  for (char c : text) {
    if (c == '"') line.push_back('"');
    line.push_back(c);
  }
  line.push_back('"');
}

class CsvWriter : public RowSink {
 public:
  CsvWriter(const WriterOptions& o, TextOut& out, char sep) : opt_(o), out_(out), sep_(sep) {}
  void begin(const std::vector<ColumnSpec>& columns) override {
    columns_ = columns;
    line_.clear();
    for (size_t i = 0; i < columns.size(); ++i) {
      if (i) line_.push_back(sep_);
      append_field(header_text(columns[i], opt_.units));
    }
    line_.push_back('\n');
    out_.write(line_);
  }
  void row(std::span<const Cell> cells) override {
    line_.clear();
    for (size_t i = 0; i < cells.size(); ++i) {
      if (i) line_.push_back(sep_);
      if (cells[i].type == Cell::Type::kText) {
        append_field(cells[i].s);
      } else {
        line_.append(cell_text(cells[i], columns_[i].unit, opt_.units));
      }
    }
    line_.push_back('\n');
    out_.write(line_);
  }
  void end() override {}

 private:
  void append_field(std::string_view text) {
    if (sep_ == '\t') {
      // nsys's tsv does not quote; tabs and newlines inside a field would break rows, so escape them.
      for (char c : text) {
        if (c == '\t')
          line_.append("\\t");
        else if (c == '\n')
          line_.append("\\n");
        else
          line_.push_back(c);
      }
      return;
    }
    append_csv_field(line_, text, sep_);
  }
  WriterOptions opt_;
  TextOut& out_;
  char sep_;
  std::vector<ColumnSpec> columns_;
  std::string line_;
};

// {"schema_version":1,"report":...,"input":...,"columns":[...],"rows":[{header: value,...}]}
class JsonWriter : public RowSink {
 public:
  JsonWriter(const WriterOptions& o, TextOut& out) : opt_(o), out_(out) {}
  void begin(const std::vector<ColumnSpec>& columns) override {
    columns_ = columns;
    headers_.clear();
    std::string s = "{\n  \"schema_version\": 1,\n  \"report\": ";
    append_json_string(s, opt_.report_name);
    s += ",\n  \"input\": ";
    append_json_string(s, opt_.input_path);
    s += ",\n  \"columns\": [";
    for (size_t i = 0; i < columns.size(); ++i) {
      headers_.push_back(header_text(columns[i], opt_.units));
      if (i) s += ", ";
      append_json_string(s, headers_.back());
    }
    s += "],\n  \"rows\": [";
    out_.write(s);
    first_ = true;
  }
  void row(std::span<const Cell> cells) override {
    line_ = first_ ? "\n    {" : ",\n    {";
    first_ = false;
    for (size_t i = 0; i < cells.size(); ++i) {
      if (i) line_ += ", ";
      append_json_string(line_, headers_[i]);
      line_ += ": ";
      const Cell& c = cells[i];
      if (c.type == Cell::Type::kNull) {
        line_ += "null";
      } else if (c.type == Cell::Type::kText) {
        append_json_string(line_, c.s);
      } else if (c.type == Cell::Type::kReal && !std::isfinite(c.d)) {
        line_ += "null";  // JSON has no NaN or infinity (and fmt prints a negative NaN as -nan)
      } else {
        std::string t = cell_text(c, columns_[i].unit, opt_.units);
        if (t == "nan" || t == "inf" || t == "-inf") t = "null";
        line_ += t;
      }
    }
    line_ += "}";
    out_.write(line_);
  }
  void end() override { out_.write(first_ ? "]\n}\n" : "\n  ]\n}\n"); }

 private:
  WriterOptions opt_;
  TextOut& out_;
  std::vector<ColumnSpec> columns_;
  std::vector<std::string> headers_;
  std::string line_;
  bool first_ = true;
};

// nsys's console formats: widths from the header and the first 100 rows, at most 100 characters,
// numbers right-aligned, text left-aligned, headers centred, clipped cells end in "…".
class ColumnWriter : public RowSink {
 public:
  ColumnWriter(const WriterOptions& o, TextOut& out, bool boxed) : opt_(o), out_(out), boxed_(boxed) {}
  void begin(const std::vector<ColumnSpec>& columns) override {
    columns_ = columns;
    headers_.clear();
    for (const auto& c : columns) headers_.push_back(header_text(c, opt_.units));
    pending_.clear();
    widths_.clear();
    if (!opt_.display_name.empty()) {
      out_.write(fmt::format("\n ** {} ({}):\n\n", opt_.display_name, opt_.report_name));
    }
  }
  void row(std::span<const Cell> cells) override {
    std::vector<std::pair<std::string, bool>> texts;
    for (size_t i = 0; i < cells.size(); ++i) {
      texts.emplace_back(cell_text(cells[i], columns_[i].unit, opt_.units), numeric(cells[i]));
    }
    if (widths_.empty()) {
      pending_.push_back(std::move(texts));
      if (pending_.size() >= kAutoLines) flush_pending();
      return;
    }
    write_row(texts);
  }
  void end() override {
    if (widths_.empty()) flush_pending();
    if (boxed_) out_.write(rule('-', '+'));
  }

 private:
  static constexpr size_t kAutoLines = 100;
  static constexpr size_t kColMax = 100;

  static std::string pad(const std::string& s, size_t width, char align) {
    std::string c = clip_text(s, width);
    size_t w = display_width(c);
    size_t margin = width > w ? width - w : 0;
    if (align == 'r') return std::string(margin, ' ') + c;
    if (align == 'l') return c + std::string(margin, ' ');
    size_t left = margin / 2;  // centred, the odd space on the right (as nsys)
    return std::string(left, ' ') + c + std::string(margin - left, ' ');
  }
  std::string rule(char dash, char cross) const {
    std::string s;
    if (boxed_) {
      s += cross;
      for (size_t w : widths_) s += std::string(w + 2, dash) + cross;
    } else {
      s += ' ';
      for (size_t i = 0; i < widths_.size(); ++i) s += (i ? "  " : "") + std::string(widths_[i], dash);
    }
    return s + "\n";
  }
  void flush_pending() {
    widths_.assign(columns_.size(), 0);
    for (size_t i = 0; i < columns_.size(); ++i) widths_[i] = display_width(headers_[i]);
    for (const auto& r : pending_) {
      for (size_t i = 0; i < r.size(); ++i)
        widths_[i] = std::max(widths_[i], std::min(kColMax, display_width(r[i].first)));
    }
    std::vector<std::pair<std::string, bool>> hdr;
    for (const auto& h : headers_) hdr.emplace_back(h, false);
    if (boxed_) out_.write(rule('-', '+'));
    write_cells(hdr, true);
    out_.write(boxed_ ? rule('-', '+') : rule('-', ' '));
    for (const auto& r : pending_) write_row(r);
    pending_.clear();
  }
  void write_row(const std::vector<std::pair<std::string, bool>>& r) { write_cells(r, false); }
  void write_cells(const std::vector<std::pair<std::string, bool>>& r, bool header) {
    std::string line = boxed_ ? "|" : " ";
    for (size_t i = 0; i < r.size(); ++i) {
      char align = header ? 'c' : (r[i].second ? 'r' : 'l');
      if (boxed_) {
        line += ' ';
        line += pad(r[i].first, widths_[i], align);
        line += " |";
      } else {
        if (i) line += "  ";
        line += pad(r[i].first, widths_[i], align);
      }
    }
    out_.write(line + "\n");
  }

  WriterOptions opt_;
  TextOut& out_;
  bool boxed_;
  std::vector<ColumnSpec> columns_;
  std::vector<std::string> headers_;
  std::vector<std::vector<std::pair<std::string, bool>>> pending_;
  std::vector<size_t> widths_;
};

}  // namespace

// Names come from the trace and may hold any bytes: control characters are escaped and invalid
// UTF-8 becomes U+FFFD, so the document is always valid JSON.
void append_json_string(std::string& out, std::string_view s) {
  out.push_back('"');
  for (size_t i = 0; i < s.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    switch (c) {
      case '"': out.append("\\\""); break;
      case '\\': out.append("\\\\"); break;
      case '\n': out.append("\\n"); break;
      case '\r': out.append("\\r"); break;
      case '\t': out.append("\\t"); break;
      default:
        if (c < 0x20) {
          out.append(fmt::format("\\u{:04x}", c));
        } else if (c < 0x80) {
          out.push_back(static_cast<char>(c));
        } else if (const size_t n = utf8_sequence_length(s, i)) {
          out.append(s.substr(i, n));
          i += n - 1;
        } else {
          out.append("\uFFFD");
        }
    }
  }
  out.push_back('"');
}

std::unique_ptr<RowSink> make_writer(const WriterOptions& options, TextOut& out) {
  switch (options.format) {
    case OutputFormat::kCsv: return std::make_unique<CsvWriter>(options, out, ',');
    case OutputFormat::kTsv: return std::make_unique<CsvWriter>(options, out, '\t');
    case OutputFormat::kJson: return std::make_unique<JsonWriter>(options, out);
    case OutputFormat::kColumn: return std::make_unique<ColumnWriter>(options, out, false);
    case OutputFormat::kTable: return std::make_unique<ColumnWriter>(options, out, true);
  }
  return nullptr;
}

std::string render_rows(const WriterOptions& options, const std::function<void(RowSink&)>& produce) {
  char* buf = nullptr;
  size_t len = 0;
  FILE* mem = open_memstream(&buf, &len);
  if (!mem) return std::string();
  {
    TextOut out(mem);
    auto writer = make_writer(options, out);
    produce(*writer);
  }
  std::fclose(mem);
  std::string text(buf, len);
  std::free(buf);
  return text;
}

std::string escape_markup(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += static_cast<unsigned char>(c) < 0x20 && c != '\t' ? ' ' : c;
    }
  }
  return out;
}

}  // namespace tracedoc
