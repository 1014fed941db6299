// `tracedoc view --flame WHEN --svg`: a flame graph of CPU samples (analysis/cpu_samples.h's
// SampleTree, top-down): the threads' entry points at the bottom, each function as wide as the
// samples with it on their stack, its callees stacked on it, coloured by what a PyTorch user needs
// to know (the class of the function: Python interpreter, PyTorch, CUDA, allocation, ...). Frames
// narrower than `min_width` pixels are left out; every drawn frame has a <title> (name, module,
// samples and share) that a browser shows on hover. Names are XML-escaped text.
#pragma once

#include <string>

#include "analysis/cpu_samples.h"
#include "model/trace.h"

namespace tracedoc {

struct FlameOptions {
  int width = 1600;        // pixels
  double min_width = 0.5;  // frames narrower than this are left out
  std::string title;       // the heading: what the samples are ("CPU samples while the GPU idled")
};

std::string render_flame_svg(const Trace& trace, const SampleTree& tree, const FlameOptions& options);

}  // namespace tracedoc
