#include "model/step_names.h"

#include "model/emit_nvtx_names.h"

namespace tracedoc {

namespace {
constexpr std::string_view kPrefix = "ProfilerStep";
bool blank(char c) { return c == ' ' || c == '\t'; }
}  // namespace

std::optional<int64_t> profiler_step_number(std::string_view name) {
  // Every range's name passes here: the prefix first, emit_nvtx's attributes only on a match.
  if (!name.starts_with(kPrefix)) return std::nullopt;
  name = without_emit_nvtx_attributes(name);  // "ProfilerStep#3, op_id = 1" under emit_nvtx
  std::string_view rest = name.substr(kPrefix.size());
  while (!rest.empty() && blank(rest.front())) rest.remove_prefix(1);
  if (rest.empty() || rest.front() != '#') return std::nullopt;
  rest.remove_prefix(1);
  while (!rest.empty() && blank(rest.front())) rest.remove_prefix(1);
  while (!rest.empty() && blank(rest.back())) rest.remove_suffix(1);
  if (rest.empty()) return std::nullopt;
  int64_t n = 0;
  for (char c : rest) {
    if (c < '0' || c > '9' || n > (INT64_MAX - 9) / 10) return std::nullopt;
    n = n * 10 + (c - '0');
  }
  return n;
}

}  // namespace tracedoc
