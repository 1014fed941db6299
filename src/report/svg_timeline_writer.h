// `tracedoc view --svg`: a static picture of the timeline over one time window, for docs, bug
// reports and CI artifacts. The same rows, colours and legend as the HTML page, drawn from every
// event of the window (not only the page's embedded ones): events narrower than a pixel are merged
// into one rectangle per run of pixels, coloured by the longest event in it, so the file stays
// proportional to the picture's width, not to the event count. Names are XML-escaped text.
#pragma once

#include <cstdint>
#include <string>

#include "model/trace.h"
#include "view/view_model.h"

namespace tracedoc {

struct SvgOptions {
  TimeNs start = kNoTime, end = kNoTime;  // absolute trace time; kNoTime: the timeline's bounds
  int width = 1600;                       // pixels, labels included
};

std::string render_timeline_svg(const view::ViewModel& vm, const SvgOptions& options);

}  // namespace tracedoc
