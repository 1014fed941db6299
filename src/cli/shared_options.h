// The options several subcommands take, each declared here once: its name, its help and its check.
// (`--threads`, which every subcommand takes, is declared in main.cpp.)
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace tracedoc::cli {

// --max-memory SIZE: the memory guard of the readers and the watchdog (common/memory_budget.h); every
// subcommand takes it (main.cpp). A size that does not parse is a usage error when the command
// line is parsed.
void add_max_memory_option(CLI::App* cmd, std::string& into);
// --rank N: one rank of a PyTorch rank directory; `scope` ends the help (" (of both traces)").
void add_rank_option(CLI::App* cmd, int64_t& into, const std::string& scope = "");
// --step-marker NAME: steps from ranges of that name; `help` replaces the usual text.
void add_step_marker_option(CLI::App* cmd, std::string& into, const std::string& help = "");

// -o, --output FILE of a command that writes one document: '-' (stdout, the default unless
// `required`) or a file as report/output_file.h writes it. A directory, or a file under a folder that
// does not exist, is a usage error when the command line is parsed, before any input is read.
CLI::Option* add_output_file_option(CLI::App* cmd, std::string& into, bool required = false);

// A number from `lo` to `hi`: NaN, infinities and values past the range are usage errors when the
// command line is parsed ("1e300" given for a threshold in ms is no threshold).
CLI::Validator number_from_to(double lo, double hi);

// One output format a subcommand writes, with a note for its help ("json", "schema_version 1").
struct FormatChoice {
  std::string name;
  std::string note;
};
// -f, --format (`flag` for a subcommand that takes only --format): one of `choices`, or of the
// `aliases` it also accepts (old names, e.g. "text" for "column"). Anything else is a usage error
// when the command line is parsed, before any input is read: "unknown format 'xml' (column, json or
// markdown)". The help lists the choices and marks the one `into` holds as the default; with no
// default, `default_help` says how one is chosen.
void add_format_option(CLI::App* cmd, std::string& into, const std::vector<FormatChoice>& choices,
                       const std::vector<std::string>& aliases = {}, const std::string& default_help = "",
                       const std::string& flag = "-f,--format");

// -f, --format of the reports (stats, analyze, sql): report/writers.h's formats.
void add_report_format_option(CLI::App* cmd, std::string& into);

}  // namespace tracedoc::cli
