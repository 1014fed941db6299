// The options several subcommands take, each declared here once: its name, its help and its check.
// (`--threads`, which every subcommand takes, is declared in main.cpp.)
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>

namespace tracedoc::cli {

// --max-memory SIZE: the memory guard of the readers and the watchdog (common/memory_budget.h).
void add_max_memory_option(CLI::App* cmd, std::string& into);
// --rank N: one rank of a PyTorch rank directory; `scope` ends the help (" (of both traces)").
void add_rank_option(CLI::App* cmd, int64_t& into, const std::string& scope = "");
// --step-marker NAME: steps from ranges of that name; `help` replaces the usual text.
void add_step_marker_option(CLI::App* cmd, std::string& into, const std::string& help = "");

}  // namespace tracedoc::cli
