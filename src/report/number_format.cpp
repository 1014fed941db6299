#include "report/number_format.h"

#include <fmt/format.h>

#include <charconv>
#include <algorithm>
#include <cmath>

namespace tracedoc {

Result<TimeUnit> parse_time_unit(std::string_view s) {
  if (s == "ns") return TimeUnit::kNs;
  if (s == "us") return TimeUnit::kUs;
  if (s == "ms") return TimeUnit::kMs;
  if (s == "s" || s == "sec") return TimeUnit::kSec;
  return UsageError(fmt::format("unknown time unit '{}' (use ns, us, ms or s)", s));
}

namespace {

const char* time_unit_name(TimeUnit u) {
  switch (u) {
    case TimeUnit::kNs: return "ns";
    case TimeUnit::kUs: return "us";
    case TimeUnit::kMs: return "ms";
    case TimeUnit::kSec: return "sec";
  }
  return "ns";
}

const char* mem_unit_name(MemUnit u) {
  switch (u) {
    case MemUnit::kB: return "B";
    case MemUnit::kKB: return "KB";
    case MemUnit::kKiB: return "KiB";
    case MemUnit::kMB: return "MB";
    case MemUnit::kMiB: return "MiB";
    case MemUnit::kGB: return "GB";
    case MemUnit::kGiB: return "GiB";
  }
  return "MB";
}

// Bytes per unit.
double mem_divisor(MemUnit u) {
  switch (u) {
    case MemUnit::kB: return 1;
    case MemUnit::kKB: return 1e3;
    case MemUnit::kKiB: return 1024.0;
    case MemUnit::kMB: return 1e6;
    case MemUnit::kMiB: return 1024.0 * 1024.0;
    case MemUnit::kGB: return 1e9;
    case MemUnit::kGiB: return 1024.0 * 1024.0 * 1024.0;
  }
  return 1e6;
}

std::string plain_number(const Cell& cell) {
  if (cell.type == Cell::Type::kInt) return fmt::format("{}", cell.i);
  return python_float_repr(cell.d);
}

// nsys converts units by multiplying with the unit's scale (96763.5 ns * 1e-3 = 96.76350000000001,
// printed 96.764 us), not by dividing (96.7634999..., printed 96.763): the same is done here.
std::string scaled(const Cell& cell, double scale, int decimals) {
  const double v = cell.type == Cell::Type::kInt ? static_cast<double>(cell.i) : cell.d;
  return fmt::format("{:.{}f}", v * scale, decimals);
}

// Memory units, though, nsys divides by the unit's size: 1785712500 B/s / 1e6 = 1785.7125, printed
// 1785.713 MB/s (times 1e-6 it would be 1785.7124999999999, printed 1785.712). 800 Bytes and
// Throughput cells of `cuda_gpu_trace` on random sizes and durations all agreed with dividing (68 not
// with multiplying); the `copies` case of tests/golden/analyze_pytorch keeps sizes where the two differ.
std::string divided(const Cell& cell, double divisor, int decimals) {
  const double v = cell.type == Cell::Type::kInt ? static_cast<double>(cell.i) : cell.d;
  return fmt::format("{:.{}f}", v / divisor, decimals);
}

}  // namespace

std::string python_float_repr(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  if (v == 0) return std::signbit(v) ? "-0.0" : "0.0";
  char buf[64];
  const double a = std::fabs(v);
  if (a >= 1e16 || a < 1e-4) {
    // Python: shortest digits in exponent form, mantissa without trailing ".0", exponent with sign
    // and at least two digits ("1e+16", "1.5e-05").
    auto res = std::to_chars(buf, buf + sizeof(buf), v, std::chars_format::scientific);
    std::string s(buf, res.ptr);
    auto e = s.find('e');
    std::string mant = s.substr(0, e);
    std::string exp = s.substr(e + 1);
    char sign = exp[0] == '-' ? '-' : '+';
    if (exp[0] == '-' || exp[0] == '+') exp = exp.substr(1);
    while (exp.size() > 2 && exp[0] == '0') exp.erase(0, 1);
    if (exp.size() < 2) exp = "0" + exp;
    return mant + "e" + sign + exp;
  }
  auto res = std::to_chars(buf, buf + sizeof(buf), v, std::chars_format::fixed);
  std::string s(buf, res.ptr);
  if (s.find('.') == std::string::npos) s += ".0";
  return s;
}

std::string header_text(const ColumnSpec& column, const UnitChoice& units) {
  switch (column.unit) {
    case Unit::kNone: return column.name;
    case Unit::kDurNs:
    case Unit::kTsNs: return fmt::format("{} ({})", column.name, time_unit_name(units.time));
    case Unit::kMemB: return fmt::format("{} ({})", column.name, mem_unit_name(units.mem));
    case Unit::kThruB: return fmt::format("{} ({}/s)", column.name, mem_unit_name(units.mem));
    case Unit::kRatioPct: return column.name + " (%)";
  }
  return column.name;
}

std::string cell_text(const Cell& cell, Unit unit, const UnitChoice& units) {
  switch (cell.type) {
    case Cell::Type::kNull: return {};
    case Cell::Type::kText: return std::string(cell.s);
    default: break;
  }
  switch (unit) {
    case Unit::kDurNs:
    case Unit::kTsNs:
      switch (units.time) {
        case TimeUnit::kNs: return plain_number(cell);
        case TimeUnit::kUs: return scaled(cell, 1e-3, 3);
        case TimeUnit::kMs: return scaled(cell, 1e-6, 4);
        case TimeUnit::kSec: return scaled(cell, 1e-9, 4);
      }
      break;
    case Unit::kMemB:
    case Unit::kThruB:
      switch (units.mem) {
        case MemUnit::kB: return plain_number(cell);
        default: return divided(cell, mem_divisor(units.mem), 3);
      }
    default: break;
  }
  return plain_number(cell);
}

}  // namespace tracedoc
