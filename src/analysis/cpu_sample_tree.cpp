// cpu_sample_tree: the CPU samples' call tree (cpu_samples.h), top-down or bottom-up, built once
// per distinct stack (weighted by its samples), never per sample.
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "analysis/cpu_samples.h"
#include "common/name_pattern.h"

namespace tracedoc {

namespace {

Result<double> min_share_arg(const ReportArgs& args) {
  const std::optional<std::string> text = text_report_arg(args, "min");
  if (!text) return 0.5;
  char* end = nullptr;
  const double v = std::strtod(text->c_str(), &end);
  if (text->empty() || end != text->c_str() + text->size() || !(v >= 0 && v <= 100))
    return UsageError(fmt::format("cpu_sample_tree: min must be a percentage from 0 to 100, got '{}'", *text));
  return v;
}

}  // namespace

std::vector<int32_t> SampleTree::children_of(const Trace& trace, int32_t node) const {
  std::vector<int32_t> out = nodes[static_cast<size_t>(node)].children;
  std::stable_sort(out.begin(), out.end(), [&](int32_t a, int32_t b) {
    const Node &x = nodes[static_cast<size_t>(a)], &y = nodes[static_cast<size_t>(b)];
    const FunctionSamples &fx = functions[static_cast<size_t>(x.function)],
                          &fy = functions[static_cast<size_t>(y.function)];
    return std::tuple(-x.total, trace.str(fx.symbol), trace.str(fx.module)) <
           std::tuple(-y.total, trace.str(fy.symbol), trace.str(fy.module));
  });
  return out;
}

SampleTree sample_tree(const Trace& trace, const CpuSampleFilter& filter, bool bottom_up, const NamePattern* root) {
  const StackSamples counted = samples_per_stack(trace, filter);
  SampleTree tree;
  tree.samples = counted.samples;
  tree.without_stack = counted.without_stack;
  tree.nodes.resize(1);
  FunctionIndex index(trace.stacks);
  std::map<std::pair<int32_t, int32_t>, int32_t> child;  // (parent, function) -> node
  std::vector<int32_t> path;
  for (size_t s = 0; s < counted.per_stack.size(); ++s) {
    const int64_t n = counted.per_stack[s];
    if (n == 0) continue;
    const std::span<const uint32_t> frames = trace.stacks.stack(static_cast<StackId>(s));  // leaf first
    size_t outermost = frames.size();  // one past the frame the path starts at (top-down)
    if (root != nullptr) {
      while (outermost > 0 && !root->found_in(trace.str(trace.stacks.frame(frames[outermost - 1]).symbol))) --outermost;
      if (outermost == 0) continue;  // no frame of the stack is under the root
    }
    path.clear();
    if (bottom_up) {
      for (uint32_t frame : frames) path.push_back(index.of(frame));
    } else {
      for (size_t i = outermost; i-- > 0;) path.push_back(index.of(frames[i]));
    }
    int32_t at = 0;
    for (int32_t function : path) {
      auto [it, fresh] = child.try_emplace({at, function}, static_cast<int32_t>(tree.nodes.size()));
      if (fresh) {
        tree.nodes.push_back({function, 0, 0, {}});
        tree.nodes[static_cast<size_t>(at)].children.push_back(it->second);
      }
      at = it->second;
      tree.nodes[static_cast<size_t>(at)].total += n;
    }
    tree.nodes[static_cast<size_t>(at)].self += n;
    tree.nodes[0].total += n;
  }
  tree.functions = std::move(index.functions());
  return tree;
}

Status cpu_sample_tree(const Trace& trace, const ReportArgs& args, RowSink& sink) {
  constexpr std::string_view kReport = "cpu_sample_tree";
  TRACEDOC_RETURN_IF_ERROR(
      check_report_args(kReport, args, {"top-down", "bottom-up"}, {"thread", "during", "depth", "min", "root"}));
  const bool bottom_up = args.has("bottom-up");
  if (bottom_up && args.has("top-down")) return UsageError("cpu_sample_tree: top-down or bottom-up, not both");
  TRACEDOC_ASSIGN_OR_RETURN(const int64_t tid, int_report_arg(kReport, args, "thread", -1));
  TRACEDOC_ASSIGN_OR_RETURN(const int64_t max_depth, int_report_arg(kReport, args, "depth", -1));
  if (max_depth == 0) return UsageError("cpu_sample_tree: depth must be 1 or more");
  TRACEDOC_ASSIGN_OR_RETURN(const double min_share, min_share_arg(args));
  std::optional<NamePattern> root;
  if (const auto r = text_report_arg(args, "root")) {
    if (bottom_up) return UsageError("cpu_sample_tree: root= starts a top-down tree; leave out bottom-up");
    TRACEDOC_ASSIGN_OR_RETURN(NamePattern p, NamePattern::compile(*r));
    root = std::move(p);
  }
  TRACEDOC_ASSIGN_OR_RETURN(const auto keep, samples_during(kReport, trace, args));
  if (!trace.source.has_table("COMPOSITE_EVENTS") || trace.cpu_samples.size() == 0)
    return no_data(trace, "does not contain CPU samples (nsys profile --sample=cpu).");

  const SampleTree tree = sample_tree(trace, {tid, keep ? &*keep : nullptr}, bottom_up, root ? &*root : nullptr);
  sink.begin({{"Depth"}, {"Total", Unit::kRatioPct}, {"Total"}, {"Self"}, {"Function"}, {"Module"}});
  const auto shown = [&](int64_t samples) {
    return samples > 0 && 100.0 * static_cast<double>(samples) >= min_share * static_cast<double>(tree.samples);
  };
  std::vector<Cell> row;
  // Depth first, children by samples (then name), from the root's children down.
  std::vector<std::pair<int32_t, int64_t>> stack;  // (node, depth)
  const auto push_children = [&](int32_t id, int64_t depth) {
    const std::vector<int32_t> children = tree.children_of(trace, id);
    for (size_t i = children.size(); i-- > 0;) stack.emplace_back(children[i], depth);
  };
  push_children(0, 0);
  while (!stack.empty()) {
    const auto [id, depth] = stack.back();
    stack.pop_back();
    const SampleTree::Node& node = tree.nodes[static_cast<size_t>(id)];
    if (!shown(node.total)) continue;
    const FunctionSamples& f = tree.functions[static_cast<size_t>(node.function)];
    row = {Cell::integer(depth),     sample_share(node.total, tree.samples), Cell::integer(node.total),
           Cell::integer(node.self), Cell::pooled(trace.str(f.symbol)),      Cell::pooled(trace.str(f.module))};
    sink.row(row);
    if (max_depth < 0 || depth + 1 < max_depth) push_children(id, depth + 1);
  }
  if (tree.without_stack > 0 && !root && shown(tree.without_stack)) {
    row = {Cell::integer(0),
           sample_share(tree.without_stack, tree.samples),
           Cell::integer(tree.without_stack),
           Cell::integer(tree.without_stack),
           Cell::text("[no call stack]"),
           Cell::null()};
    sink.row(row);
  }
  sink.end();
  return Status::Ok();
}

}  // namespace tracedoc
