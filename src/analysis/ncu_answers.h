// What an Nsight Compute result says about its kernel, derived from the raw metrics ncu stored
// with the formulas of docs/ncu.md: the launch shape, occupancy and what limits it, how well global
// accesses coalesce, shared-memory bank conflicts, why warps stall, throughput against the device's
// peaks, and the roofline position. A figure whose metrics the report lacks (ncu's section set
// decides which were collected) is NaN, never guessed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/ncu_report.h"

namespace tracedoc {

struct NcuStall {
  std::string reason;     // "long_scoreboard", "barrier", ...
  double per_issue = 0;   // warps stalled for this reason per issued instruction (NaN without)
  double sample_pct = 0;  // share of the PC samples that found a warp stalled so (NaN without)
};

struct NcuAnswers {
  double duration_ns = 0;  // gpu__time_duration.sum
  int64_t registers_per_thread = 0;
  int64_t shared_mem_per_block = 0;             // static + dynamic, bytes
  double achieved_occupancy_pct = 0;            // sm__warps_active.avg.pct_of_peak_sustained_active
  double theoretical_occupancy_pct = 0;         // sm__maximum_warps_per_active_cycle_pct
  std::vector<std::string> occupancy_limiters;  // the smallest launch__occupancy_limit_* (ties: all)
  // Global memory: sectors per request, against the ideal of 4 (a warp of 4-byte accesses).
  double load_sectors_per_request = 0, store_sectors_per_request = 0;
  // Sectors beyond the ideal (memory_l2_theoretical_sectors_global - _ideal), and their share of all
  // global sectors: what ncu's UncoalescedGlobalAccess rule reports.
  double excessive_sectors = 0, excessive_sectors_pct = 0;
  // Shared memory: bank conflicts and their share of the shared wavefronts, loads and stores.
  double shared_load_conflicts = 0, shared_load_conflict_pct = 0;
  double shared_store_conflicts = 0, shared_store_conflict_pct = 0;
  std::vector<NcuStall> stalls;      // by stalls per issue (else PC-sample share), largest first
  double sm_throughput_pct = 0;      // sm__throughput.avg.pct_of_peak_sustained_elapsed
  double memory_throughput_pct = 0;  // gpu__compute_memory_throughput...
  double dram_throughput_pct = 0;
  double dram_bytes = 0;
  double flops = 0;                                       // FP16/32/64 adds, muls and 2x fmas (thread level)
  double flop_per_s = 0, arithmetic_intensity = 0;        // FLOP per DRAM byte
  double peak_flop_per_s = 0, peak_dram_bytes_per_s = 0;  // at the clocks ncu profiled at
  // Achieved FLOP/s as a share of the roof at the kernel's arithmetic intensity (the smaller of the
  // compute peak and intensity x DRAM peak), % : how near the roofline the kernel runs.
  double roofline_pct = 0;
  // "memory" below the roofline's ridge (peak FLOP/s over peak bytes/s), "compute" above; without
  // the roofline metrics, the side nearer its peak by throughput; "" when neither is known.
  std::string bound;
};

NcuAnswers ncu_answers(const NcuReport& report, const NcuResult& result);

// "registers+warps": the occupancy limiters, ties joined.
std::string occupancy_limiter_text(const NcuAnswers& a);
// The answers in one line, for a summary row or a timeline hover: "memory bound, 19% of the roof;
// occupancy 78.5% (theoretical 100.0%, limited by registers+warps); 16.0 sectors per global load (43% excess);
// stalls long_scoreboard, barrier, short_scoreboard". Figures ncu did not collect are left out.
std::string ncu_answers_line(const NcuAnswers& a);

}  // namespace tracedoc
