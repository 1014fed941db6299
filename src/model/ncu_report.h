// An Nsight Compute report in memory: one result per profiled kernel launch, each with its launch
// shape, its identity (names, context, stream) and every metric ncu stored, value kind and all, with
// ncu's own rule results. Read by ingest/ncu_report_reader.h; analysis/ncu_answers.h derives the
// answers (occupancy and its limiter, coalescing, bank conflicts, stall reasons, roofline).
//
// A report holds tens to hundreds of results of about a thousand metrics each, so results are a
// plain list; a metric names itself by an index into the report's metric-name table (the report's
// own string table), and each result keeps its metrics sorted by that index for lookup.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <map>
#include <vector>

namespace tracedoc {

// One value as ncu stored it: the kind says which member holds it.
struct NcuValue {
  enum class Kind : uint8_t { kNone, kString, kFloat, kDouble, kUint32, kUint64 };
  Kind kind = Kind::kNone;
  double real = 0;       // kFloat (widened exactly) and kDouble
  uint64_t integer = 0;  // kUint32 and kUint64
  std::string text;      // kString

  bool numeric() const { return kind != Kind::kNone && kind != Kind::kString; }
  // The value as a number (integers converted; 0 for strings and none).
  double number() const {
    if (kind == Kind::kUint32 || kind == Kind::kUint64) return static_cast<double>(integer);
    return real;
  }
  static const char* kind_name(Kind k);
};

struct NcuMetric {
  uint32_t name = 0;  // index into NcuReport::metric_names
  NcuValue value;     // kNone when ncu stored only per-instance values (or a CSV printed n/a)
  std::string unit;   // CSV exports: the unit ncu printed ("us", "Mbyte"); reports store none
  // Per-instance values (per SM, per stall reason, per source line ...): (correlation id, value).
  std::vector<std::pair<NcuValue, NcuValue>> instances;
};

struct NcuRuleMessage {
  // ncu's message types, as stored: 0 none, 1 ok (information), 2 warning, 3 error, 4 optimization.
  uint32_t type = 0;
  std::string text;
  static const char* type_name(uint32_t type);
};

struct NcuRuleResult {
  std::string identifier;    // "UncoalescedGlobalAccess"
  std::string display_name;  // "Uncoalesced Global Accesses"
  std::string section;       // the section it belongs to ("SourceCounters")
  std::vector<NcuRuleMessage> messages;
};

struct NcuResult {
  uint32_t thread_id = 0, process_id = 0;
  uint64_t api_call_id = 0, kernel_id = 0;
  std::string mangled_name, function_name, demangled_name;
  std::array<uint64_t, 3> grid{}, block{};  // grid in blocks, block in threads
  uint32_t context = 0, stream = 0;
  uint64_t creation_time = 0;  // Unix seconds
  // The NVTX state at launch: the domains the process had registered, by id ("<default domain>"
  // first), and the thread ncu recorded it for. Entries of ranges open at launch are counted in
  // nvtx_open_entries: no shared report has one, so their layout is unconfirmed and not decoded.
  std::vector<std::pair<uint64_t, std::string>> nvtx_domains;
  uint64_t nvtx_thread = 0;
  int64_t nvtx_open_entries = 0;
  std::vector<NcuMetric> metrics;    // by name index
  std::vector<NcuRuleResult> rules;  // in the order ncu ran them

  // The display name: the demangled name, else the function name, else the mangled one.
  const std::string& name() const;
};

struct NcuDevice {
  uint32_t id = 0;
  std::string name;                                          // "NVIDIA H100 PCIe"
  std::vector<std::pair<std::string, NcuValue>> attributes;  // device__attribute_*, as stored
};

struct NcuReport {
  std::string path;
  uint32_t version = 0;                   // the container's FileHeader version
  std::string tool_version;               // "Nsight Compute Target" of the session details, when stored
  std::vector<std::string> metric_names;  // the report's string table
  std::vector<NcuDevice> devices;
  std::vector<NcuResult> results;  // in file order: the order ncu profiled them
  int64_t skipped_fields = 0;      // fields of known messages that this reader does not know
  // Metric values no real report holds, read as absent (drop_unusable_values): not finite, past
  // the int64 range (2^63: more nanoseconds, bytes or instructions than any launch has), or negative
  // where the metric counts (a duration, registers, shared memory, bytes).
  int64_t unusable_values = 0;

  // The metric of `result` called `name`, or null when the result lacks it.
  const NcuMetric* metric(const NcuResult& result, std::string_view name) const;
  // Its value as a number, or NaN when absent or not numeric.
  double number(const NcuResult& result, std::string_view name) const;
  const NcuDevice* device(uint32_t id) const;

  // Built by the reader once the names are known (metric() looks names up through it).
  std::map<std::string, uint32_t, std::less<>> name_index;
};

// Makes absent, and counts in unusable_values, the metric values described there. Both readers
// call it once the names are known, so the answers never turn such a value into an integer.
void drop_unusable_values(NcuReport& report);

}  // namespace tracedoc
