// Turning cells into text the way `nsys stats` prints them: Python's repr for floats, nsys's unit
// conversion (ns -> us/ms/sec, B -> MB) with its fixed number of decimals.
#pragma once

#include <string>
#include <string_view>

#include "analysis/result.h"
#include "common/status.h"

namespace tracedoc {

enum class TimeUnit { kNs, kUs, kMs, kSec };
enum class MemUnit { kB, kKB, kKiB, kMB, kMiB, kGB, kGiB };

struct UnitChoice {
  TimeUnit time = TimeUnit::kNs;
  MemUnit mem = MemUnit::kMB;
};

Result<TimeUnit> parse_time_unit(std::string_view s);

// "Total Time (ns)", "Bytes (MB)", "Throughput (MB/s)", "Time (%)", "Name".
std::string header_text(const ColumnSpec& column, const UnitChoice& units);

// Cell text without any quoting: integers as-is, floats as Python's repr, converted units with
// nsys's decimals, NULL as "".
std::string cell_text(const Cell& cell, Unit unit, const UnitChoice& units);

// Python repr() of a double: shortest round-trip digits, ".0" on integral values, exponent form
// outside [1e-4, 1e16).
std::string python_float_repr(double v);

}  // namespace tracedoc
