// Durations and sizes for people: three significant digits and a unit. Text output only; JSON and
// CSV carry exact integers.
#pragma once

#include <cstdint>
#include <cstddef>
#include <string>
#include <string_view>

namespace tracedoc {

// "96.3 ms", "27.4 µs", "812 ns", "1.25 s".
std::string human_duration(int64_t ns);
// "98.7 MB" (10^6 B, as nsys), "512 B".
std::string human_bytes(int64_t bytes);
// "4.41 GFLOP", "512 FLOP" (10^3 steps).
std::string human_flops(int64_t flops);
// "31.4%" from a fraction (0.314).
std::string human_percent(double fraction);

// Width on a terminal: UTF-8 code points (names are the trace's own text).
size_t display_width(std::string_view s);
// `s` cut to at most `width` code points, the last one "…" when cut; a code point is never split.
std::string clip_text(std::string_view s, size_t width);

}  // namespace tracedoc
