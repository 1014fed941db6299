#include "model/kernel_names.h"

namespace tracedoc {

std::string_view short_kernel_name(std::string_view s) {
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  auto strip_group = [&](char open, char close) {
    if (s.empty() || s.back() != close) return;
    int depth = 0;
    for (size_t i = s.size(); i-- > 0;) {
      if (s[i] == close)
        ++depth;
      else if (s[i] == open && --depth == 0) {
        s = s.substr(0, i);
        return;
      }
    }
  };
  strip_group('(', ')');
  strip_group('<', '>');
  if (size_t colons = s.rfind("::"); colons != std::string_view::npos) s = s.substr(colons + 2);
  if (size_t space = s.rfind(' '); space != std::string_view::npos) s = s.substr(space + 1);
  return s.empty() ? std::string_view{} : s;
}

}  // namespace tracedoc
