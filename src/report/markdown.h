// Markdown pieces shared by the writers that print tables for pull-request comments.
#pragma once

#include <string>

namespace tracedoc {

// A table cell: pipes escaped, line breaks as spaces.
inline std::string markdown_cell(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '|')
      out += "\\|";
    else if (c == '\n')
      out += ' ';
    else
      out += c;
  }
  return out;
}

}  // namespace tracedoc
