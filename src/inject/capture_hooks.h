// Work of other recorder modules that the recorder's thread runs for them:
//  * final flush hooks run before the last frame is written (at exit, or when a fatal signal
//    arrives) and about once a second: the CUPTI module hands over the activity buffers CUPTI
//    still holds, the CPU sampler moves its last samples into the buffer;
//  * tick hooks run on every wake-up of the recorder's thread (every 100 ms), before the buffer is
//    written: the CPU sampler arms its timers on new threads and moves its samples into the buffer.
#pragma once

#include <cstdint>

namespace tracedoc::inject {

using FlushHook = void (*)();
void add_final_flush_hook(FlushHook hook) noexcept;
void run_final_flush_hooks() noexcept;
void add_tick_hook(FlushHook hook) noexcept;
void run_tick_hooks() noexcept;

// The recorder's own thread (kernel thread id, -1 before it runs): not the application's, so not
// sampled and not named in the capture.
int64_t recorder_thread_id() noexcept;
// Starts the recorder's thread if this process has none yet (a forked child's first need).
void start_recorder_thread() noexcept;
// Starts CPU sampling when the capture asked for it (cpu_sampler.cpp); called once the recorder's
// globals are constructed.
void start_cpu_sampling() noexcept;

}  // namespace tracedoc::inject
