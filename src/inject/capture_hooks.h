// Work that must run before the last frame is written (at exit, or when a fatal signal arrives):
// the CUPTI module registers "hand over the activity buffers CUPTI still holds".
#pragma once

namespace tracedoc::inject {

using FlushHook = void (*)();
void add_final_flush_hook(FlushHook hook) noexcept;
void run_final_flush_hooks() noexcept;

}  // namespace tracedoc::inject
