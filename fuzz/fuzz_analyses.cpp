// libFuzzer target: bytes -> a recipe for a small valid trace (fuzz/trace_recipe.h: Kineto JSON read
// by read_kineto_bytes, or nsys tables filled directly) -> every report and analysis. The body is
// tracedoc::fuzz::fuzz_analyses (fuzz_targets.h), shared with the regression test.
#include <cstddef>
#include <cstdint>

#include "fuzz_targets.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return tracedoc::fuzz::fuzz_analyses({reinterpret_cast<const char*>(data), size});
}
