#include "common/toml_file.h"

#include <fmt/format.h>

#include "common/input_file.h"

namespace tracedoc {

namespace {

Status syntax_error(const std::string& name, const toml::parse_error& e) {
  const auto& at = e.source().begin;
  if (at.line == 0) return BadInput(fmt::format("{}: {}", name, e.description()));  // unreadable file
  return BadInput(fmt::format("{}:{}:{}: invalid TOML: {}", name, at.line, at.column, e.description()));
}

}  // namespace

Result<toml::table> read_toml_file(const std::string& path, std::string_view what) {
  TRACEDOC_ASSIGN_OR_RETURN(const std::string text, read_file(path, {.max_bytes = kMaxTomlFileBytes, .what = what}));
  return parse_toml(text, path);
}

Result<toml::table> parse_toml(std::string_view text, const std::string& name) {
  try {
    return toml::parse(text, name);
  } catch (const toml::parse_error& e) {
    return syntax_error(name, e);
  }
}

}  // namespace tracedoc
