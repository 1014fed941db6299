// Time order for the traces tracedoc builds itself (PyTorch traces, captures, rank merges, synth):
// every table declared kByTime (model/trace.h) in stable order of its first time column, as nsys
// orders its tables, with the rows that name kernels renumbered to follow them.
#pragma once

#include <cstdint>
#include <vector>

#include "model/trace.h"

namespace tracedoc {

// The stable order of rows by time (row indices; equal times keep their order).
std::vector<uint32_t> stable_time_order(const std::vector<TimeNs>& time);

// Puts every kByTime table in stable time order (collectives follow their kernels, range row ids
// number the new order), the tables' orders and columns spread over the task pool
// (common/task_pool.h). The result does not depend on the thread count.
void sort_by_time(Trace& trace);

}  // namespace tracedoc
