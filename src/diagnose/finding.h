// A diagnosis finding: a named performance problem with the evidence a sceptic can check on the
// timeline, the time that fixing it would save, and what to change.
//
// Rule ids are stable: budgets (`tracedoc check`, `forbid = [...]`) and CI scripts refer to them.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/offender.h"
#include "model/trace.h"

namespace tracedoc::diagnose {

enum class Severity : uint8_t { kInfo = 0, kWarning = 1, kCritical = 2 };
const char* severity_name(Severity s);  // "info", "warning", "critical"
bool parse_severity(std::string_view text, Severity* out);
// Severity from a share of the time basis: critical at `critical` or more, warning at `warning`.
Severity severity_for(double share, double warning, double critical);

// A number the finding rests on, with its unit ("ns", "%", "bytes", "count", "GB/s", "x").
struct Figure {
  std::string key;  // snake_case, stable (JSON key)
  double value = 0;
  std::string unit;
};

// One of the worst instances or groups behind the finding (analysis/offender.h).
using tracedoc::Offender;

// Where to look on the timeline: [start, end] on a device/stream or a CPU thread.
struct TimeRange {
  TimeNs start = 0, end = 0;
  std::string where;  // "rank 0 GPU 0", "pid 4242 GPU 0 stream 7", "thread 4242"
  std::string label;  // what happens there
};

// How a time-based finding was rated on its time basis, kept so that it can be rated again on
// another: a job's basis, when the finding was found in one rank's part (diagnose/parts.h).
struct Rating {
  int64_t savings_ns = 0;  // the estimate before the clip to the basis
  double warning = 0, critical = 0;
  // A finding kept only while `gate_ns` (the savings when gate_on_savings) is at least `gate_share`
  // of the basis; gate_share 0: no such condition.
  int64_t gate_ns = 0;
  double gate_share = 0;
  bool gate_on_savings = false;
};

struct Finding {
  std::string id;  // the rule id
  Severity severity = Severity::kInfo;
  double confidence = 0.5;   // 0..1; labelled low (< 0.5) / medium (< 0.8) / high
  std::string scope;         // what it concerns: "rank 0 GPU 0", "pid 4242", "trace"
  std::string title;         // one line with the key number
  bool time_based = true;    // false: a problem of another kind (memory), rated by its own severity
  int64_t savings_ns = 0;    // estimated time saved by the remedy (an upper bound, not additive)
  double savings_share = 0;  // savings over the time basis (steps, else span)
  std::vector<Figure> figures;
  std::vector<Offender> offenders;
  std::vector<TimeRange> ranges;
  std::string remedy;
  Rating rating;  // not printed
};

const char* confidence_label(double confidence);  // "low", "medium", "high"

}  // namespace tracedoc::diagnose
