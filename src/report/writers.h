// Writers that turn report rows into text: csv, tsv, column (nsys console), table (boxed), json.
#pragma once

#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "analysis/result.h"
#include "common/status.h"
#include "common/utf8.h"
#include "report/number_format.h"

namespace tracedoc {

enum class OutputFormat { kCsv, kTsv, kColumn, kTable, kJson };

// The report formats by name, in the order the help lists them.
const std::vector<std::pair<std::string, OutputFormat>>& output_formats();
Result<OutputFormat> parse_output_format(std::string_view s);
const char* format_extension(OutputFormat f);

// Buffered output to a FILE* (stdout or a temporary file).
class TextOut {
 public:
  explicit TextOut(FILE* f) : file_(f) { buf_.reserve(1 << 16); }
  ~TextOut() { flush(); }
  // Text that is not valid UTF-8 (names from a trace hold any bytes) is written with U+FFFD in
  // place of the bad bytes; writers hand over whole strings, so no sequence is split between calls.
  void write(std::string_view s) {
    if (is_valid_utf8(s))
      buf_.append(s);
    else
      buf_.append(replace_invalid_utf8(s));
    if (buf_.size() > (1 << 16)) flush();
  }
  void put(char c) { buf_.push_back(c); }
  void flush() {
    if (!buf_.empty()) std::fwrite(buf_.data(), 1, buf_.size(), file_);
    buf_.clear();
  }

 private:
  FILE* file_;
  std::string buf_;
};

struct WriterOptions {
  OutputFormat format = OutputFormat::kCsv;
  UnitChoice units;
  std::string report_name;   // json: "report"
  std::string display_name;  // column/table title
  std::string input_path;    // json: "input"
};

std::unique_ptr<RowSink> make_writer(const WriterOptions& options, TextOut& out);

// The text a writer makes of the rows `produce` emits (a whole document held in memory).
std::string render_rows(const WriterOptions& options, const std::function<void(RowSink&)>& produce);

// `s` as HTML / XML text or attribute value: & < > " ' as character references, and control
// characters (which XML 1.0 forbids even escaped) as spaces.
std::string escape_markup(std::string_view s);

// Appends `s` as a JSON string literal (quoted, escaped; invalid UTF-8 becomes U+FFFD).
void append_json_string(std::string& out, std::string_view s);

// Holds back begin() until the first row, so that an empty report prints nothing (as nsys's do):
// on_first_row runs just before, for what goes above the rows (a heading).
class DeferredSink : public RowSink {
 public:
  DeferredSink(RowSink& inner, std::function<void()> on_first_row)
      : inner_(inner), on_first_row_(std::move(on_first_row)) {}
  void begin(const std::vector<ColumnSpec>& columns) override {
    columns_ = columns;
    started_ = false;
  }
  void row(std::span<const Cell> cells) override {
    if (!started_) {
      started_ = true;
      on_first_row_();
      inner_.begin(columns_);
    }
    inner_.row(cells);
  }
  void end() override {
    if (started_) inner_.end();
  }
  bool started() const { return started_; }

 private:
  RowSink& inner_;
  std::function<void()> on_first_row_;
  std::vector<ColumnSpec> columns_;
  bool started_ = false;
};

}  // namespace tracedoc
