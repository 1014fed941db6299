// Small text helpers every layer uses, each written once: a split at a separator, every part kept
// ("a::b" -> "a", "", "b": report and rule arguments, option lists), ASCII lower case, and
// substring tests for matching names.
#pragma once

#include <cctype>
#include <initializer_list>
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

// ASCII letters lowered; other bytes (UTF-8 included) as they are.
inline std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// `part` occurs in `s` at or after `from`.
inline bool contains(std::string_view s, std::string_view part, size_t from = 0) {
  return from <= s.size() && s.find(part, from) != std::string_view::npos;
}

// Any of `parts` occurs in `s`.
inline bool contains_any(std::string_view s, std::initializer_list<std::string_view> parts) {
  for (std::string_view p : parts) {
    if (s.find(p) != std::string_view::npos) return true;
  }
  return false;
}

}  // namespace tracedoc
