// The diagnosis's name for the shared analysis cache its rules read: analysis/context.h, which
// check, diff and view share with it.
#pragma once

#include "analysis/context.h"

namespace tracedoc::diagnose {

using Context = tracedoc::AnalysisContext;

}  // namespace tracedoc::diagnose
