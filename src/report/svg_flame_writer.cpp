#include "report/svg_flame_writer.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <vector>

#include "common/human_units.h"
#include "report/writers.h"

namespace tracedoc {

namespace {

constexpr double kFrame = 16, kTop = 44, kMargin = 10;

// A colour per sample class (cpu_samples.h's SampleClass order), as pale as a flame graph's.
constexpr std::array<const char*, kSampleClassCount> kClassColors = {
    "#f2c57c",  // Python interpreter
    "#e8a0a0",  // GIL
    "#f08b5b",  // PyTorch
    "#8cc084",  // CUDA
    "#d7a6e0",  // memory allocation
    "#9fc5e8",  // NumPy/BLAS/OpenMP
    "#c9b38a",  // data decoding
    "#bdbdbd",  // profiler
    "#e06666",  // OS kernel
    "#f6d7a7",  // other
    "#dddddd",  // unresolved
    "#eeeeee",  // no call stack
};

struct Frame {
  int32_t node;
  double x;
  int depth;
};

}  // namespace

std::string render_flame_svg(const Trace& trace, const SampleTree& tree, const FlameOptions& options) {
  const double width = std::max(200, options.width);
  const double plot = width - 2 * kMargin;
  const double per_sample = tree.nodes[0].total > 0 ? plot / static_cast<double>(tree.nodes[0].total) : 0;
  // Frames to draw, depth first; the deepest decides the height.
  std::vector<Frame> frames;
  std::vector<Frame> todo = {{0, kMargin, -1}};
  int max_depth = 0;
  while (!todo.empty()) {
    const Frame f = todo.back();
    todo.pop_back();
    if (f.node != 0) frames.push_back(f), max_depth = std::max(max_depth, f.depth);
    double x = f.x;
    for (int32_t c : tree.children_of(trace, f.node)) {
      const double w = static_cast<double>(tree.nodes[static_cast<size_t>(c)].total) * per_sample;
      if (w >= options.min_width) todo.push_back({c, x, f.depth + 1});
      x += w;
    }
  }
  const double height = kTop + (max_depth + 1) * kFrame + kMargin;
  std::string out = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{:.0f}\" height=\"{:.0f}\" viewBox=\"0 0 {:.0f} {:.0f}\" "
      "font-family=\"DejaVu Sans, sans-serif\" font-size=\"11\">\n"
      "<style>.in{{fill:#1d1f23}} .muted{{fill:#5b6270}}</style>\n"
      "<rect width=\"100%\" height=\"100%\" fill=\"#fbfbfc\"/>\n",
      width, height, width, height);
  out += fmt::format("<text x=\"{:.0f}\" y=\"18\" font-size=\"14\" font-weight=\"bold\">{}</text>\n", kMargin,
                     escape_markup(options.title.empty() ? "CPU samples" : options.title));
  out += fmt::format(
      "<text x=\"{:.0f}\" y=\"34\" class=\"muted\">{} samples{}; width: samples with the function on the stack; "
      "bottom: the threads' entry points</text>\n",
      kMargin, tree.samples,
      tree.without_stack > 0 ? fmt::format(" ({} without a call stack)", tree.without_stack) : std::string());
  // Each drawn function's class, and a legend of the classes drawn.
  std::vector<int8_t> class_of(tree.functions.size(), -1);
  std::array<bool, kSampleClassCount> used{};
  for (const Frame& f : frames) {
    const int32_t function = tree.nodes[static_cast<size_t>(f.node)].function;
    int8_t& k = class_of[static_cast<size_t>(function)];
    if (k >= 0) continue;
    const FunctionSamples& fn = tree.functions[static_cast<size_t>(function)];
    k = static_cast<int8_t>(classify_frame(trace.str(fn.symbol), trace.str(fn.module), false, fn.unresolved));
    used[static_cast<size_t>(k)] = true;
  }
  double legend_x = width - kMargin;
  for (size_t k = kSampleClassCount; k-- > 0;) {
    if (!used[k]) continue;
    const std::string name = sample_class_name(static_cast<SampleClass>(k));
    legend_x -= 16 + 6.8 * static_cast<double>(name.size()) + 12;
    out += fmt::format(
        "<rect x=\"{:.1f}\" y=\"25\" width=\"12\" height=\"12\" fill=\"{}\"/><text x=\"{:.1f}\" y=\"35\" "
        "class=\"muted\">{}</text>\n",
        legend_x, kClassColors[k], legend_x + 16, escape_markup(name));
  }
  for (const Frame& f : frames) {
    const SampleTree::Node& n = tree.nodes[static_cast<size_t>(f.node)];
    const FunctionSamples& fn = tree.functions[static_cast<size_t>(n.function)];
    const int8_t k = class_of[static_cast<size_t>(n.function)];
    const double w = static_cast<double>(n.total) * per_sample;
    const double y = height - kMargin - (f.depth + 1) * kFrame;
    const std::string_view name = trace.str(fn.symbol);
    out += fmt::format(
        "<g><title>{} ({})&#10;{} samples, {:.1f}%; {} executing</title><rect x=\"{:.2f}\" y=\"{:.1f}\" "
        "width=\"{:.2f}\" height=\"{:.1f}\" fill=\"{}\" stroke=\"#fbfbfc\" stroke-width=\"0.5\"/>",
        escape_markup(name), escape_markup(trace.str(fn.module)), n.total,
        100.0 * static_cast<double>(n.total) / static_cast<double>(std::max<int64_t>(tree.samples, 1)), n.self, f.x, y,
        w, kFrame - 1, kClassColors[static_cast<size_t>(k)]);
    if (w > 30) {
      const size_t chars = static_cast<size_t>((w - 6) / 6.2);
      out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" class=\"in\">{}</text>", f.x + 3, y + kFrame - 4.5,
                         escape_markup(clip_text(name, chars)));
    }
    out += "</g>\n";
  }
  out += "</svg>\n";
  return out;
}

}  // namespace tracedoc
