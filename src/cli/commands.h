// One function per subcommand; main() only dispatches.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>

namespace tracedoc::cli {

// Exit codes shared by every subcommand.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFindings = 1;
inline constexpr int kExitBadInput = 2;

// Registers the subcommand on `app`; the returned function runs it after parsing.
std::function<int()> add_stats_command(CLI::App& app);
std::function<int()> add_analyze_command(CLI::App& app);
std::function<int()> add_summary_command(CLI::App& app);
std::function<int()> add_diagnose_command(CLI::App& app);
std::function<int()> add_sql_command(CLI::App& app);
std::function<int()> add_export_command(CLI::App& app);
std::function<int()> add_check_command(CLI::App& app);
std::function<int()> add_diff_command(CLI::App& app);
std::function<int()> add_synth_command(CLI::App& app);
std::function<int()> add_view_command(CLI::App& app);
std::function<int()> add_capture_command(CLI::App& app);
std::function<int()> add_ncu_command(CLI::App& app);

}  // namespace tracedoc::cli
