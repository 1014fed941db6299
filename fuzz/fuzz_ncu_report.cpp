// libFuzzer target: Nsight Compute report bytes (.ncu-rep, or .ncu-repz in zstd) ->
// read_ncu_report_bytes -> every table of `tracedoc ncu`, then the report as a timeline (summary,
// diagnosis). The body is tracedoc::fuzz::fuzz_ncu_report
// (fuzz_targets.h), shared with the regression test.
#include <cstddef>
#include <cstdint>

#include "fuzz_targets.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return tracedoc::fuzz::fuzz_ncu_report({reinterpret_cast<const char*>(data), size});
}
