#include "model/ncu_report.h"

#include <algorithm>
#include <cstdint>
#include <limits>

namespace tracedoc {

const char* NcuValue::kind_name(Kind k) {
  switch (k) {
    case Kind::kNone: return "none";
    case Kind::kString: return "string";
    case Kind::kFloat: return "float";
    case Kind::kDouble: return "double";
    case Kind::kUint32: return "uint32";
    case Kind::kUint64: return "uint64";
  }
  return "none";
}

const char* NcuRuleMessage::type_name(uint32_t type) {
  switch (type) {
    case 1: return "ok";
    case 2: return "warning";
    case 3: return "error";
    case 4: return "optimization";
    default: return "none";
  }
}

const std::string& NcuResult::name() const {
  if (!demangled_name.empty()) return demangled_name;
  return function_name.empty() ? mangled_name : function_name;
}

const NcuMetric* NcuReport::metric(const NcuResult& result, std::string_view name) const {
  const auto it = name_index.find(name);
  if (it == name_index.end()) return nullptr;
  const auto m = std::lower_bound(result.metrics.begin(), result.metrics.end(), it->second,
                                  [](const NcuMetric& a, uint32_t id) { return a.name < id; });
  return m != result.metrics.end() && m->name == it->second ? &*m : nullptr;
}

double NcuReport::number(const NcuResult& result, std::string_view name) const {
  const NcuMetric* m = metric(result, name);
  return m != nullptr && m->value.numeric() ? m->value.number() : std::numeric_limits<double>::quiet_NaN();
}

void drop_unusable_values(NcuReport& report) {
  // The metrics the answers read as counts of something, never below zero.
  static constexpr std::string_view kCounts[] = {"gpu__time_duration.sum",
                                                 "launch__registers_per_thread",
                                                 "launch__shared_mem_per_block_static",
                                                 "launch__shared_mem_per_block_dynamic",
                                                 "dram__bytes.sum",
                                                 "dram__bytes_read.sum",
                                                 "dram__bytes_write.sum"};
  std::vector<bool> counts(report.metric_names.size(), false);
  for (std::string_view name : kCounts) {
    const auto it = report.name_index.find(name);
    if (it != report.name_index.end() && it->second < counts.size()) counts[it->second] = true;
  }
  constexpr double kInt64Range = 9223372036854775808.0;  // 2^63
  for (NcuResult& r : report.results) {
    for (NcuMetric& m : r.metrics) {
      NcuValue& v = m.value;
      bool unusable = false;
      if (v.kind == NcuValue::Kind::kFloat || v.kind == NcuValue::Kind::kDouble) {
        unusable = !(v.real > -kInt64Range && v.real < kInt64Range) ||
                   (v.real < 0 && m.name < counts.size() && counts[m.name]);
      } else if (v.kind == NcuValue::Kind::kUint64) {
        unusable = v.integer > static_cast<uint64_t>(INT64_MAX);
      }
      if (!unusable) continue;
      v = NcuValue{};
      ++report.unusable_values;
    }
  }
}

const NcuDevice* NcuReport::device(uint32_t id) const {
  for (const NcuDevice& d : devices) {
    if (d.id == id) return &d;
  }
  return nullptr;
}

}  // namespace tracedoc
