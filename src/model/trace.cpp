#include "model/trace.h"

#include <cstdint>

namespace tracedoc {

namespace {
constexpr const char* kCopyLabels[] = {
    "Unknown",
    "Host-to-Device",
    "Device-to-Host",
    "Host-to-Array",
    "Array-to-Host",
    "Array-to-Array",
    "Array-to-Device",
    "Device-to-Array",
    "Device-to-Device",
    "Host-to-Host",
    "Peer-to-Peer",
    "Unified Host-to-Device",
    "Unified Device-to-Host",
    "Unified Device-to-Device",
};
constexpr const char* kMemKindLabels[] = {
    "Pageable", "Pinned", "Device", "Array", "Managed", "Device Static", "Managed Static", "Unknown",
};
}  // namespace

const char* copy_kind_label(uint8_t kind) { return kind < std::size(kCopyLabels) ? kCopyLabels[kind] : nullptr; }
const char* mem_kind_label(uint8_t kind) { return kind < std::size(kMemKindLabels) ? kMemKindLabels[kind] : nullptr; }

std::string Trace::copy_label(uint8_t kind) const {
  if (kind < copy_kind_labels.size() && !copy_kind_labels[kind].empty()) return copy_kind_labels[kind];
  const char* l = copy_kind_label(kind);
  return l ? l : "";
}

std::string Trace::mem_label(uint8_t kind) const {
  if (kind < mem_kind_labels.size() && !mem_kind_labels[kind].empty()) return mem_kind_labels[kind];
  const char* l = mem_kind_label(kind);
  return l ? l : "";
}

}  // namespace tracedoc
