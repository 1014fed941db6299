#include "report/check_writer.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "report/json_object.h"
#include "report/markdown.h"

namespace tracedoc {

using budget::CheckReport;
using budget::CheckResult;

namespace {

// The figure in the budget's unit, with enough digits that a value next to its limit is not
// rounded onto it (79.996% is not printed as 80.0% under a minimum of 80).
std::string value_text(double v, const std::string& unit) {
  if (std::isnan(v)) return "n/a";
  if (unit == "ms") return fmt::format("{:.3f} ms", v);
  if (unit == "us") return fmt::format("{:.2f} µs", v);
  if (unit == "%") return fmt::format("{:.2f}%", v);
  if (unit == "pp") return fmt::format("{:.2f} pp", v);
  if (unit == "GB") return fmt::format("{:.3f} GB", v);
  if (unit == "count") return fmt::format("{:.0f}", v);
  if (unit == "x") return fmt::format("{:.3f}x", v);
  return fmt::format("{:g} {}", v, unit);
}

std::string limit_text(const CheckResult& r, const char* at_most, const char* at_least) {
  const std::string unit = r.unit == "us"      ? " µs"
                           : r.unit == "%"     ? "%"
                           : r.unit == "count" ? ""
                           : r.unit == "x"     ? "x"
                                               : " " + r.unit;
  return fmt::format("{} {:g}{}", r.at_most ? at_most : at_least, r.limit, unit);
}

std::string headline(const CheckReport& report) {
  const size_t n = report.results.size(), failed = report.failed();
  std::string against = report.budget;
  if (!report.baseline.empty()) against += ", baseline " + report.baseline;
  if (n == 0) return fmt::format("{}: nothing checked: the budget {} sets no limits", report.input, report.budget);
  if (failed == 0) return fmt::format("{}: all {} check{} passed ({})", report.input, n, n == 1 ? "" : "s", against);
  return fmt::format("{}: {} of {} check{} failed ({})", report.input, failed, n, n == 1 ? "" : "s", against);
}

}  // namespace

std::string check_text(const CheckReport& report) {
  std::string out = headline(report) + "\n";
  if (report.results.empty()) return out;
  size_t check_w = 0, actual_w = 0, limit_w = 0;
  for (const CheckResult& r : report.results) {
    check_w = std::max(check_w, r.check.size());
    actual_w = std::max(actual_w, value_text(r.actual, r.unit).size());
    limit_w = std::max(limit_w, limit_text(r, "<=", ">=").size());
  }
  out += "\n";
  for (const CheckResult& r : report.results) {
    // fmt pads by code points, so "µs" lines up with the rest.
    out += fmt::format("{}  {:<{}}  {:>{}}  {:<{}}  {}: {}\n", r.pass ? "PASS" : "FAIL", r.check, check_w,
                       value_text(r.actual, r.unit), actual_w, limit_text(r, "<=", ">="), limit_w, r.scope, r.detail);
  }
  return out;
}

std::string check_json(const CheckReport& report) {
  std::string out;
  JsonObject root(out, 0);
  root.field("schema_version", int64_t{1});
  root.field("input", report.input);
  root.field("budget", report.budget);
  root.field("baseline", report.baseline);
  root.flag("passed", report.failed() == 0);
  root.field("checked", static_cast<int64_t>(report.results.size()));
  root.field("failed", static_cast<int64_t>(report.failed()));
  json_array(root, "checks", report.results, [](JsonObject& o, const CheckResult& r) {
    o.field("check", r.check);
    o.field("scope", r.scope);
    o.field("status", std::string(r.pass ? "pass" : "fail"));
    o.precise("actual", r.actual);  // exact: a figure next to its limit is not rounded onto it
    o.precise("limit", r.limit);
    o.field("bound", std::string(r.at_most ? "max" : "min"));
    o.field("unit", r.unit);
    if (r.figure != kNoValue) o.field("figure", r.figure);
    if (r.basis != kNoValue) o.field("basis", r.basis);
    if (!r.figure_unit.empty()) o.field("figure_unit", r.figure_unit);
    o.field("detail", r.detail);
  });
  root.close();
  out += "\n";
  return out;
}

std::string check_markdown(const CheckReport& report) {
  std::string out = fmt::format("### tracedoc check: `{}`\n\n", markdown_cell(report.input));
  out += markdown_cell(headline(report).substr(report.input.size() + 2)) + "\n\n";
  if (report.results.empty()) return out;
  out += "| Result | Check | Scope | Actual | Limit | Detail |\n|---|---|---|---|---|---|\n";
  for (const CheckResult& r : report.results) {
    out += fmt::format("| {} | `{}` | {} | {} | {} | {} |\n", r.pass ? "pass" : "**FAIL**", r.check,
                       markdown_cell(r.scope), value_text(r.actual, r.unit), limit_text(r, "≤", "≥"),
                       markdown_cell(r.detail));
  }
  out += "\n";
  return out;
}

}  // namespace tracedoc
