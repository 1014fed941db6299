#include "common/stop_request.h"

#include <atomic>

namespace tracedoc {

namespace {
std::atomic<bool> g_requested{false};
static_assert(std::atomic<bool>::is_always_lock_free, "set from a signal handler");
}  // namespace

bool StopRequest::requested() { return g_requested.load(std::memory_order_relaxed); }
void StopRequest::request() { g_requested.store(true, std::memory_order_relaxed); }
void StopRequest::clear() { g_requested.store(false, std::memory_order_relaxed); }

}  // namespace tracedoc
