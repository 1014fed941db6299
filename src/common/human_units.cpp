#include "common/human_units.h"

#include <fmt/format.h>

#include <cstdlib>

namespace tracedoc {

namespace {

std::string three_digits(double v, const char* unit) {
  if (v >= 100) return fmt::format("{:.0f} {}", v, unit);
  if (v >= 10) return fmt::format("{:.1f} {}", v, unit);
  return fmt::format("{:.2f} {}", v, unit);
}

}  // namespace

std::string human_duration(int64_t ns) {
  const double v = static_cast<double>(ns);
  if (std::llabs(ns) < 1000) return fmt::format("{} ns", ns);
  if (std::llabs(ns) < 1000000) return three_digits(v / 1e3, "µs");
  if (std::llabs(ns) < 1000000000) return three_digits(v / 1e6, "ms");
  return three_digits(v / 1e9, "s");
}

std::string human_bytes(int64_t bytes) {
  const double v = static_cast<double>(bytes);
  if (bytes < 1000) return fmt::format("{} B", bytes);
  if (bytes < 1000000) return three_digits(v / 1e3, "kB");
  if (bytes < 1000000000) return three_digits(v / 1e6, "MB");
  return three_digits(v / 1e9, "GB");
}

std::string human_percent(double fraction) { return fmt::format("{:.1f}%", 100.0 * fraction); }

}  // namespace tracedoc
