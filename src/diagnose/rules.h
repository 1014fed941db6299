// The diagnosis rules: one fingerprint each, with documented, configurable thresholds.
//
// Every rule has the parameters `warning` and `critical` (shares of the time basis, context.h, at
// which its estimated savings make a finding a warning or critical; below `warning` it is info) and
// its own thresholds, listed with their defaults in all_rules() and in docs/diagnose.md. A rule
// appends zero or more findings; the engine orders them.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "diagnose/context.h"
#include "diagnose/finding.h"

namespace tracedoc::diagnose {

struct Param {
  std::string name;
  double value = 0;
  std::string doc;
};

// A rule's parameters after defaults and configuration.
class Params {
 public:
  explicit Params(std::map<std::string, double> values) : values_(std::move(values)) {}
  double get(std::string_view name) const;  // a name the rule declared
  double warning() const { return get("warning"); }
  double critical() const { return get("critical"); }

 private:
  std::map<std::string, double> values_;
};

using RuleFn = void (*)(Context&, const Params&, std::vector<Finding>&);

struct RuleDef {
  std::string id;
  std::string summary;        // one line: what it detects
  std::vector<Param> params;  // the rule's own; warning and critical are added by all_rules()
  RuleFn run = nullptr;
};

// Every rule, by id.
const std::vector<RuleDef>& all_rules();
const RuleDef* find_rule(std::string_view id);

// The rules, grouped by the analyses they read (rules_*.cpp).
void gpu_idle(Context&, const Params&, std::vector<Finding>&);
void comb_pattern(Context&, const Params&, std::vector<Finding>&);
void dataloader_bound(Context&, const Params&, std::vector<Finding>&);
void launch_bound(Context&, const Params&, std::vector<Finding>&);
void sync_stall(Context&, const Params&, std::vector<Finding>&);
void host_waits(Context&, const Params&, std::vector<Finding>&);
void long_tail(Context&, const Params&, std::vector<Finding>&);
void kernel_config(Context&, const Params&, std::vector<Finding>&);
void layout_overhead(Context&, const Params&, std::vector<Finding>&);
void tensor_cores_unused(Context&, const Params&, std::vector<Finding>&);
void staircase_memory(Context&, const Params&, std::vector<Finding>&);
void memcpy_heavy(Context&, const Params&, std::vector<Finding>&);
void pageable_memcpy(Context&, const Params&, std::vector<Finding>&);
void exposed_comm(Context&, const Params&, std::vector<Finding>&);
void straggler(Context&, const Params&, std::vector<Finding>&);

}  // namespace tracedoc::diagnose
