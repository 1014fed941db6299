#include "report/svg_timeline_writer.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "analysis/checked_math.h"
#include "common/human_units.h"
#include "report/writers.h"

namespace tracedoc {

namespace {

constexpr double kGutter = 240, kRow = 14, kLane = 20, kHeader = 18, kAxis = 28;

std::string clipped(std::string_view s, size_t width) { return escape_markup(clip_text(s, width)); }

double nice_step(double ns) {
  const double p = std::pow(10.0, std::floor(std::log10(std::max(ns, 1.0))));
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    if (m * p >= ns) return m * p;
  }
  return 10 * p;
}

struct Canvas {
  std::string body;
  TimeNs t0 = 0, t1 = 1;
  double plot = 1;
  std::set<uint16_t> colors_used;
  double x_of(double t) const {
    return kGutter + (t - static_cast<double>(t0)) / static_cast<double>(sat_sub(t1, t0)) * plot;
  }
  void rect(double x0, double y, double w, double h, const std::string& fill, double opacity = 1) {
    if (opacity < 1)
      body += fmt::format(
          "<rect x=\"{:.2f}\" y=\"{:.1f}\" width=\"{:.2f}\" height=\"{:.1f}\" fill=\"{}\" fill-opacity=\"{:.2f}\"/>\n",
          x0, y, w, h, fill, opacity);
    else
      body += fmt::format("<rect x=\"{:.2f}\" y=\"{:.1f}\" width=\"{:.2f}\" height=\"{:.1f}\" fill=\"{}\"/>\n", x0, y,
                          w, h, fill);
  }
  void text(double x, double y, const std::string& escaped, const char* extra = "") {
    body += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\"{}>{}</text>\n", x, y, extra, escaped);
  }
};

void draw_row(Canvas& c, const view::ViewModel& vm, const view::Track& track, uint8_t row, double y) {
  const double right = c.x_of(static_cast<double>(c.t1));
  double run0 = -1, run1 = -1;
  int64_t longest = -1;
  uint16_t run_color = 0;
  auto flush = [&] {
    if (run0 < 0) return;
    c.rect(run0, y + 1, std::max(1.0, run1 - run0), kRow - 2, view::rgb_hex(vm.colors.palette()[run_color].rgb));
    c.colors_used.insert(run_color);
    run0 = -1;
  };
  for (const view::TrackItem& item : track.items) {
    if (item.depth != row || item.end < c.t0 || item.start > c.t1) continue;
    const double x0 = std::max(kGutter, c.x_of(static_cast<double>(item.start)));
    const double x1 = std::min(right, c.x_of(static_cast<double>(item.end)));
    const int64_t dur = sat_sub(item.end, item.start);
    if (x1 - x0 < 1.5) {
      if (run0 >= 0 && x0 <= run1 + 1) {
        run1 = std::max(run1, x1);
        if (dur > longest) longest = dur, run_color = item.color;
      } else {
        flush();
        run0 = x0, run1 = std::max(x1, x0 + 1), longest = dur, run_color = item.color;
      }
      continue;
    }
    flush();
    c.rect(x0, y + 1, x1 - x0, kRow - 2, view::rgb_hex(vm.colors.palette()[item.color].rgb));
    c.colors_used.insert(item.color);
    if (x1 - x0 > 40) {
      const size_t chars = static_cast<size_t>((x1 - x0 - 6) / 6.2);
      c.text(x0 + 3, y + kRow - 3.5, clipped(vm.timeline.names[item.name], chars), " class=\"in\"");
    }
  }
  flush();
}

void draw_utilization(Canvas& c, const view::ViewModel& vm, const view::UtilizationLane& u, double y) {
  const view::Lod& lod = vm.lod;
  if (lod.buckets == 0) return;
  for (uint32_t b = 0; b < lod.buckets; ++b) {
    const double t = static_cast<double>(lod.start) + lod.bucket_ns * b;
    if (t + lod.bucket_ns < static_cast<double>(c.t0) || t > static_cast<double>(c.t1)) continue;
    const double share = u.busy[b] / 65535.0;
    if (share <= 0) continue;
    const double x0 = std::max(kGutter, c.x_of(t)),
                 x1 = std::min(c.x_of(static_cast<double>(c.t1)), c.x_of(t + lod.bucket_ns));
    if (x1 <= x0) continue;
    const double h = share * (kLane - 3);
    c.rect(x0, y + kLane - 1 - h, std::max(0.5, x1 - x0), h, "#4e79a7", 0.75);
  }
}

}  // namespace

