// libFuzzer target: SQLite file bytes -> read_nsys_sqlite (every table, page scanner and SQLite
// paths) -> every report. The body is tracedoc::fuzz::fuzz_nsys_sqlite (fuzz_targets.h), shared
// with the regression test.
#include <cstddef>
#include <cstdint>

#include "fuzz_targets.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return tracedoc::fuzz::fuzz_nsys_sqlite({reinterpret_cast<const char*>(data), size});
}
