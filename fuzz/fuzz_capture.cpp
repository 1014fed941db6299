// libFuzzer target: tracedoc capture (.tdcap) bytes, frame CRCs made to match unless byte 7 is odd
// -> read_capture -> every report. The body is tracedoc::fuzz::fuzz_capture (fuzz_targets.h), shared
// with the regression test.
#include <cstddef>
#include <cstdint>

#include "fuzz_targets.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return tracedoc::fuzz::fuzz_capture({reinterpret_cast<const char*>(data), size});
}
