// Reads a TOML file (configurations, budgets, trace specs) into a toml++ table. toml++ reports
// syntax errors by exception; here they become a Status naming the file, the line and the problem,
// so no exception leaves the module that parses.
#pragma once

#include <string>
#include <string_view>
#include <toml++/toml.h>

#include "common/status.h"

namespace tracedoc {

Result<toml::table> read_toml_file(const std::string& path);
// The same for text already in memory; `name` stands for the file in messages.
Result<toml::table> parse_toml(std::string_view text, const std::string& name);

}  // namespace tracedoc