std::string render_timeline_svg(const view::ViewModel& vm, const SvgOptions& options) {
  const view::Timeline& tl = vm.timeline;
  Canvas c;
  c.t0 = options.start != kNoTime ? options.start : tl.start;
  c.t1 = options.end != kNoTime ? options.end : std::max(tl.end, sat_add(tl.start, 1));
  if (c.t1 <= c.t0) c.t1 = sat_add(c.t0, 1);
  const int width = std::max(400, options.width);
  c.plot = width - kGutter - 8;

  double y = kAxis;
  for (uint32_t g = 0; g < tl.groups.size(); ++g) {
    c.rect(0, y, width, kHeader, "#eef0f3");
    c.text(6, y + 13, clipped(tl.groups[g].label, 200), " class=\"group\"");
    y += kHeader;
    for (const view::UtilizationLane& u : vm.lod.utilization) {
      if (u.group != g) continue;
      draw_utilization(c, vm, u, y);
      c.text(10, y + kLane - 6, clipped(u.label + " utilization", 36), " class=\"muted\"");
      y += kLane;
    }
    for (const view::Track& t : tl.tracks) {
      if (t.group != g) continue;
      for (uint8_t r = 0; r < t.rows; ++r) {
        draw_row(c, vm, t, r, y);
        if (r == 0) c.text(10, y + kRow - 3.5, clipped(t.label, 36));
        y += kRow;
      }
      y += 3;
    }
  }
  // Axis on top: ticks every "nice" step of about 120 px, times from the timeline's start.
  const double step = nice_step(static_cast<double>(sat_sub(c.t1, c.t0)) / c.plot * 120);
  std::string axis;
  const double rel0 = static_cast<double>(sat_sub(c.t0, tl.start));
  const double rel1 = static_cast<double>(sat_sub(c.t1, tl.start));
  // At most a few dozen ticks; the bound also ends the loop where t + step == t (times near 2^63).
  int ticks = 0;
  for (double t = std::ceil(rel0 / step) * step; t <= rel1 && ticks < 200; t += step, ++ticks) {
    const double x = c.x_of(t + static_cast<double>(tl.start));
    axis += fmt::format("<rect x=\"{:.1f}\" y=\"{}\" width=\"0.6\" height=\"{:.1f}\" fill=\"#e3e5e9\"/>\n", x, kAxis,
                        y - kAxis);
    axis += fmt::format("<text x=\"{:.1f}\" y=\"{}\" class=\"muted\">{}</text>\n", x + 3, kAxis - 10,
                        escape_markup(human_duration(static_cast<int64_t>(t))));
  }
  // Legend: what each colour drawn means.
  double ly = y + 18;
  std::string legend;
  double lx = 10;
  for (uint16_t color : c.colors_used) {
    const view::Swatch& s = vm.colors.palette()[color];
    const std::string label = clipped(s.label, 40);
    const double w = 22 + 6.5 * static_cast<double>(display_width(clip_text(s.label, 40)));
    if (lx + w > width) lx = 10, ly += 18;
    legend += fmt::format(
        "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"12\" height=\"12\" rx=\"2\" fill=\"{}\"/><text x=\"{:.1f}\" "
        "y=\"{:.1f}\">{}</text>\n",
        lx, ly - 10, view::rgb_hex(s.rgb), lx + 16, ly, label);
    lx += w;
  }
  const double height = ly + 12;
  std::string out = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{:.0f}\" viewBox=\"0 0 {} {:.0f}\" "
      "font-family=\"DejaVu Sans, sans-serif\" font-size=\"10\">\n",
      width, height, width, height);
  out += "<style>text{fill:#1d1f23} .muted{fill:#6b7280} .group{font-weight:bold} .in{fill:#ffffff}</style>\n";
  out += fmt::format("<rect width=\"{}\" height=\"{:.0f}\" fill=\"#fbfbfc\"/>\n", width, height);
  out += fmt::format("<text x=\"6\" y=\"14\" class=\"group\">{} · {} – {} · colours: {}</text>\n",
                     clipped(vm.input, 80), escape_markup(human_duration(sat_sub(c.t0, tl.start))),
                     escape_markup(human_duration(sat_sub(c.t1, tl.start))), escape_markup(vm.colors.name()));
  out += axis;
  out += c.body;
  out += legend;
  out += "</svg>\n";
  return out;
}

}  // namespace tracedoc
