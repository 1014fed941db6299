// libFuzzer target: Kineto / Chrome-trace JSON bytes -> read_kineto_bytes -> the PyTorch reports.
// The body is tracedoc::fuzz::fuzz_kineto (fuzz_targets.h), shared with the regression test.
#include <cstddef>
#include <cstdint>

#include "fuzz_targets.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return tracedoc::fuzz::fuzz_kineto({reinterpret_cast<const char*>(data), size});
}
