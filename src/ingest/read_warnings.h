// What a read left to say (model/trace.h, ReadWarnings; NcuReport::unusable_values), as lines of
// text, so that every front end says it in the same words: the command line prints each as
// "tracedoc: warning: LINE" on stderr, Python raises each as a tracedoc.TraceWarning.
#pragma once

#include <string>
#include <vector>

#include "model/ncu_report.h"
#include "model/trace.h"

namespace tracedoc {

// One line per entry of a folder that was not read, one for torn capture frames, one for the
// per-event problems counted (each "PATH: ..."), then the lines of the Nsight Compute reports the
// trace holds. Empty when the read was clean.
std::vector<std::string> read_warning_lines(const Trace& trace);

// An Nsight Compute report's values read as absent, or "" when none was.
std::string ncu_warning_line(const NcuReport& report);

}  // namespace tracedoc
