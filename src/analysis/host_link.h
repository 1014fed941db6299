// The link between a GPU and its host, and its peak bandwidth, to judge how fast host <-> device
// copies ran.
//
// Neither input format records the link: nsys's TARGET_INFO_GPU has the GPU's name, bus location,
// memory size and device-memory bandwidth but no PCIe generation or width, and PyTorch's
// deviceProperties has the name, memory and SM figures only. So the link is looked up by GPU name
// in a small table (host_link.cpp), and a GPU not in the table (or with no name in the trace) is
// reported as unknown rather than guessed.
#pragma once

#include <cstdint>
#include <string_view>

namespace tracedoc {

struct HostLink {
  std::string_view name;        // "PCIe 4.0 x16", "NVLink-C2C"; empty when unknown
  double peak_bytes_per_s = 0;  // theoretical, one direction; 0 when unknown
  bool known() const { return peak_bytes_per_s > 0; }
};

// The host link of a GPU by its name as the trace records it ("NVIDIA A100-SXM4-80GB",
// "Tesla V100-DGXS-32GB", "AMD Instinct MI300X VF"); unknown when the name is not in the table.
HostLink host_link_for_gpu(std::string_view gpu_name);

// True for the copy kinds (CopyKind numbers) that cross the host link: host <-> device or array,
// including Unified Memory migrations between host and device.
bool crosses_host_link(uint8_t copy_kind);

}  // namespace tracedoc
