// Building JSON documents by hand with stable key order and indentation (summary, diagnose): a
// tiny writer that keeps the commas right. Values are exact integers, 4-decimal reals (or, with
// precise(), the shortest exact text; null when not finite) and escaped strings.
#pragma once

#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "report/writers.h"

namespace tracedoc {

class JsonObject {
 public:
  explicit JsonObject(std::string& out, int indent) : out_(out), indent_(indent) { out_ += "{"; }
  void key(const char* k) {
    out_ += first_ ? "\n" : ",\n";
    first_ = false;
    out_.append(static_cast<size_t>(indent_ + 2), ' ');
    append_json_string(out_, k);
    out_ += ": ";
  }
  void field(const char* k, int64_t v) { key(k), out_ += std::to_string(v); }
  void field(const char* k, double v) { key(k), out_ += std::isfinite(v) ? fmt::format("{:.4f}", v) : "null"; }
  // Shortest text that reads back as the same double (p-values far below 4 decimals).
  void precise(const char* k, double v) { key(k), out_ += std::isfinite(v) ? fmt::format("{}", v) : "null"; }
  void field(const char* k, const std::string& v) { key(k), append_json_string(out_, v); }
  void flag(const char* k, bool v) { key(k), out_ += v ? "true" : "false"; }
  void close() {
    out_ += "\n";
    out_.append(static_cast<size_t>(indent_), ' ');
    out_ += "}";
  }
  std::string& out() { return out_; }
  int indent() const { return indent_; }

 private:
  std::string& out_;
  int indent_;
  bool first_ = true;
};

template <typename T, typename Fn>
void json_array(JsonObject& parent, const char* k, const std::vector<T>& items, Fn each) {
  parent.key(k);
  std::string& out = parent.out();
  out += "[";
  for (size_t i = 0; i < items.size(); ++i) {
    out += i ? ",\n" : "\n";
    out.append(static_cast<size_t>(parent.indent() + 4), ' ');
    JsonObject o(out, parent.indent() + 4);
    each(o, items[i]);
    o.close();
  }
  if (!items.empty()) {
    out += "\n";
    out.append(static_cast<size_t>(parent.indent() + 2), ' ');
  }
  out += "]";
}

}  // namespace tracedoc
