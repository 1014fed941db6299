// The diagnosis rules: one fingerprint each, with documented, configurable thresholds.
//
// Every rule has the parameters `warning` and `critical` (shares of the time basis, context.h, at
// which its estimated savings make a finding a warning or critical; below `warning` it is info) and
// its own thresholds, listed with their defaults in all_rules() and in docs/diagnose.md. A rule
// appends zero or more findings; the engine orders them.
#pragma once

#include <array>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/intervals.h"
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

// What the rules that compare a job's ranks with each other read. Gathered per trace (job_inputs)
// and joined in rank order (add_job_inputs), so that such a rule sees the same whole job whether
// the job was read in one process or rank by rank (diagnose/parts.h).
struct OwnerWork {  // one rank (owner): its GPUs' computation and communication time
  std::string label;
  int64_t compute_ns = 0, communication_ns = 0;
};
struct KernelInstances {  // one kernel (name and launch configuration) and its instances
  std::string name;
  std::array<int32_t, 6> launch{};  // grid x, y, z, block x, y, z
  std::vector<int64_t> durations;   // every instance's, ascending
  std::vector<Interval> longest;    // the kLongestKept longest, longest first (then earliest)
  static constexpr size_t kLongestKept = 5;
};
struct JobInputs {
  std::vector<OwnerWork> owners;         // in owner order
  std::vector<KernelInstances> kernels;  // by name, then launch configuration
};
JobInputs job_inputs(Context& ctx);
// Adds a later rank's inputs (its times already on the job's clock).
void add_job_inputs(JobInputs& into, JobInputs rank);

using JobRuleFn = void (*)(const JobInputs&, const Params&, int64_t basis_ns, std::vector<Finding>&);

struct RuleDef {
  std::string id;
  std::string summary;             // one line: what it detects
  std::vector<Param> params;       // the rule's own; warning and critical are added by all_rules()
  RuleFn run = nullptr;            // a rule over each rank on its own (its GPUs, its threads)
  JobRuleFn run_on_job = nullptr;  // or one comparing the ranks (reading JobInputs)
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
void cpu_bound_during_idle(Context&, const Params&, std::vector<Finding>&);
void sm_underused(Context&, const Params&, std::vector<Finding>&);
void oversubscribed_cpu(Context&, const Params&, std::vector<Finding>&);
void long_tail(const JobInputs&, const Params&, int64_t basis_ns, std::vector<Finding>&);
void kernel_config(Context&, const Params&, std::vector<Finding>&);
void layout_overhead(Context&, const Params&, std::vector<Finding>&);
void tensor_cores_unused(Context&, const Params&, std::vector<Finding>&);
void staircase_memory(Context&, const Params&, std::vector<Finding>&);
void memcpy_heavy(Context&, const Params&, std::vector<Finding>&);
void pageable_memcpy(Context&, const Params&, std::vector<Finding>&);
void exposed_comm(Context&, const Params&, std::vector<Finding>&);
// What Nsight Compute measured inside the kernels (rules_ncu.cpp): quiet without ncu data.
void uncoalesced_access(Context&, const Params&, std::vector<Finding>&);
void bank_conflicts(Context&, const Params&, std::vector<Finding>&);
void barrier_stalls(Context&, const Params&, std::vector<Finding>&);
void occupancy_limited(Context&, const Params&, std::vector<Finding>&);
void memory_bound(Context&, const Params&, std::vector<Finding>&);
void compute_bound(Context&, const Params&, std::vector<Finding>&);
// How close the model comes to the GPU's peak (rules_flops.cpp): quiet without recorded shapes.
void low_mfu(Context&, const Params&, std::vector<Finding>&);
void gemm_shape(Context&, const Params&, std::vector<Finding>&);
void straggler(const JobInputs&, const Params&, int64_t basis_ns, std::vector<Finding>&);

}  // namespace tracedoc::diagnose
