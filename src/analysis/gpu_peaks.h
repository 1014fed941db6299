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
  bool from_clock = false;                            // gpu_peaks_from_clock made it, not the table
  // The peak for a type: the type's own, else the next wider one the GPU has (fp8 on a GPU without
  // fp8 units runs as fp16; tf32 as fp32); 0 when none.
  double peak_tflops(pytorch::Dtype d) const;
};

// The entry for a device name (total memory in bytes tells the A100's 40 and 80 GB apart); nullopt
// for a GPU the table lacks.
std::optional<GpuPeaks> gpu_peaks(std::string_view device_name, int64_t total_memory = 0);

// Every entry, for the docs and the tests.
std::span<const GpuPeaks> known_gpu_peaks();

// A GPU from what the trace recorded of it (nsys's TARGET_INFO_GPU, ncu's device attributes): its
// SM count times its SMs' peak clock times its architecture's dense FLOPs per SM per clock
// (docs/flops.md: the ratios of NVIDIA's architecture whitepapers, which the table's GPUs follow),
// and the memory bandwidth it recorded. Architectures by compute capability: 6.0, 6.1, 7.0, 7.5,
// 8.0, 8.6, 8.9, and 12.0 without its tensor rates (not published per accumulate type); GeForce
// parts run FP16/BF16/TF32/FP8 tensor math with FP32 accumulation at half the rate of the data
// center and workstation parts. `name` is kept as given (a view into the trace's strings).
// nullopt without an SM count, a clock or a known architecture.
std::optional<GpuPeaks> gpu_peaks_from_clock(std::string_view name, int32_t compute_major, int32_t compute_minor,
                                             int32_t sm_count, int64_t clock_hz, int64_t bandwidth_bytes_per_s);

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
