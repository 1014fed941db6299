#include "budget/budget.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "common/toml_file.h"
#include "diagnose/rules.h"

namespace tracedoc::budget {

namespace {

namespace fs = std::filesystem;

// Limits end up compared with int64 ns and bytes: keep them far inside that range.
constexpr double kLargest = 1e15;

// Reads the values of one budget file; every message names the file and the key.
class Reader {
 public:
  explicit Reader(const std::string& path) : path_(path) {}

  Status error(const std::string& key, const std::string& what) const {
    return BadInput(fmt::format("{}: {}: {}", path_, key, what));
  }

  // A number in [lo, hi] (integers convert).
  Status number(const toml::node& n, const std::string& key, double lo, double hi, std::optional<double>* out) const {
    const std::optional<double> v = n.is_number() ? n.value<double>() : std::nullopt;
    if (!v) return error(key, "must be a number");
    if (!std::isfinite(*v) || *v < lo || *v > hi)
      return error(key, fmt::format("must be a number from {:g} to {:g}", lo, hi));
    *out = *v;
    return Status::Ok();
  }

  Status count(const toml::node& n, const std::string& key, std::optional<double>* out) const {
    if (!n.is_integer() || *n.value<int64_t>() < 0) return error(key, "must be a whole number, 0 or more");
    *out = static_cast<double>(*n.value<int64_t>());
    return Status::Ok();
  }

  Status string(const toml::node& n, const std::string& key, std::string* out) const {
    if (!n.is_string() || n.value<std::string>()->empty()) return error(key, "must be a non-empty string");
    *out = *n.value<std::string>();
    return Status::Ok();
  }

