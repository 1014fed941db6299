// Text split at a separator, every part kept ("a::b" -> "a", "", "b"): report and rule arguments,
// option lists.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace tracedoc {

inline std::vector<std::string> split(std::string_view text, char sep) {
  std::vector<std::string> parts;
  for (size_t from = 0;;) {
    const size_t at = text.find(sep, from);
    parts.emplace_back(text.substr(from, at == std::string_view::npos ? std::string_view::npos : at - from));
    if (at == std::string_view::npos) return parts;
    from = at + 1;
  }
}

}  // namespace tracedoc
