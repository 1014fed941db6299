#include "ingest/ncu_csv_reader.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <map>
#include <optional>
#include <vector>

#include "common/input_file.h"
#include "common/memory_budget.h"
#include "ingest/ncu_report_reader.h"

namespace tracedoc {

namespace {

using Record = std::vector<std::string>;

// RFC 4180 records: quoted fields may hold commas, doubled quotes and line breaks. Lines that start
// with "==" outside a field (ncu's ==PROF== and ==WARNING== lines) are not records.
std::vector<Record> csv_records(std::string_view text) {
  std::vector<Record> out;
  Record record;
  std::string field;
  bool quoted = false, at_line_start = true;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (at_line_start && !quoted && text.substr(i, 2) == "==") {
      const size_t end = text.find('\n', i);
      i = end == std::string_view::npos ? text.size() : end;
      continue;
    }
    at_line_start = false;
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        field += '"', ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        field += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      record.push_back(std::move(field)), field.clear();
    } else if (c == '\n' || c == '\r') {
      if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
      record.push_back(std::move(field)), field.clear();
      if (!(record.size() == 1 && record[0].empty())) out.push_back(std::move(record));
      record.clear();
      at_line_start = true;
    } else {
      field += c;
    }
  }
  if (!field.empty() || !record.empty()) {
    record.push_back(std::move(field));
    out.push_back(std::move(record));
  }
  return out;
}

// The text after a UTF-8 byte order mark, which Excel writes at the start of a CSV file it saves.
std::string_view without_bom(std::string_view text) {
  constexpr std::string_view kBom = "\xEF\xBB\xBF";
  return text.starts_with(kBom) ? text.substr(kBom.size()) : text;
}

// ncu's printed units, as multiples of the base unit of the metrics the answers read.
std::optional<double> unit_scale(std::string_view unit) {
  static const std::map<std::string_view, double> scales = {{"ns", 1},
                                                            {"nsecond", 1},
                                                            {"us", 1e3},
                                                            {"usecond", 1e3},
                                                            {"ms", 1e6},
                                                            {"msecond", 1e6},
                                                            {"s", 1e9},
                                                            {"second", 1e9},
                                                            {"byte", 1},
                                                            {"Kbyte", 1e3},
                                                            {"Mbyte", 1e6},
                                                            {"Gbyte", 1e9},
                                                            {"Tbyte", 1e12},
                                                            {"byte/s", 1},
                                                            {"Kbyte/s", 1e3},
                                                            {"Mbyte/s", 1e6},
                                                            {"Gbyte/s", 1e9},
                                                            {"Tbyte/s", 1e12},
                                                            {"byte/second", 1},
                                                            {"Kbyte/second", 1e3},
                                                            {"Mbyte/second", 1e6},
                                                            {"Gbyte/second", 1e9},
                                                            {"Tbyte/second", 1e12},
                                                            {"hz", 1},
                                                            {"Khz", 1e3},
                                                            {"Mhz", 1e6},
                                                            {"Ghz", 1e9},
                                                            {"cycle/nsecond", 1e9},
                                                            {"cycle/usecond", 1e6}};
  const auto it = scales.find(unit);
  if (it == scales.end()) return std::nullopt;
  return it->second;
}

// The details page's display names of the metrics the answers read, per section.
const std::map<std::pair<std::string_view, std::string_view>, std::string_view>& display_names() {
  static const std::map<std::pair<std::string_view, std::string_view>, std::string_view> names = {
      {{"GPU Speed Of Light Throughput", "Duration"}, "gpu__time_duration.sum"},
      {{"GPU Speed Of Light Throughput", "Compute (SM) Throughput"},
       "sm__throughput.avg.pct_of_peak_sustained_elapsed"},
      {{"GPU Speed Of Light Throughput", "Memory Throughput"},
       "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed"},
      {{"GPU Speed Of Light Throughput", "DRAM Throughput"}, "dram__throughput.avg.pct_of_peak_sustained_elapsed"},
      {{"Launch Statistics", "Registers Per Thread"}, "launch__registers_per_thread"},
      {{"Launch Statistics", "Static Shared Memory Per Block"}, "launch__shared_mem_per_block_static"},
      {{"Launch Statistics", "Dynamic Shared Memory Per Block"}, "launch__shared_mem_per_block_dynamic"},
      {{"Occupancy", "Block Limit Registers"}, "launch__occupancy_limit_registers"},
      {{"Occupancy", "Block Limit Shared Mem"}, "launch__occupancy_limit_shared_mem"},
      {{"Occupancy", "Block Limit Warps"}, "launch__occupancy_limit_warps"},
      {{"Occupancy", "Block Limit SM"}, "launch__occupancy_limit_blocks"},
      {{"Occupancy", "Block Limit Barriers"}, "launch__occupancy_limit_barriers"},
      {{"Occupancy", "Theoretical Occupancy"}, "sm__maximum_warps_per_active_cycle_pct"},
      {{"Occupancy", "Achieved Occupancy"}, "sm__warps_active.avg.pct_of_peak_sustained_active"},
  };
  return names;
}

