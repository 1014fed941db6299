#include "model/emit_nvtx_names.h"

#include <algorithm>
#include <charconv>

namespace tracedoc {

namespace {

constexpr std::string_view kSeq = ", seq = ";
constexpr std::string_view kOpId = ", op_id = ";
constexpr std::string_view kSizes = ", sizes = ";
constexpr std::string_view kInputOpIds = ", input_op_ids = ";

// Where the attributes begin, npos for a name without them.
size_t attributes_at(std::string_view name) {
  size_t first = std::string_view::npos;
  for (std::string_view key : {kSeq, kOpId, kSizes, kInputOpIds}) first = std::min(first, name.find(key));
  return first;
}

// The integer after `key`, -1 when absent or not a number.
int64_t integer_after(std::string_view attributes, std::string_view key) {
  const size_t at = attributes.find(key);
  if (at == std::string_view::npos) return -1;
  const char* first = attributes.data() + at + key.size();
  int64_t v = 0;
  const auto [end, ec] = std::from_chars(first, attributes.data() + attributes.size(), v);
  return ec == std::errc() && end != first ? v : -1;
}

// The bracketed list after `key`, through its matching bracket; empty when absent or unbalanced.
std::string_view list_after(std::string_view attributes, std::string_view key) {
  const size_t at = attributes.find(key);
  if (at == std::string_view::npos) return {};
  const size_t open = at + key.size();
  if (open >= attributes.size() || attributes[open] != '[') return {};
  int depth = 0;
  for (size_t i = open; i < attributes.size(); ++i) {
    if (attributes[i] == '[') ++depth;
    if (attributes[i] == ']' && --depth == 0) return attributes.substr(open, i + 1 - open);
  }
  return {};
}

}  // namespace

std::optional<EmitNvtxName> parse_emit_nvtx_name(std::string_view name) {
  const size_t first = attributes_at(name);
  if (first == std::string_view::npos || first == 0) return std::nullopt;
  const std::string_view attributes = name.substr(first);
  EmitNvtxName out;
  out.name = name.substr(0, first);
  out.seq = integer_after(attributes, kSeq);
  out.op_id = integer_after(attributes, kOpId);
  out.sizes = list_after(attributes, kSizes);
  return out;
}

bool is_emit_nvtx_operator(const EmitNvtxName& e) {
  return !e.sizes.empty() || e.name.starts_with("autograd::engine::evaluate_function: ");
}

std::optional<EmitNvtxName> emit_nvtx_range(const Trace& t, size_t row) {
  const RangeTable& r = t.ranges;
  const auto kind = static_cast<RangeKind>(r.kind[row]);
  if (kind != RangeKind::kNvtxPushPop && kind != RangeKind::kNvtxtPushPop) return std::nullopt;
  if (r.text[row] == kNoStr || r.end[row] == kNoTime) return std::nullopt;
  return parse_emit_nvtx_name(t.str(r.text[row]));
}

bool range_is_operator(const Trace& t, size_t row) {
  const std::optional<EmitNvtxName> e = emit_nvtx_range(t, row);
  return e && is_emit_nvtx_operator(*e);
}

std::string_view without_emit_nvtx_attributes(std::string_view name) {
  const size_t first = attributes_at(name);
  return first == std::string_view::npos || first == 0 ? name : name.substr(0, first);
}

}  // namespace tracedoc
