// The peaks of the GPUs tracedoc knows: dense TFLOP/s per element type (the tensor cores' where the
// type has them, else the vector units') and memory bandwidth, from the vendors' datasheets
// (docs/flops.md gives each number's source). Matched by the device name the trace records
// ("NVIDIA H100 80GB HBM3", "Tesla V100-DGXS-32GB", "AMD Instinct MI300X VF"): the first entry whose
// pattern the name contains, case-insensitively, the more specific patterns first.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "analysis/pytorch/op_flops.h"
#include "common/status.h"

namespace tracedoc {

struct GpuPeaks {
  std::string_view name;                              // "H100 SXM5 80GB"
  std::array<double, pytorch::kDtypeCount> tflops{};  // dense, by Dtype; 0 where the GPU has no such unit
  double bandwidth_gbps = 0;                          // memory, GB/s (10^9 bytes)
  // The peak for a type: the type's own, else the next wider one the GPU has (fp8 on a GPU without
  // fp8 units runs as fp16; tf32 as fp32); 0 when none.
  double peak_tflops(pytorch::Dtype d) const;
};

// The entry for a device name (total memory in bytes tells the A100's 40 and 80 GB apart); nullopt
// for a GPU the table lacks.
std::optional<GpuPeaks> gpu_peaks(std::string_view device_name, int64_t total_memory = 0);

// Every entry, for the docs and the tests.
std::span<const GpuPeaks> known_gpu_peaks();

// GPUs the user describes, tried before the table (the CLI's --gpu-peaks FILE and --peak-tflops):
// a TOML file of [[gpu]] tables,
//
//   [[gpu]]
//   match = "RTX 5090"   # a part of the device name the trace records (case-insensitive); "" any GPU
//   name = "RTX 5090"    # optional: how reports name it (default: match)
//   bf16 = 209.5         # dense TFLOP/s per type: fp64, fp32, tf32, fp16, bf16, fp8, fp4, int8
//   fp32 = 104.8         #   (a type left out runs on the next wider one, as in the table)
//   bandwidth = 1792     # optional: memory GB/s
//
// Errors name the file, the table and the key. Set once, before any analysis runs (not thread-safe).
Status load_user_gpu_peaks(const std::string& path);
// Every GPU at `tflops` for every type (and `bandwidth_gbps` when > 0), before the file's entries.
void set_uniform_gpu_peak(double tflops, double bandwidth_gbps = 0);
// Back to the table alone (tests).
void clear_user_gpu_peaks();

}  // namespace tracedoc