// "13,485" -> 13485 and "n/a" -> absent; text that is not a number stays text.
NcuValue parse_value(std::string_view printed, std::string_view unit) {
  NcuValue v;
  if (printed.empty() || printed == "n/a") return v;
  std::string digits;
  for (char c : printed) {
    if (c != ',') digits += c;
  }
  double x = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), x);
  if (ec != std::errc() || end != digits.data() + digits.size()) {
    v.kind = NcuValue::Kind::kString, v.text.assign(printed);
    return v;
  }
  v.kind = NcuValue::Kind::kDouble;
  v.real = x * unit_scale(unit).value_or(1.0);
  return v;
}

// "(224, 1, 1)" -> {224, 1, 1}; zeros where it says otherwise.
std::array<uint64_t, 3> parse_xyz(std::string_view text) {
  std::array<uint64_t, 3> out{};
  size_t k = 0;
  for (size_t i = 0; i < text.size() && k < 3; ++i) {
    if (text[i] < '0' || text[i] > '9') continue;
    const auto [end, ec] = std::from_chars(text.data() + i, text.data() + text.size(), out[k]);
    if (ec != std::errc()) break;
    i = static_cast<size_t>(end - text.data());
    ++k;
  }
  return out;
}

uint32_t message_type(std::string_view rule_type) {
  if (rule_type == "OPT") return 4;
  if (rule_type == "WRN" || rule_type == "WARN") return 2;
  if (rule_type == "ERR" || rule_type == "ERROR") return 3;
  if (rule_type == "INF" || rule_type == "OK") return 1;
  return 0;
}

class CsvReport {
 public:
  explicit CsvReport(NcuReport& report) : report_(report) {}

  NcuResult& launch(std::string_view id) {
    auto [it, fresh] = launch_of_id_.try_emplace(std::string(id), report_.results.size());
    if (fresh) report_.results.emplace_back();
    return report_.results[it->second];
  }
  void add(NcuResult& r, std::string_view name, std::string_view unit, std::string_view printed) {
    NcuMetric& m = r.metrics.emplace_back();
    m.name = name_id(name);
    m.unit.assign(unit);
    m.value = parse_value(printed, unit);
  }
  // Metrics by name id; one printed twice for a launch (by its name and by its display name) is
  // kept once, as first printed.
  void finish() {
    for (NcuResult& r : report_.results) {
      std::stable_sort(r.metrics.begin(), r.metrics.end(),
                       [](const NcuMetric& a, const NcuMetric& b) { return a.name < b.name; });
      r.metrics.erase(std::unique(r.metrics.begin(), r.metrics.end(),
                                  [](const NcuMetric& a, const NcuMetric& b) { return a.name == b.name; }),
                      r.metrics.end());
    }
    for (size_t i = 0; i < report_.metric_names.size(); ++i)
      report_.name_index.emplace(report_.metric_names[i], static_cast<uint32_t>(i));
    drop_unusable_values(report_);
  }

 private:
  uint32_t name_id(std::string_view name) {
    auto [it, fresh] = ids_.try_emplace(std::string(name), static_cast<uint32_t>(report_.metric_names.size()));
    if (fresh) report_.metric_names.emplace_back(name);
    return it->second;
  }
  NcuReport& report_;
  std::map<std::string, size_t> launch_of_id_;
  std::map<std::string, uint32_t> ids_;
};

}  // namespace

bool looks_like_ncu_csv(std::string_view text) {
  text = without_bom(text);
  for (const Record& r : csv_records(text.substr(0, 1 << 16))) {
    if (!r.empty()) return r[0] == "ID" && std::find(r.begin(), r.end(), "Kernel Name") != r.end();
  }
  return false;
}

