#include "cli/shared_options.h"

#include <fmt/format.h>

#include <charconv>

#include "common/memory_budget.h"
#include "report/output_file.h"
#include "report/writers.h"

namespace tracedoc::cli {

void add_max_memory_option(CLI::App* cmd, std::string& into) {
  cmd->add_option("--max-memory", into,
                  "Stop with an error (exit 2) when the command needs more memory than this, e.g. 4G "
                  "(default: 80% of RAM or of the container's limit)")
      ->check([](const std::string& value) -> std::string {
        const auto size = parse_memory_size(value);
        if (size.ok()) return "";
        // CLI11 names the option itself.
        const std::string& message = size.status().message();
        return message.starts_with("--max-memory: ") ? message.substr(14) : message;
      });
}

void add_rank_option(CLI::App* cmd, int64_t& into, const std::string& scope) {
  cmd->add_option("--rank", into, "PyTorch rank directories: only this rank" + scope);
}

void add_step_marker_option(CLI::App* cmd, std::string& into, const std::string& help) {
  cmd->add_option("--step-marker", into,
                  help.empty() ? "Steps are the ranges of this name (NAME* for a prefix), not ProfilerStep#N" : help);
}

CLI::Validator number_from_to(double lo, double hi) {
  return CLI::Validator(
      [lo, hi](const std::string& value) -> std::string {
        double x = 0;
        const char* end = value.data() + value.size();
        const auto [p, ec] = std::from_chars(value.data(), end, x);
        if (ec != std::errc() || p != end || !(x >= lo && x <= hi))
          return fmt::format("'{}' is not a number from {:g} to {:g}", value, lo, hi);
        return "";
      },
      fmt::format("NUMBER in [{:g}, {:g}]", lo, hi));
}

CLI::Option* add_output_file_option(CLI::App* cmd, std::string& into, bool required) {
  const std::string help = required
                               ? "Output file: a regular file is written whole or not at all; a device or FIFO in place"
                               : "'-' for stdout (default) or a file: a regular file is written whole or not at all; "
                                 "a device or FIFO in place";
  CLI::Option* option = cmd->add_option("-o,--output", into, help)->check([](const std::string& value) -> std::string {
    if (value == "-") return "";
    const auto target = resolve_output(value);
    return target.ok() ? "" : target.status().message();
  });
  if (required) option->required();
  return option;
}

void add_format_option(CLI::App* cmd, std::string& into, const std::vector<FormatChoice>& choices,
                       const std::vector<std::string>& aliases, const std::string& default_help,
                       const std::string& flag) {
  // "column, csv, json or markdown", and the same with the notes and the default for the help.
  std::string names, help;
  for (size_t i = 0; i < choices.size(); ++i) {
    const std::string sep = i == 0 ? "" : i + 1 == choices.size() ? " or " : ", ";
    names += sep + choices[i].name;
    std::string notes = choices[i].note;
    if (choices[i].name == into) notes = notes.empty() ? "default" : "default; " + notes;
    help += sep + choices[i].name + (notes.empty() ? "" : " (" + notes + ")");
  }
  if (!default_help.empty()) help += " (" + default_help + ")";
  std::vector<std::string> accepted = aliases;
  for (const FormatChoice& c : choices) accepted.push_back(c.name);
  cmd->add_option(flag, into, help)->check([accepted, names](const std::string& value) -> std::string {
    for (const std::string& a : accepted) {
      if (value == a) return "";
    }
    return "unknown format '" + value + "' (" + names + ")";
  });
}

void add_report_format_option(CLI::App* cmd, std::string& into) {
  std::vector<FormatChoice> choices;
  for (const auto& [name, format] : output_formats()) choices.push_back({name, ""});
  add_format_option(cmd, into, choices, {}, "default: column on a terminal, else csv");
}

}  // namespace tracedoc::cli