  // A path written in the budget: relative ones are relative to the budget file's folder.
  std::string resolve(const std::string& p) const {
    const fs::path given(p);
    if (given.is_absolute()) return p;
    return (fs::path(path_).parent_path() / given).lexically_normal().string();
  }

  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// The limit keys of a simple section: name -> (field, lo, hi).
struct LimitKey {
  const char* name;
  std::optional<double> Budget::*field;
  double lo, hi;
};

// The sections that hold limits only ([steps] also takes the marker).
struct LimitSection {
  const char* name;
  std::vector<LimitKey> keys;
};

const std::vector<LimitSection>& limit_sections() {
  static const std::vector<LimitSection> kSections = {
      {"steps",
       {{"p50_max_ms", &Budget::step_p50_max_ms, 0, kLargest}, {"p95_max_ms", &Budget::step_p95_max_ms, 0, kLargest}}},
      {"gpu", {{"busy_min_pct", &Budget::busy_min_pct, 0, 100}, {"idle_max_pct", &Budget::idle_max_pct, 0, 100}}},
      {"copies", {{"share_max_pct", &Budget::copy_share_max_pct, 0, 100}}},
      {"memory", {{"peak_max_gb", &Budget::memory_peak_max_gb, 0, 1e6}}},
      {"ranks",
       {{"compute_imbalance_max", &Budget::compute_imbalance_max, 1, 1e6},
        {"skew_p50_max_ms", &Budget::skew_p50_max_ms, 0, kLargest}}},
  };
  return kSections;
}

Status read_limits(const Reader& r, const toml::table& t, const LimitSection& section, Budget& b) {
  const std::string prefix(section.name);
  const bool steps = prefix == "steps";
  std::string expected;
  for (const LimitKey& k : section.keys) expected += (expected.empty() ? "" : ", ") + std::string(k.name);
  if (steps) expected += ", marker";
  for (const auto& [key, node] : t) {
    const std::string name(key.str());
    const std::string full = prefix + "." + name;
    if (steps && name == "marker") {
      TRACEDOC_RETURN_IF_ERROR(r.string(node, full, &b.step_marker));
      continue;
    }
    const auto it =
        std::find_if(section.keys.begin(), section.keys.end(), [&](const LimitKey& k) { return name == k.name; });
    if (it == section.keys.end()) return r.error(full, fmt::format("unknown key (expected {})", expected));
    TRACEDOC_RETURN_IF_ERROR(r.number(node, full, it->lo, it->hi, &(b.*(it->field))));
  }
  return Status::Ok();
}

Status read_kernel(const Reader& r, const toml::node& node, size_t index, Budget& b) {
  const std::string prefix = fmt::format("kernel[{}]", index);
  const toml::table* t = node.as_table();
  if (!t) return r.error(prefix, "must be a table ([[kernel]])");
  KernelBudget k;
  for (const auto& [key, v] : *t) {
    const std::string name(key.str());
    const std::string full = prefix + "." + name;
    if (name == "name") {
      TRACEDOC_RETURN_IF_ERROR(r.string(v, full, &k.name));
      auto pattern = NamePattern::compile(k.name);
      if (!pattern.ok()) return r.error(full, pattern.status().message());
      k.pattern = std::move(pattern).value();
    } else if (name == "total_max_ms") {
      TRACEDOC_RETURN_IF_ERROR(r.number(v, full, 0, kLargest, &k.total_max_ms));
    } else if (name == "share_max_pct") {
      TRACEDOC_RETURN_IF_ERROR(r.number(v, full, 0, 100, &k.share_max_pct));
    } else if (name == "count_max") {
      TRACEDOC_RETURN_IF_ERROR(r.count(v, full, &k.count_max));
    } else if (name == "avg_max_us") {
      TRACEDOC_RETURN_IF_ERROR(r.number(v, full, 0, kLargest, &k.avg_max_us));
    } else {
      return r.error(full, "unknown key (expected name, total_max_ms, share_max_pct, count_max or avg_max_us)");
    }
  }
  if (k.name.empty()) return r.error(prefix + ".name", "missing: the regular expression of the kernel names");
  if (!k.total_max_ms && !k.share_max_pct && !k.count_max && !k.avg_max_us) {
    return r.error(prefix, "sets no limit (total_max_ms, share_max_pct, count_max or avg_max_us)");
  }
  b.kernels.push_back(std::move(k));
  return Status::Ok();
}

Status read_findings(const Reader& r, const toml::table& t, Budget& b) {
  for (const auto& [key, v] : t) {
    const std::string name(key.str());
    const std::string full = "findings." + name;
    if (name == "forbid") {
      const toml::array* ids = v.as_array();
      if (!ids) return r.error(full, "must be a list of rule ids");
      for (const toml::node& id : *ids) {
        if (!id.is_string()) return r.error(full, "must be a list of rule ids (strings)");
        const std::string rule = *id.value<std::string>();
        if (!diagnose::find_rule(rule))
          return r.error(full, fmt::format("unknown rule '{}' (tracedoc diagnose --list-rules)", rule));
        if (std::find(b.forbid.begin(), b.forbid.end(), rule) == b.forbid.end()) b.forbid.push_back(rule);
      }
    } else if (name == "min_severity") {
      std::string s;
      TRACEDOC_RETURN_IF_ERROR(r.string(v, full, &s));
      if (!diagnose::parse_severity(s, &b.forbid_min_severity))
        return r.error(full, "must be info, warning or critical");
    } else if (name == "config") {
      std::string config;
      TRACEDOC_RETURN_IF_ERROR(r.string(v, full, &config));
      // The diagnose configuration names its own file and key; say which budget key led there.
      const Status st = diagnose::load_config(r.resolve(config), b.diagnose_options);
      if (!st.ok()) return r.error(full, st.message());
    } else {
      return r.error(full, "unknown key (expected forbid, min_severity or config)");
    }
  }
  return Status::Ok();
}

Status read_baseline(const Reader& r, const toml::table& t, Budget& b) {
  for (const auto& [key, v] : t) {
    const std::string name(key.str());
    const std::string full = "baseline." + name;
    if (name == "path") {
      std::string p;
      TRACEDOC_RETURN_IF_ERROR(r.string(v, full, &p));
      b.baseline_path = r.resolve(p);
    } else if (name == "step_p50_regression_max_pct") {
      TRACEDOC_RETURN_IF_ERROR(r.number(v, full, 0, kLargest, &b.step_p50_regression_max_pct));
    } else if (name == "step_p95_regression_max_pct") {
      TRACEDOC_RETURN_IF_ERROR(r.number(v, full, 0, kLargest, &b.step_p95_regression_max_pct));
    } else if (name == "busy_drop_max_pct") {
      TRACEDOC_RETURN_IF_ERROR(r.number(v, full, 0, 100, &b.busy_drop_max_pct));
    } else {
      return r.error(
          full,
          "unknown key (expected path, step_p50_regression_max_pct, step_p95_regression_max_pct or busy_drop_max_pct)");
    }
  }
  if (!b.baseline_path.empty() && !b.compares_baseline()) {
    return r.error("baseline.path",
                   "no baseline limit to compare with (step_p50_regression_max_pct, step_p95_regression_max_pct, "
                   "busy_drop_max_pct)");
  }
  return Status::Ok();
}

}  // namespace

bool Budget::empty() const {
  return !step_p50_max_ms && !step_p95_max_ms && !busy_min_pct && !idle_max_pct && !copy_share_max_pct &&
         !memory_peak_max_gb && !compute_imbalance_max && !skew_p50_max_ms && kernels.empty() && forbid.empty() &&
         !compares_baseline();
}

bool Budget::compares_baseline() const {
  return step_p50_regression_max_pct || step_p95_regression_max_pct || busy_drop_max_pct;
}

Result<std::string> baseline_trace_path(const Budget& b, const std::string& given, std::string_view given_name) {
  if (!given.empty() && !b.compares_baseline()) {
    return UsageError(fmt::format("check: {} {}: the budget {} sets no [baseline] limit", given_name, given, b.path));
  }
  if (!b.compares_baseline()) return std::string();
  const std::string path = given.empty() ? b.baseline_path : given;
  const std::string key = given.empty() ? fmt::format("{}: baseline.path", b.path) : std::string(given_name);
  if (path.empty()) {
    return BadInput(fmt::format("{}: baseline: the [baseline] limits need a baseline trace: set path, or pass {}",
                                b.path, given_name));
  }
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return BadInput(fmt::format("{}: no such file or directory: {}", key, path));
  return path;
}

Result<Budget> load_budget(const std::string& path) {
  const Reader r(path);
  TRACEDOC_ASSIGN_OR_RETURN(auto parsed, read_toml_file(path, "budget"));
  const toml::table& root = parsed;
  Budget b;
  b.path = path;
  for (const auto& [key, node] : root) {
    const std::string section(key.str());
    if (section == "kernel") {
      const toml::array* entries = node.as_array();
      if (!entries) return r.error("kernel", "must be an array of tables ([[kernel]])");
      for (size_t i = 0; i < entries->size(); ++i) TRACEDOC_RETURN_IF_ERROR(read_kernel(r, (*entries)[i], i, b));
      continue;
    }
    const toml::table* t = node.as_table();
    if (!t) return r.error(section, "expected a section [" + section + "]");
    const auto& sections = limit_sections();
    const auto limits =
        std::find_if(sections.begin(), sections.end(), [&](const LimitSection& s) { return section == s.name; });
    if (limits != sections.end()) {
      TRACEDOC_RETURN_IF_ERROR(read_limits(r, *t, *limits, b));
    } else if (section == "findings") {
      TRACEDOC_RETURN_IF_ERROR(read_findings(r, *t, b));
    } else if (section == "baseline") {
      TRACEDOC_RETURN_IF_ERROR(read_baseline(r, *t, b));
    } else {
      return r.error(section,
                     "unknown section (expected [steps], [gpu], [copies], [memory], [ranks], [[kernel]], [findings] or "
                     "[baseline])");
    }
  }
  // A gate that checks nothing passes whatever the trace holds: a typo in a path or a section name
  // must not turn a CI gate green.
  if (b.empty()) {
    return BadInput(fmt::format(
        "{}: the budget sets no limits, so it would check nothing (set one in [steps], [gpu], [copies], [memory], "
        "[ranks], [[kernel]], [findings] or [baseline]; docs/check.md)",
        path));
  }
  // One set of steps for every figure: the budget's marker, else the diagnose configuration's.
  if (b.step_marker.empty()) b.step_marker = b.diagnose_options.steps.marker;
  return b;
}

}  // namespace tracedoc::budget
