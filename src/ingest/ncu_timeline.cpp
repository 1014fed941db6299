#include "ingest/ncu_timeline.h"

#include <cmath>
#include <fstream>
#include <map>
#include <memory>
#include <set>

#include "ingest/ncu_csv_reader.h"
#include "ingest/ncu_report_reader.h"
#include "model/kernel_names.h"
#include "model/table_sort.h"

namespace tracedoc {

namespace {

// A day: no kernel ncu profiled runs longer, and a million such stay far inside int64 ns.
constexpr double kLongestKernelNs = 86400e9;

int32_t as_int32(double v) {
  return std::isnan(v) || v < 0 || v > static_cast<double>(INT32_MAX) ? kNoInt32 : static_cast<int32_t>(v);
}
int32_t as_int32(uint64_t v) { return v > static_cast<uint64_t>(INT32_MAX) ? kNoInt32 : static_cast<int32_t>(v); }

double attribute(const NcuDevice& d, std::string_view name) {
  for (const auto& [key, value] : d.attributes) {
    if (key == name && value.numeric()) return value.number();
  }
  return std::nan("");
}

// The report's devices, and which of them ran a result (by the display name ncu stored with it;
// the first device where the result names none).
class Devices {
 public:
  explicit Devices(const NcuReport& report, Trace& t) : report_(report) {
    for (const NcuDevice& d : report.devices) {
      DeviceInfo info;
      info.id = static_cast<int32_t>(d.id);
      info.name = t.strings.intern(d.name);
      info.sm_count = std::max(0, as_int32(attribute(d, "device__attribute_multiprocessor_count")));
      info.compute_major = std::max(0, as_int32(attribute(d, "device__attribute_compute_capability_major")));
      info.compute_minor = std::max(0, as_int32(attribute(d, "device__attribute_compute_capability_minor")));
      const double clock_khz = attribute(d, "device__attribute_clock_rate");  // the SMs' peak clock
      info.clock_hz = std::isnan(clock_khz) || clock_khz <= 0 ? 0 : static_cast<int64_t>(clock_khz) * 1000;
      const double memory = attribute(d, "device__attribute_total_global_memory");  // ncu's name, where stored
      info.total_memory = std::isnan(memory) ? 0 : static_cast<int64_t>(memory);
      by_name_.try_emplace(d.name, info.id);
      t.devices.push_back(info);
    }
  }
  int32_t of(const NcuResult& r) const {
    const NcuMetric* m = report_.metric(r, "device__attribute_display_name");
    if (m != nullptr && m->value.kind == NcuValue::Kind::kString) {
      const auto it = by_name_.find(m->value.text);
      if (it != by_name_.end()) return it->second;
    }
    return report_.devices.empty() ? 0 : static_cast<int32_t>(report_.devices.front().id);
  }

 private:
  const NcuReport& report_;
  std::map<std::string, int32_t, std::less<>> by_name_;
};

}  // namespace

bool looks_like_ncu_input(std::string_view head) { return is_ncu_report_bytes(head) || looks_like_ncu_csv(head); }

Trace ncu_report_timeline(NcuReport report) {
  Trace t;
  t.source.path = report.path;
  t.source.format = "ncu-report";
  t.source.product_version = report.tool_version;
  t.source.tables.insert("CUPTI_ACTIVITY_KIND_KERNEL");
  if (!report.results.empty() && report.results.front().creation_time > 0)
    t.source.session_start_utc_ns = static_cast<int64_t>(report.results.front().creation_time) * 1'000'000'000;
  const Devices devices(report, t);
  std::map<int32_t, TimeNs> clock;  // per device: where its next kernel starts
  std::set<uint32_t> processes;
  KernelTable& k = t.kernels;
  k.reserve(report.results.size());
  for (const NcuResult& r : report.results) {
    const double duration = report.number(r, "gpu__time_duration.sum");
    // A launch without a usable duration (a section set without it, a damaged value) has no place
    // on the timeline; it stays in the report, unmatched.
    if (!(duration >= 0 && duration <= kLongestKernelNs)) {
      ++t.warnings.missing_times;
      continue;
    }
    const int32_t device = devices.of(r);
    TimeNs& at = clock[device];
    const TimeNs start = at;
    at += std::llround(duration);
    const int64_t gpid = make_global_tid(0, r.process_id, 0);
    if (processes.insert(r.process_id).second)
      t.processes.push_back(ProcessInfo{gpid, static_cast<int64_t>(r.process_id), kNoStr});
    const StrId name = t.strings.intern(r.name());
    k.start.push_back(start), k.end.push_back(at), k.global_pid.push_back(gpid);
    k.correlation.push_back(r.api_call_id > static_cast<uint64_t>(INT64_MAX) ? kNoValue
                                                                             : static_cast<int64_t>(r.api_call_id));
    k.device.push_back(device), k.context.push_back(as_int32(uint64_t{r.context})), k.green_context.push_back(kNoGreen);
    k.stream.push_back(as_int32(uint64_t{r.stream}));
    k.name.push_back(name), k.short_name.push_back(t.strings.intern(short_kernel_name(r.name())));
    k.mangled_name.push_back(r.mangled_name.empty() ? kNoStr : t.strings.intern(r.mangled_name));
    k.grid_x.push_back(as_int32(r.grid[0])), k.grid_y.push_back(as_int32(r.grid[1])),
        k.grid_z.push_back(as_int32(r.grid[2]));
    k.block_x.push_back(as_int32(r.block[0])), k.block_y.push_back(as_int32(r.block[1])),
        k.block_z.push_back(as_int32(r.block[2]));
    k.registers_per_thread.push_back(as_int32(report.number(r, "launch__registers_per_thread")));
    k.static_smem.push_back(as_int32(report.number(r, "launch__shared_mem_per_block_static")));
    k.dynamic_smem.push_back(as_int32(report.number(r, "launch__shared_mem_per_block_dynamic")));
    k.graph_node_id.push_back(kNoValue);
  }
  sort_by_time(t);  // devices interleave
  t.ncu_reports.push_back(std::make_shared<const NcuReport>(std::move(report)));
  return t;
}

Result<Trace> read_ncu_timeline(const std::string& path) {
  TRACEDOC_ASSIGN_OR_RETURN(NcuReport report, read_ncu_input(path));
  return ncu_report_timeline(std::move(report));
}

}  // namespace tracedoc
