#include "common/human_units.h"

#include <fmt/format.h>

#include <cstdlib>
#include <iterator>

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

std::string human_flops(int64_t flops) {
  static constexpr const char* kUnits[] = {"kFLOP", "MFLOP", "GFLOP", "TFLOP", "PFLOP", "EFLOP"};
  if (flops < 1000) return fmt::format("{} FLOP", flops);
  double v = static_cast<double>(flops) / 1e3;
  size_t u = 0;
  while (v >= 999.5 && u + 1 < std::size(kUnits)) v /= 1e3, ++u;
  return three_digits(v, kUnits[u]);
}

std::string human_percent(double fraction) { return fmt::format("{:.1f}%", 100.0 * fraction); }

size_t display_width(std::string_view s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;  // count UTF-8 code points
  return n;
}

std::string clip_text(std::string_view s, size_t width) {
  if (display_width(s) <= width) return std::string(s);
  std::string out;
  size_t n = 0;
  for (char ch : s) {
    const unsigned char c = static_cast<unsigned char>(ch);
    if ((c & 0xC0) != 0x80) {
      if (n + 1 == width) break;
      ++n;
    }
    out.push_back(ch);
  }
  return out + "\xE2\x80\xA6";
}

}  // namespace tracedoc