Result<NcuReport> read_ncu_csv_text(std::string_view text, const std::string& name) {
  const std::vector<Record> records = csv_records(without_bom(text));
  size_t header = 0;
  while (header < records.size() && (records[header].empty() || records[header][0] != "ID")) ++header;
  if (header == records.size())
    return BadInput(fmt::format("{}: not an Nsight Compute CSV export (no header starting with \"ID\")", name));
  const Record& h = records[header];
  auto column = [&](std::string_view title) -> std::optional<size_t> {
    const auto it = std::find(h.begin(), h.end(), title);
    return it == h.end() ? std::nullopt : std::optional<size_t>(static_cast<size_t>(it - h.begin()));
  };
  const auto kernel = column("Kernel Name");
  if (!kernel) return BadInput(fmt::format("{}: an ncu CSV export without a \"Kernel Name\" column", name));
  const auto metric = column("Metric Name"), value = column("Metric Value");
  if (metric.has_value() != value.has_value()) {
    return BadInput(fmt::format("{}: an ncu CSV export with \"{}\" but no \"{}\" column", name,
                                metric ? "Metric Name" : "Metric Value", metric ? "Metric Value" : "Metric Name"));
  }
  const auto grid = column("Grid Size"), block = column("Block Size"), context = column("Context"),
             stream = column("Stream"), process = column("Process ID"), section = column("Section Name"),
             unit = column("Metric Unit"), rule_name = column("Rule Name"), rule_type = column("Rule Type"),
             rule_text = column("Rule Description");
  auto cell = [](const Record& r, std::optional<size_t> c) -> std::string_view {
    return c && *c < r.size() ? std::string_view(r[*c]) : std::string_view();
  };
  auto to_u32 = [](std::string_view s) {
    uint32_t v = 0;
    std::from_chars(s.data(), s.data() + s.size(), v);
    return v;
  };

  NcuReport report;
  report.path = name;
  CsvReport csv(report);
  // The wide form: every column that is not one of the launch's own is a metric; a row without an
  // ID under the header holds their units.
  const std::array<std::string_view, 11> launch_columns = {
      "ID",     "Process ID", "Process Name", "Host Name", "Kernel Name", "Context",
      "Stream", "Block Size", "Grid Size",    "Device",    "CC"};
  Record units;
  for (size_t i = header + 1; i < records.size(); ++i) {
    const Record& r = records[i];
    if (r.empty() || (r.size() == 1 && r[0].empty())) continue;
    if (!metric && r[0].empty()) {
      units = r;
      continue;
    }
    NcuResult& launch = csv.launch(r[0]);
    if (launch.demangled_name.empty()) {
      launch.demangled_name.assign(cell(r, kernel));
      launch.grid = parse_xyz(cell(r, grid));
      launch.block = parse_xyz(cell(r, block));
      launch.context = to_u32(cell(r, context));
      launch.stream = to_u32(cell(r, stream));
      launch.process_id = to_u32(cell(r, process));
    }
    if (!metric) {
      for (size_t c = 0; c < h.size() && c < r.size(); ++c) {
        if (std::find(launch_columns.begin(), launch_columns.end(), h[c]) != launch_columns.end()) continue;
        csv.add(launch, h[c], c < units.size() ? std::string_view(units[c]) : std::string_view(), r[c]);
      }
      continue;
    }
    if (!cell(r, rule_name).empty()) {
      NcuRuleResult& rule = launch.rules.emplace_back();
      rule.identifier.assign(cell(r, rule_name));
      rule.section.assign(cell(r, section));
      rule.messages.push_back({message_type(cell(r, rule_type)), std::string(cell(r, rule_text))});
      continue;
    }
    if (cell(r, metric).empty()) continue;
    csv.add(launch, cell(r, metric), cell(r, unit), cell(r, value));
    const auto mapped = display_names().find({cell(r, section), cell(r, metric)});
    if (mapped != display_names().end()) csv.add(launch, mapped->second, cell(r, unit), cell(r, value));
  }
  csv.finish();
  if (report.results.empty()) return BadInput(fmt::format("{}: an ncu CSV export without a launch", name));
  return report;
}

Result<NcuReport> read_ncu_input(const std::string& path) {
  MemoryBudget::set_subject(path);
  TRACEDOC_ASSIGN_OR_RETURN(const std::string head, read_file_head(path, 1 << 16));
  if (is_ncu_report_bytes(head)) return read_ncu_report(path);
  if (looks_like_ncu_csv(head)) {
    // Held whole while it is read: text past 4 GiB is no export ncu writes.
    TRACEDOC_ASSIGN_OR_RETURN(const std::string text,
                              read_file(path, {.max_bytes = uint64_t{4} << 30, .what = "ncu CSV export"}));
    return read_ncu_csv_text(text, path);
  }
  return BadInput(fmt::format("{}: not an Nsight Compute report (no NVR header) nor an ncu CSV export", path));
}

}  // namespace tracedoc
