// PyTorch's step ranges: torch.profiler names each iteration's range "ProfilerStep#N". One matcher
// for every reader and analysis, so a step the Kineto reader found is a step to the diagnosis, the
// diff and the trace generator too.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace tracedoc {

// The N of a range named "ProfilerStep#N": "ProfilerStep", blanks (spaces, tabs), '#', blanks,
// decimal digits and trailing blanks (the profiler's pattern ProfilerStep\s*#\s*\d+ as HTA matches
// it, and the TensorBoard plugin's int(name.split('#')[1]), which allows blanks around the digits),
// with or without emit_nvtx's attributes ("ProfilerStep#3, op_id = 1", model/emit_nvtx_names.h).
// nullopt for any other name and for an N past int64.
std::optional<int64_t> profiler_step_number(std::string_view name);
inline bool is_profiler_step(std::string_view name) { return profiler_step_number(name).has_value(); }

}  // namespace tracedoc
