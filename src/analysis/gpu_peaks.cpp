#include "analysis/gpu_peaks.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <deque>
#include <iterator>
#include <span>
#include <string>
#include <vector>

#include "common/toml_file.h"

namespace tracedoc {

namespace {

using pytorch::Dtype;

// Dense TFLOP/s by Dtype (unknown, fp64, fp32, tf32, fp16, bf16, fp8, fp4, int8) and GB/s. Tensor
// (matrix) units where the type has them: FP64 on A100/H100/MI2xx/MI300 is the FP64 tensor/matrix
// rate, which DGEMM reaches. Vendors quote sparse (2:4) rates with an asterisk; these are the dense
// ones (half). 0: the datasheet gives no such rate. docs/flops.md cites each datasheet.
struct Entry {
  std::string_view pattern;  // matched case-insensitively as a substring of the device name
  int64_t min_memory_gb;     // the entry applies from this much memory (0: any)
  GpuPeaks peaks;
};

constexpr double kNa = 0;

// clang-format off
constexpr Entry kTable[] = {
    //  pattern            mem   name                  fp64   fp32   tf32    fp16    bf16    fp8     fp4     int8    GB/s
    {"GB200",            0, {"GB200 (NVL72, per GPU)", {kNa, 45.0, kNa, 1250, 2500, 2500, 5000, 10000, 5000}, 8000}},
    {"B200",             0, {"B200 (HGX, per GPU)",    {kNa, 37.0, kNa, 1100, 2250, 2250, 4500, 9000, 4500}, 8000}},
    {"H200",             0, {"H200 SXM 141GB",         {kNa, 66.9, 66.9, 494.7, 989.4, 989.4, 1978.9, kNa, 1978.9}, 4800}},
    {"H100 NVL",         0, {"H100 NVL 94GB",          {kNa, 60.0, 60.0, 417.5, 835.5, 835.5, 1670.5, kNa, 1670.5}, 3900}},
    {"H100 PCIe",        0, {"H100 PCIe 80GB",         {kNa, 51.2, 51.2, 378.0, 756.5, 756.5, 1513.0, kNa, 1513.0}, 2000}},
    {"H100",             0, {"H100 SXM5 80GB",         {kNa, 66.9, 66.9, 494.7, 989.4, 989.4, 1978.9, kNa, 1978.9}, 3350}},
    {"A100 80GB PCIe",   0, {"A100 PCIe 80GB",         {kNa, 19.5, 19.5, 156.0, 312.0, 312.0, kNa, kNa, 624.0}, 1935}},
    {"A100-PCIE",        0, {"A100 PCIe 40GB",         {kNa, 19.5, 19.5, 156.0, 312.0, 312.0, kNa, kNa, 624.0}, 1555}},
    {"A100",            60, {"A100 SXM4 80GB",         {kNa, 19.5, 19.5, 156.0, 312.0, 312.0, kNa, kNa, 624.0}, 2039}},
    {"A100",             0, {"A100 SXM4 40GB",         {kNa, 19.5, 19.5, 156.0, 312.0, 312.0, kNa, kNa, 624.0}, 1555}},
    {"L40S",             0, {"L40S",                   {kNa, kNa, 91.6, 183.0, 362.0, 362.0, 733.0, kNa, 733.0}, 864}},
    {"L40",              0, {"L40",                    {kNa, kNa, 90.5, 90.5, 181.0, 181.0, 362.0, kNa, 362.0}, 864}},
    {"L4",               0, {"L4",                     {kNa, kNa, 30.3, 60.0, 121.0, 121.0, 242.0, kNa, 242.0}, 300}},
    {"V100-PCIE",        0, {"V100 PCIe",              {kNa, 7.0, 14.0, kNa, 112.0, kNa, kNa, kNa, kNa}, 900}},
    {"V100",             0, {"V100 SXM2",              {kNa, 7.8, 15.7, kNa, 125.0, kNa, kNa, kNa, kNa}, 900}},
    {"RTX 4090",         0, {"GeForce RTX 4090",       {kNa, kNa, 82.6, 82.6, 165.2, 165.2, 330.3, kNa, 660.6}, 1008}},
    {"RTX 3090",         0, {"GeForce RTX 3090",       {kNa, kNa, 35.6, 35.6, 71.0, 71.0, kNa, kNa, 284.0}, 936}},
    {"RTX 3080",         0, {"GeForce RTX 3080",       {kNa, kNa, 29.8, 29.8, 59.5, 59.5, kNa, kNa, 238.0}, 760}},
    {"T4",               0, {"T4",                     {kNa, kNa, 8.1, kNa, 65.0, kNa, kNa, kNa, 130.0}, 320}},
    {"GP100",            0, {"Quadro GP100",           {kNa, 5.2, 10.3, kNa, 20.7, kNa, kNa, kNa, kNa}, 717}},
    {"MI325X",           0, {"Instinct MI325X",        {kNa, 163.4, 163.4, 653.7, 1307.4, 1307.4, 2614.9, kNa, 2614.9}, 6000}},
    {"MI300X",           0, {"Instinct MI300X",        {kNa, 163.4, 163.4, 653.7, 1307.4, 1307.4, 2614.9, kNa, 2614.9}, 5300}},
    {"MI250X",           0, {"Instinct MI250X",        {kNa, 95.7, 95.7, kNa, 383.0, 383.0, kNa, kNa, 383.0}, 3277}},
    {"MI250",            0, {"Instinct MI250",         {kNa, 90.5, 90.5, kNa, 362.1, 362.1, kNa, kNa, 362.1}, 3277}},
    {"MI210",            0, {"Instinct MI210",         {kNa, 45.3, 45.3, kNa, 181.0, 181.0, kNa, kNa, 181.0}, 1638}},
};
// clang-format on

bool contains_case_insensitive(std::string_view text, std::string_view pattern) {
  return std::search(text.begin(), text.end(), pattern.begin(), pattern.end(), [](char a, char b) {
           return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
         }) != text.end();
}

// The user's GPUs (load_user_gpu_peaks): their texts live here, the GpuPeaks view them.
struct UserEntry {
  std::string pattern, name;
  GpuPeaks peaks;
};
std::deque<UserEntry>& user_entries() {
  static std::deque<UserEntry> entries;
  return entries;
}

std::array<GpuPeaks, std::size(kTable)> all_peaks() {
  std::array<GpuPeaks, std::size(kTable)> out{};
  for (size_t i = 0; i < std::size(kTable); ++i) out[i] = kTable[i].peaks;
  return out;
}

}  // namespace

double GpuPeaks::peak_tflops(Dtype d) const {
  // A type the GPU has no units for runs on the next wider one it has: fp4 as fp8, fp8 and bf16 as
  // fp16, tf32 as fp32.
  for (int hops = 0; hops < 4; ++hops) {
    const double t = tflops[static_cast<size_t>(d)];
    if (t > 0 || d == Dtype::kUnknown) return t;
    switch (d) {
      case Dtype::kFp4: d = Dtype::kFp8; break;
      case Dtype::kFp8: d = Dtype::kFp16; break;
      case Dtype::kBf16: d = Dtype::kFp16; break;
      case Dtype::kTf32: d = Dtype::kFp32; break;
      default: return 0;
    }
  }
  return 0;
}

std::optional<GpuPeaks> gpu_peaks(std::string_view device_name, int64_t total_memory) {
  for (const UserEntry& u : user_entries()) {
    if (contains_case_insensitive(device_name, u.pattern)) return u.peaks;
  }
  for (const Entry& e : kTable) {
    if (e.min_memory_gb > 0 && total_memory < e.min_memory_gb * (int64_t{1} << 30)) continue;
    if (contains_case_insensitive(device_name, e.pattern)) return e.peaks;
  }
  return std::nullopt;
}

std::span<const GpuPeaks> known_gpu_peaks() {
  static const auto peaks = all_peaks();
  return peaks;
}

std::optional<GpuPeaks> gpu_peaks_from_clock(std::string_view name, int32_t compute_major, int32_t compute_minor,
                                             int32_t sm_count, int64_t clock_hz, int64_t bandwidth_bytes_per_s) {
  if (sm_count <= 0 || clock_hz <= 0) return std::nullopt;
  // Dense FLOPs per SM per clock (a fused multiply-add is 2) by Dtype: unknown, fp64, fp32, tf32,
  // fp16, bf16, fp8, fp4, int8 (ops); the tensor rates with FP32 accumulation, as PyTorch computes.
  // Each matches the architecture's whitepaper figures for its table GPUs at their boost clock
  // (docs/flops.md); `geforce` holds the GeForce parts' rates where they differ.
  struct Architecture {
    int32_t major, minor;
    std::array<double, pytorch::kDtypeCount> rate, geforce;
  };
  // Turing parts without tensor cores (GeForce GTX 16, TU116/TU117; the small Quadro T-series):
  // FP16 on the vector units at twice the FP32 rate.
  static constexpr std::array<double, pytorch::kDtypeCount> kTuringWithoutTensorCores = {0, 4, 128, 0, 256, 0, 0, 0, 0};
  static constexpr std::string_view kWithoutTensorCores[] = {"GTX",   " T400",  " T500", " T550",
                                                             " T600", " T1000", " T1200"};
  // clang-format off
  static constexpr Architecture kArchitectures[] = {
      //  cc        unk  fp64  fp32  tf32  fp16  bf16  fp8   fp4  int8
      {6, 0, {0,   64,  128,    0,  256,    0,    0,  0,    0}, {}},   // Pascal GP100
      {6, 1, {0,    8,  256,    0,    4,    0,    0,  0,    0}, {}},   // Pascal GP10x: FP16 at 1/64
      {7, 0, {0,   64,  128,    0, 1024,    0,    0,  0,    0}, {}},   // Volta
      {7, 5, {0,    4,  128,    0, 1024,    0,    0,  0, 2048},          // Turing
             {0,    4,  128,    0,  512,    0,    0,  0, 2048}},
      {8, 0, {0,  128,  128, 1024, 2048, 2048,    0,  0, 4096}, {}},   // Ampere GA100
      {8, 6, {0,    4,  256,  512, 1024, 1024,    0,  0, 2048},          // Ampere GA10x
             {0,    4,  256,  256,  512,  512,    0,  0, 2048}},
      {8, 9, {0,    4,  256,  512, 1024, 1024, 2048,  0, 2048},          // Ada
             {0,    4,  256,  256,  512,  512, 1024,  0, 2048}},
      {12, 0, {0,   4,  256,    0,    0,    0,    0,  0,    0}, {}},   // Blackwell GB20x: vector units only
  };
  // clang-format on
  const auto* arch = std::find_if(std::begin(kArchitectures), std::end(kArchitectures), [&](const Architecture& a) {
    return a.major == compute_major && a.minor == compute_minor;
  });
  if (arch == std::end(kArchitectures)) return std::nullopt;
  const bool geforce = contains_case_insensitive(name, "GeForce") && arch->geforce[2] > 0;
  const bool no_tensor_cores =
      arch->major == 7 && arch->minor == 5 &&
      std::any_of(std::begin(kWithoutTensorCores), std::end(kWithoutTensorCores),
                  [&](std::string_view part) { return contains_case_insensitive(name, part); });
  const std::array<double, pytorch::kDtypeCount>& rate = no_tensor_cores ? kTuringWithoutTensorCores
                                                         : geforce       ? arch->geforce
                                                                         : arch->rate;
  GpuPeaks p;
  p.name = name;
  p.from_clock = true;
  const double sm_clocks = static_cast<double>(sm_count) * static_cast<double>(clock_hz);
  for (size_t t = 0; t < rate.size(); ++t) p.tflops[t] = rate[t] * sm_clocks / 1e12;
  p.bandwidth_gbps = static_cast<double>(bandwidth_bytes_per_s) / 1e9;
  return p;
}

Status load_user_gpu_peaks(const std::string& path) {
  Result<toml::table> root = read_toml_file(path);
  if (!root.ok()) return root.status();
  static constexpr std::pair<std::string_view, Dtype> kTypes[] = {
      {"fp64", Dtype::kFp64}, {"fp32", Dtype::kFp32}, {"tf32", Dtype::kTf32}, {"fp16", Dtype::kFp16},
      {"bf16", Dtype::kBf16}, {"fp8", Dtype::kFp8},   {"fp4", Dtype::kFp4},   {"int8", Dtype::kInt8}};
  std::vector<UserEntry> read;
  for (const auto& [key, node] : *root) {
    if (key.str() != "gpu" || !node.is_array_of_tables())
      return BadInput(fmt::format("{}: unknown key '{}' (expected [[gpu]] tables)", path, key.str()));
    size_t index = 0;
    for (const toml::node& item : *node.as_array()) {
      ++index;
      const toml::table& t = *item.as_table();
      UserEntry e;
      bool has_match = false, has_peak = false;
      for (const auto& [k, v] : t) {
        const std::string where = fmt::format("{}: gpu {}: {}", path, index, k.str());
        if (k.str() == "match" || k.str() == "name") {
          if (!v.is_string()) return BadInput(where + " must be a string");
          (k.str() == "match" ? e.pattern : e.name) = *v.value<std::string>();
          has_match = has_match || k.str() == "match";
          continue;
        }
        const std::optional<double> number = v.value<double>();
        if (!number || !(*number > 0) || !std::isfinite(*number))
          return BadInput(where + " must be a positive number (TFLOP/s, or GB/s for bandwidth)");
        if (k.str() == "bandwidth") {
          e.peaks.bandwidth_gbps = *number;
          continue;
        }
        const auto* type =
            std::find_if(std::begin(kTypes), std::end(kTypes), [&](const auto& p) { return p.first == k.str(); });
        if (type == std::end(kTypes))
          return BadInput(where +
                          ": unknown key (expected match, name, bandwidth, fp64, fp32, tf32, fp16, bf16, fp8, "
                          "fp4 or int8)");
        e.peaks.tflops[static_cast<size_t>(type->second)] = *number;
        has_peak = true;
      }
      if (!has_match) return BadInput(fmt::format("{}: gpu {}: has no match (a part of the device name)", path, index));
      if (!has_peak) return BadInput(fmt::format("{}: gpu {}: has no peak (fp32 = TFLOPS, bf16 = ...)", path, index));
      if (e.name.empty()) e.name = e.pattern.empty() ? "--gpu-peaks" : e.pattern;
      read.push_back(std::move(e));
    }
  }
  for (UserEntry& e : read) {
    UserEntry& kept = user_entries().emplace_back(std::move(e));
    kept.peaks.name = kept.name;  // the deque keeps the text where it is
  }
  return Status::Ok();
}

void set_uniform_gpu_peak(double tflops, double bandwidth_gbps) {
  UserEntry e{"", "--peak-tflops", {}};
  e.peaks.tflops.fill(tflops);
  e.peaks.tflops[static_cast<size_t>(Dtype::kUnknown)] = 0;
  e.peaks.bandwidth_gbps = bandwidth_gbps;
  UserEntry& kept = user_entries().emplace_front(std::move(e));
  kept.peaks.name = kept.name;
}

void clear_user_gpu_peaks() { user_entries().clear(); }

}  // namespace tracedoc
