// Reads a TOML file (configurations, budgets, trace specs) into a toml++ table. toml++ reports
// syntax errors by exception; here they become a Status naming the file, the line and the problem,
// so no exception leaves the module that parses.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <toml++/toml.h>

#include "common/status.h"

namespace tracedoc {

// Configurations, budgets and specs are a few kilobytes: a file past this is something else.
inline constexpr uint64_t kMaxTomlFileBytes = uint64_t{16} << 20;

// `what` names the kind of file in errors ("budget": "PATH: is a directory, not a file").
Result<toml::table> read_toml_file(const std::string& path, std::string_view what = "TOML file");
// The same for text already in memory; `name` stands for the file in messages.
Result<toml::table> parse_toml(std::string_view text, const std::string& name);

}  // namespace tracedoc
