#include "analysis/host_link.h"

#include <string>

#include "model/trace.h"

namespace tracedoc {

namespace {

// Theoretical unidirectional PCIe bandwidth: transfer rate per lane x lanes x the 128b/130b line
// code of generations 3 to 5, in bytes. x16: Gen3 15.75 GB/s, Gen4 31.5 GB/s, Gen5 63.0 GB/s (the
// "16 / 32 / 64 GB/s" of the vendors' data sheets). Copies reach about 80% of it in practice
// (packet headers, DMA setup): pinned host-to-device copies on an A100 (Gen4 x16) peak near 25 GB/s.
constexpr double pcie_bytes_per_s(double giga_transfers_per_s, int lanes) {
  return giga_transfers_per_s * 1e9 * lanes * 128.0 / 130.0 / 8.0;
}
constexpr double kGen3x16 = pcie_bytes_per_s(8, 16);
constexpr double kGen4x8 = pcie_bytes_per_s(16, 8);
constexpr double kGen4x16 = pcie_bytes_per_s(16, 16);
constexpr double kGen5x8 = pcie_bytes_per_s(32, 8);
constexpr double kGen5x16 = pcie_bytes_per_s(32, 16);
// Grace Hopper / Grace Blackwell: the GPU reaches the Grace CPU's memory over NVLink-C2C,
// 900 GB/s both directions together, 450 GB/s each way.
constexpr double kNvlinkC2C = 450e9;

struct HostLinkEntry {
  const char* pattern;  // upper-case substring of the GPU name; the first match wins
  const char* link;
  double bytes_per_s;
};

// The host interface of each GPU as its maker's data sheet gives it. Order matters where one
// pattern contains another (GH200 before H200, A100 before A10). Laptop parts come first and stay
// unknown: their lane count depends on the laptop (x4, x8 or x16).
constexpr HostLinkEntry kHostLinks[] = {
    {"LAPTOP", nullptr, 0},
    {"MAX-Q", nullptr, 0},
    {"MOBILE", nullptr, 0},
    // NVIDIA Grace superchips.
    {"GH200", "NVLink-C2C", kNvlinkC2C},
    {"GB200", "NVLink-C2C", kNvlinkC2C},
    // NVIDIA data center, Blackwell and Hopper: PCIe 5.0 x16 (SXM and PCIe boards alike).
    {"B200", "PCIe 5.0 x16", kGen5x16},
    {"B100", "PCIe 5.0 x16", kGen5x16},
    {"H100", "PCIe 5.0 x16", kGen5x16},
    {"H200", "PCIe 5.0 x16", kGen5x16},
    {"H800", "PCIe 5.0 x16", kGen5x16},
    {"H20", "PCIe 5.0 x16", kGen5x16},
    // Ampere and Ada: PCIe 4.0.
    {"A100", "PCIe 4.0 x16", kGen4x16},
    {"A800", "PCIe 4.0 x16", kGen4x16},
    {"RTX A", "PCIe 4.0 x16", kGen4x16},  // RTX A2000 ... A6000
    {"A10", "PCIe 4.0 x16", kGen4x16},    // A10, A10G
    {"A30", "PCIe 4.0 x16", kGen4x16},
    {"A40", "PCIe 4.0 x16", kGen4x16},
    {" L4", "PCIe 4.0 x16", kGen4x16},  // L4, L40, L40S
    {"RTX 6000 ADA", "PCIe 4.0 x16", kGen4x16},
    // GeForce: the x8 boards are named one by one.
    {"RTX 5060", "PCIe 5.0 x8", kGen5x8},
    {"RTX 5070", "PCIe 5.0 x16", kGen5x16},
    {"RTX 5080", "PCIe 5.0 x16", kGen5x16},
    {"RTX 5090", "PCIe 5.0 x16", kGen5x16},
    {"RTX 4060", "PCIe 4.0 x8", kGen4x8},  // 4060 and 4060 Ti
    {"RTX 4070", "PCIe 4.0 x16", kGen4x16},
    {"RTX 4080", "PCIe 4.0 x16", kGen4x16},
    {"RTX 4090", "PCIe 4.0 x16", kGen4x16},
    {"RTX 3050", "PCIe 4.0 x8", kGen4x8},
    {"RTX 3060", "PCIe 4.0 x16", kGen4x16},
    {"RTX 3070", "PCIe 4.0 x16", kGen4x16},
    {"RTX 3080", "PCIe 4.0 x16", kGen4x16},
    {"RTX 3090", "PCIe 4.0 x16", kGen4x16},
    // Turing, Volta, Pascal: PCIe 3.0 x16.
    {"RTX 20", "PCIe 3.0 x16", kGen3x16},
    {"GTX 16", "PCIe 3.0 x16", kGen3x16},
    {"QUADRO RTX", "PCIe 3.0 x16", kGen3x16},
    {"TITAN", "PCIe 3.0 x16", kGen3x16},
    {"T4", "PCIe 3.0 x16", kGen3x16},
    {"V100", "PCIe 3.0 x16", kGen3x16},
    {"P100", "PCIe 3.0 x16", kGen3x16},
    {"GP100", "PCIe 3.0 x16", kGen3x16},
    {"GTX 10", "PCIe 3.0 x16", kGen3x16},
    // AMD Instinct (virtual functions, "MI300X VF", share the physical link).
    {"MI355", "PCIe 5.0 x16", kGen5x16},
    {"MI350", "PCIe 5.0 x16", kGen5x16},
    {"MI325", "PCIe 5.0 x16", kGen5x16},
    {"MI300X", "PCIe 5.0 x16", kGen5x16},
    {"MI250", "PCIe 4.0 x16", kGen4x16},
    {"MI210", "PCIe 4.0 x16", kGen4x16},
    {"MI100", "PCIe 4.0 x16", kGen4x16},
};

}  // namespace

HostLink host_link_for_gpu(std::string_view gpu_name) {
  std::string upper(gpu_name);
  for (char& c : upper) {
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  }
  for (const HostLinkEntry& e : kHostLinks) {
    if (upper.find(e.pattern) == std::string::npos) continue;
    if (!e.link) return {};
    return {e.link, e.bytes_per_s};
  }
  return {};
}

bool crosses_host_link(uint8_t copy_kind) {
  switch (static_cast<CopyKind>(copy_kind)) {
    case CopyKind::kHtoD:
    case CopyKind::kDtoH:
    case CopyKind::kHtoA:
    case CopyKind::kAtoH:
    case CopyKind::kUvmHtoD:
    case CopyKind::kUvmDtoH: return true;
    default: return false;
  }
}

}  // namespace tracedoc
