// One of the worst instances or groups behind a finding or a figure (a kernel name, a call site, a rank).
#pragma once

#include <cstdint>
#include <string>

namespace tracedoc {

struct Offender {
  std::string name;
  int64_t count = 0;
  int64_t total_ns = 0;
  std::string detail;  // a short human note ("median 12 µs, max 140 µs", "block 100 threads")
};

}  // namespace tracedoc
