#include "cli/shared_options.h"

namespace tracedoc::cli {

void add_max_memory_option(CLI::App* cmd, std::string& into) {
  cmd->add_option("--max-memory", into,
                  "Stop with an error (exit 2) when reading needs more memory than this, e.g. 4G "
                  "(default: 80% of RAM or of the container's limit)");
}

void add_rank_option(CLI::App* cmd, int64_t& into, const std::string& scope) {
  cmd->add_option("--rank", into, "PyTorch rank directories: only this rank" + scope);
}

void add_step_marker_option(CLI::App* cmd, std::string& into, const std::string& help) {
  cmd->add_option("--step-marker", into,
                  help.empty() ? "Steps are the ranges of this name (NAME* for a prefix), not ProfilerStep#N" : help);
}

}  // namespace tracedoc::cli
