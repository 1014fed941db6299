// Tests of the colour schemes of `tracedoc view`: the presets against real kernel, copy and API
// names, TOML and XML files written to a temporary folder, and the errors of bad files.
#include "test_support.h"
#include "view/color_scheme.h"
#include "view/op_peaks.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace tracedoc::view {
namespace {

namespace fs = std::filesystem;

// Real names from nsys exports and PyTorch traces.
constexpr const char* kSgemm = "ampere_sgemm_128x64_nn";
constexpr const char* kElementwise =
    "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, "
    "at::detail::Array<char *, 3>>(int, T2, T3)";
constexpr const char* kNccl = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)";
constexpr const char* kMemcpy = "Memcpy HtoD (Pageable -> Device)";

uint32_t rgb_of(const ColorScheme& s, Category c, std::string_view name, bool critical = false) {
  return s.palette().at(s.color_of(c, name, critical)).rgb;
}

std::string label_of(const ColorScheme& s, Category c, std::string_view name, bool critical = false) {
  return s.palette().at(s.color_of(c, name, critical)).label;
}

// Loads a file that must fail; returns the message.
std::string load_error(const std::string& path) {
  const Result<ColorScheme> r = ColorScheme::load(path);
  EXPECT_FALSE(r.ok()) << path << " loaded";
  return r.ok() ? "" : r.status().message();
}

// Loading `text` as a scheme file fails with a message naming the file and holding every part.
void expect_load_error(const tracedoc::testing::ScratchDir& dir, const std::string& file, const std::string& text,
                       const std::vector<std::string>& parts) {
  const std::string path = dir.write(file, text);
  const std::string message = load_error(path);
  EXPECT_NE(message.find(path), std::string::npos) << message;
  for (const std::string& p : parts)
    EXPECT_NE(message.find(p), std::string::npos) << "'" << p << "' not in: " << message;
}

TRACEDOC_TEST_LABELS(ColorScheme, unit);

TEST(ColorScheme, CategoryNames) {
  for (size_t i = 0; i < kCategoryCount; ++i) {
    Category c;
    ASSERT_TRUE(parse_category(category_name(static_cast<Category>(i)), &c)) << i;
    EXPECT_EQ(static_cast<size_t>(c), i);
  }
  Category c;
  EXPECT_TRUE(parse_category("os_call", &c));
  EXPECT_EQ(c, Category::kOsCall);
  EXPECT_TRUE(parse_category("Kernel", &c));
  EXPECT_EQ(c, Category::kKernel);
  EXPECT_FALSE(parse_category("any", &c));
  EXPECT_FALSE(parse_category("kernels", &c));
  EXPECT_STREQ(category_name(Category::kGpuAnnotation), "gpu_annotation");
  EXPECT_STREQ(category_label(Category::kApi), "CUDA API");

  uint16_t mask = 0;
  EXPECT_TRUE(parse_category_mask("kernel | memcpy", &mask));
  EXPECT_EQ(mask, category_bit(Category::kKernel) | category_bit(Category::kMemcpy));
  EXPECT_TRUE(parse_category_mask("api,os", &mask));
  EXPECT_EQ(mask, category_bit(Category::kApi) | category_bit(Category::kOsCall));
  EXPECT_TRUE(parse_category_mask("any", &mask));
  EXPECT_EQ(mask, kAnyCategory);
  EXPECT_FALSE(parse_category_mask("", &mask));
  EXPECT_FALSE(parse_category_mask("kernel,,memcpy", &mask));
  EXPECT_FALSE(parse_category_mask("kernel,gpu", &mask));
  EXPECT_EQ(rgb_hex(0xd62728), "#d62728");
  EXPECT_EQ(rgb_hex(0xff000001), "#000001");
}

TEST(ColorScheme, DefaultsAreOneColourPerCategory) {
  const ColorScheme s = ColorScheme::defaults();
  EXPECT_EQ(s.name(), "default");
  ASSERT_EQ(s.palette().size(), kCategoryCount);
  EXPECT_TRUE(s.rules().empty());
  EXPECT_FALSE(s.uses_critical_path());
  EXPECT_EQ(s.palette()[0].label, "kernel");
  EXPECT_EQ(s.palette()[1].label, "memory copy");
  EXPECT_EQ(s.palette()[8].label, "OS call");
  EXPECT_EQ(s.palette()[0].rgb, 0x4e79a7u);
  for (size_t i = 0; i < kCategoryCount; ++i) {
    for (size_t j = i + 1; j < kCategoryCount; ++j) EXPECT_NE(s.palette()[i].rgb, s.palette()[j].rgb) << i << " " << j;
  }
  EXPECT_EQ(s.color_of(Category::kKernel, kSgemm, true), 0);
  EXPECT_EQ(s.color_of(Category::kMemcpy, kMemcpy, false), 1);
  EXPECT_EQ(s.color_of(Category::kApi, "cudaStreamSynchronize", false), 5);
  EXPECT_EQ(s.color_of(Category::kOsCall, "futex", false), 8);
  const ColorScheme held;  // default-constructed: the same scheme
  EXPECT_EQ(held.name(), "default");
  ASSERT_EQ(held.palette().size(), kCategoryCount);
  EXPECT_EQ(held.palette()[3].rgb, s.palette()[3].rgb);
  EXPECT_EQ(held.color_of(Category::kSync, "Wait on event", false), 3);
  const Result<ColorScheme> loaded = ColorScheme::load("default");
  ASSERT_TRUE(loaded.ok());
  EXPECT_EQ(loaded->palette().size(), kCategoryCount);
}

TEST(ColorScheme, CriticalPresetOnRealNames) {
  const Result<ColorScheme> loaded = ColorScheme::load("critical");
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  const ColorScheme& s = *loaded;
  EXPECT_EQ(s.name(), "critical");
  EXPECT_TRUE(s.uses_critical_path());

  EXPECT_EQ(rgb_of(s, Category::kKernel, kSgemm, true), 0xd62728u);
  EXPECT_EQ(label_of(s, Category::kKernel, kSgemm, true), "kernel on the critical path");
  EXPECT_EQ(rgb_of(s, Category::kKernel, kSgemm, false), 0x2ca02cu);
  EXPECT_EQ(label_of(s, Category::kKernel, kSgemm, false), "compute-heavy kernel");
  EXPECT_EQ(rgb_of(s, Category::kKernel, "sm90_xmma_gemm_f16f16_f16f32_f32_tn_n_tilesize128x128x64", false), 0x2ca02cu);
  EXPECT_EQ(rgb_of(s, Category::kKernel, "void flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4>>", false),
            0x2ca02cu);
  EXPECT_EQ(rgb_of(s, Category::kKernel, "void cutlass::Kernel2<cutlass_80_wmma_tensorop_h161616gemm>", false),
            0x2ca02cu);

  // An elementwise kernel off the critical path is "other kernel": the category's grey.
  EXPECT_EQ(s.color_of(Category::kKernel, kElementwise, false), 0);
  EXPECT_EQ(s.palette()[0].label, "other kernel");
  EXPECT_EQ(rgb_of(s, Category::kKernel, kElementwise, true), 0xd62728u);

  EXPECT_EQ(rgb_of(s, Category::kKernel, kNccl, false), 0x1f77b4u);
  EXPECT_EQ(label_of(s, Category::kKernel, kNccl, false), "communication");

  // Memory operations share one swatch, whatever the category said.
  const uint16_t memory = s.color_of(Category::kMemcpy, kMemcpy, false);
  EXPECT_EQ(s.palette()[memory].rgb, 0xf1c232u);
  EXPECT_EQ(s.palette()[memory].label, "memory operation");
  EXPECT_EQ(s.color_of(Category::kMemcpy, kMemcpy, true), memory);
  EXPECT_EQ(s.color_of(Category::kMemset, "Memset (Device)", false), memory);
  EXPECT_EQ(s.color_of(Category::kKernel, "void thrust::cuda_cub::core::_kernel_agent<__memset>", false), memory);

  const uint16_t sync = s.color_of(Category::kApi, "cudaStreamSynchronize", false);
  EXPECT_EQ(s.palette()[sync].rgb, 0x8e44adu);
  EXPECT_EQ(s.palette()[sync].label, "sync wait");
  EXPECT_EQ(s.color_of(Category::kApi, "cudaStreamWaitEvent", false), sync);
  EXPECT_EQ(s.color_of(Category::kSync, "Wait on event", false), sync);
  EXPECT_EQ(s.color_of(Category::kOsCall, "pthread_cond_wait", false), sync);
  EXPECT_EQ(s.color_of(Category::kOsCall, "epoll_wait", false), sync);
  EXPECT_EQ(s.color_of(Category::kApi, "cudaLaunchKernel", false), 5);
  EXPECT_EQ(s.palette()[5].label, "other CUDA API");
  EXPECT_EQ(s.color_of(Category::kOsCall, "ioctl", false), 8);

  const uint16_t op = s.color_of(Category::kOp, "aten::addmm", false);
  EXPECT_EQ(s.palette()[op].rgb, 0x2ca02cu);
  EXPECT_EQ(s.palette()[op].label, "compute-heavy operator");
  EXPECT_NE(op, s.color_of(Category::kKernel, kSgemm, false));  // same colour, another legend line
  EXPECT_EQ(s.color_of(Category::kOp, "aten::_scaled_dot_product_flash_attention", false), op);
  EXPECT_EQ(s.color_of(Category::kOp, "aten::convolution", false), op);
  EXPECT_EQ(s.color_of(Category::kOp, "aten::add_", false), 7);
  // A kernel-only rule does not colour an operator of the same name.
  EXPECT_EQ(s.color_of(Category::kOp, "gemm", false), 7);
  EXPECT_EQ(s.color_of(Category::kRange, "forward", true), 6);

  // Copies of a scheme share the compiled patterns and outlive the original.
  ColorScheme copy = ColorScheme::defaults();
  {
    const ColorScheme original = ColorScheme::critical_preset();
    copy = original;
  }
  EXPECT_EQ(rgb_of(copy, Category::kKernel, kNccl, false), 0x1f77b4u);
}

TEST(ColorScheme, TomlRulesGoBeforeThePreset) {
  tracedoc::testing::ScratchDir dir;
  const std::string path = dir.write("colors.toml", R"(
preset = "critical"
[[rule]]
category = "kernel"
name = "SGEMM"
ignore_case = true
color = "#123456"
label = "SGEMM"
[[rule]]
category = ["api", "os"]
name = "Synchronize"
critical = false
color = "#abc"
[[rule]]
category = "memcpy"
color = 0xFF00FF00
[default]
kernel = "#888888"
range = { color = "0x00AABBCC", label = "NVTX range" }
)");
  const Result<ColorScheme> loaded = ColorScheme::load(path);
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  const ColorScheme& s = *loaded;
  EXPECT_EQ(s.name(), path);
  EXPECT_TRUE(s.uses_critical_path());
  ASSERT_EQ(s.rules().size(), 3u + ColorScheme::critical_preset().rules().size());
  EXPECT_EQ(s.rules()[0].pattern, "SGEMM");
  EXPECT_TRUE(s.rules()[0].ignore_case);

  // The file's rule wins over the preset's critical-path rule.
  EXPECT_EQ(rgb_of(s, Category::kKernel, kSgemm, true), 0x123456u);
  EXPECT_EQ(label_of(s, Category::kKernel, kSgemm, false), "SGEMM");
  // Rules the file does not override still apply, and [default] replaces the preset's grey.
  EXPECT_EQ(rgb_of(s, Category::kKernel, kElementwise, true), 0xd62728u);
  EXPECT_EQ(rgb_of(s, Category::kKernel, kElementwise, false), 0x888888u);
  EXPECT_EQ(s.palette()[0].label, "other kernel");
  EXPECT_EQ(s.palette()[6].rgb, 0xaabbccu);
  EXPECT_EQ(s.palette()[6].label, "NVTX range");

  // #abc = #aabbcc; the label defaults to the pattern and says which side of the path it takes.
  EXPECT_EQ(rgb_of(s, Category::kApi, "cudaStreamSynchronize", false), 0xaabbccu);
  EXPECT_EQ(label_of(s, Category::kApi, "cudaStreamSynchronize", false), "Synchronize (off the critical path)");
  EXPECT_EQ(rgb_of(s, Category::kApi, "cudaStreamSynchronize", true), 0x8e44adu);  // the preset's sync rule
  EXPECT_EQ(s.color_of(Category::kApi, "cudaLaunchKernel", false), 5);

  // An integer ARGB loses its alpha byte; the label names the category.
  EXPECT_EQ(rgb_of(s, Category::kMemcpy, kMemcpy), 0x00ff00u);
  EXPECT_EQ(label_of(s, Category::kMemcpy, kMemcpy), "memory copy");
  EXPECT_EQ(rgb_of(s, Category::kMemset, "Memset (Device)"), 0xf1c232u);
}

TEST(ColorScheme, TomlWithoutPresetStartsFromTheDefaults) {
  tracedoc::testing::ScratchDir dir;
  const std::string path = dir.write("plain.toml", "[[rule]]\nname = \"nccl\"\ncolor = \"#ff0000\"\n");
  const Result<ColorScheme> loaded = ColorScheme::load(path);
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  EXPECT_FALSE(loaded->uses_critical_path());
  ASSERT_EQ(loaded->rules().size(), 1u);
  EXPECT_EQ(loaded->rules()[0].categories, kAnyCategory);
  ASSERT_EQ(loaded->palette().size(), kCategoryCount + 1);
  EXPECT_EQ(loaded->color_of(Category::kKernel, kNccl, false), kCategoryCount);
  EXPECT_EQ(loaded->color_of(Category::kKernel, kSgemm, false), 0);
  EXPECT_EQ(loaded->palette()[0].rgb, 0x4e79a7u);

  // An empty file is the default scheme under the file's name.
  const Result<ColorScheme> empty = ColorScheme::load(dir.write("empty.toml", "\n"));
  ASSERT_TRUE(empty.ok()) << empty.status().message();
  EXPECT_TRUE(empty->rules().empty());
}

TEST(ColorScheme, TomlErrorsNameTheFileAndTheRule) {
  tracedoc::testing::ScratchDir dir;
  const auto expect_error = [&](const std::string& file, const std::string& text,
                                const std::vector<std::string>& parts) { expect_load_error(dir, file, text, parts); };
  expect_error("color.toml", "[[rule]]\ncolor = \"#12345\"\n", {"rule 1: color", "bad colour '#12345'"});
  expect_error("hex.toml", "[[rule]]\ncolor = \"0x12345g\"\n", {"rule 1: color"});
  expect_error("argb.toml", "[[rule]]\ncolor = 4294967296\n", {"rule 1: color"});
  expect_error("key.toml", "[[rule]]\ncolor = \"#123456\"\n[[rule]]\ncolour = \"#123456\"\n",
               {"rule 2: colour", "unknown key"});
  expect_error("top.toml", "presets = \"critical\"\n", {"presets", "unknown key"});
  expect_error("regex.toml", "[[rule]]\nname = \"(\"\ncolor = \"#123456\"\n",
               {":2:", "rule 1: name", "bad regular expression '('"});
  expect_error("category.toml", "[[rule]]\ncategory = \"kernal\"\ncolor = \"#123456\"\n",
               {"rule 1: category", "unknown category 'kernal'"});
  expect_error("list.toml", "[[rule]]\ncategory = [\"kernel\", 3]\ncolor = \"#123456\"\n", {"rule 1: category"});
  expect_error("nocolor.toml", "[[rule]]\nname = \"gemm\"\n", {"rule 1", "has no color"});
  expect_error("bool.toml", "[[rule]]\ncritical = \"yes\"\ncolor = \"#123456\"\n",
               {"rule 1: critical", "true or false"});
  expect_error("preset.toml", "preset = \"loud\"\n", {"preset", "unknown preset 'loud'"});
  expect_error("table.toml", "[rule]\ncolor = \"#123456\"\n", {"rule", "[[rule]]"});
  expect_error("default.toml", "[default]\nkernels = \"#123456\"\n", {"default.kernels", "unknown category"});
  expect_error("syntax.toml", "[[rule]\ncolor = \"#123456\"\n", {"invalid TOML"});

  const std::string missing = (dir.path() / "missing.toml").string();
  const Result<ColorScheme> r = ColorScheme::load(missing);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kIo);
  EXPECT_NE(r.status().message().find(missing), std::string::npos) << r.status().message();
  EXPECT_NE(load_error(dir.path().string()).find(dir.path().string()), std::string::npos);  // a folder
}

TEST(ColorScheme, KernelsByTheirNsightComputeBound) {
  const Result<ColorScheme> preset = ColorScheme::load("roofline");
  ASSERT_TRUE(preset.ok());
  EXPECT_TRUE(preset->uses_kernel_bound());
  EXPECT_FALSE(preset->uses_critical_path());
  const auto swatch = [](const ColorScheme& s, Category c, KernelBound b) {
    return s.palette().at(s.color_of(c, kNccl, false, b));
  };
  EXPECT_EQ(swatch(*preset, Category::kKernel, KernelBound::kMemory).rgb, 0x1f77b4u);
  EXPECT_EQ(swatch(*preset, Category::kKernel, KernelBound::kMemory).label, "memory-bound kernel (ncu)");
  EXPECT_EQ(swatch(*preset, Category::kKernel, KernelBound::kCompute).rgb, 0xd62728u);
  EXPECT_EQ(swatch(*preset, Category::kKernel, KernelBound::kNone).label, "other kernel");
  EXPECT_EQ(swatch(*preset, Category::kMemcpy, KernelBound::kMemory).label, "memory copy");  // kernels only

  // In files: bound = "memory" | "compute" | "none", on top of the preset.
  tracedoc::testing::ScratchDir dir;
  const Result<ColorScheme> file = ColorScheme::load(
      dir.write("bound.toml",
                "preset = \"roofline\"\n[[rule]]\nbound = \"none\"\ncolor = \"#00ff00\"\nlabel = \"not "
                "profiled\"\n"));
  ASSERT_TRUE(file.ok()) << file.status().message();
  EXPECT_EQ(swatch(*file, Category::kKernel, KernelBound::kNone).label, "not profiled");
  EXPECT_EQ(swatch(*file, Category::kKernel, KernelBound::kCompute).rgb, 0xd62728u);
  const Result<ColorScheme> xml = ColorScheme::load(dir.write(
      "bound.xml",
      "<ColorPreferences><Rule category=\"kernel\" bound=\"compute\" color=\"#0000ff\"/></ColorPreferences>"));
  ASSERT_TRUE(xml.ok()) << xml.status().message();
  EXPECT_EQ(swatch(*xml, Category::kKernel, KernelBound::kCompute).rgb, 0x0000ffu);
  expect_load_error(dir, "badbound.toml", "[[rule]]\nbound = \"latency\"\ncolor = \"#123456\"\n",
                    {"rule 1: bound", "must be memory, compute or none, not 'latency'"});
}

TEST(ColorScheme, OperatorsByTheirShareOfTheRoof) {
  const Result<ColorScheme> preset = ColorScheme::load("peak");
  ASSERT_TRUE(preset.ok());
  EXPECT_TRUE(preset->uses_peak_band());
  EXPECT_FALSE(preset->uses_kernel_bound());
  const auto swatch = [](const ColorScheme& s, Category c, PeakBand b) {
    return s.palette().at(s.color_of(c, "aten::linear", false, KernelBound::kNone, b));
  };
  EXPECT_EQ(swatch(*preset, Category::kOp, PeakBand::kLow).rgb, 0xd73027u);
  EXPECT_EQ(swatch(*preset, Category::kOp, PeakBand::kLow).label, "under 10% of its roof");
  EXPECT_EQ(swatch(*preset, Category::kKernel, PeakBand::kFair).rgb, 0xfc8d59u);
  EXPECT_EQ(swatch(*preset, Category::kKernel, PeakBand::kGood).rgb, 0x91cf60u);
  EXPECT_EQ(swatch(*preset, Category::kOp, PeakBand::kHigh).label, "60% of its roof or more");
  EXPECT_EQ(swatch(*preset, Category::kOp, PeakBand::kNone).label, "other operator");
  EXPECT_EQ(swatch(*preset, Category::kApi, PeakBand::kLow).label, "other CUDA API");  // operators and kernels only
  EXPECT_EQ(view::peak_band(0.099), PeakBand::kLow);
  EXPECT_EQ(view::peak_band(0.29), PeakBand::kFair);
  EXPECT_EQ(view::peak_band(0.30), PeakBand::kGood);
  EXPECT_EQ(view::peak_band(0.60), PeakBand::kHigh);

  tracedoc::testing::ScratchDir dir;
  const Result<ColorScheme> file = ColorScheme::load(
      dir.write("peak.toml", "preset = \"peak\"\n[[rule]]\ncategory = \"op\"\npeak = \"none\"\ncolor = \"#00ff00\"\n"));
  ASSERT_TRUE(file.ok()) << file.status().message();
  EXPECT_EQ(swatch(*file, Category::kOp, PeakBand::kNone).rgb, 0x00ff00u);
  EXPECT_EQ(swatch(*file, Category::kOp, PeakBand::kLow).rgb, 0xd73027u);
  const Result<ColorScheme> xml = ColorScheme::load(dir.write(
      "peak.xml", "<ColorPreferences><Rule category=\"kernel\" peak=\"high\" color=\"#0000ff\"/></ColorPreferences>"));
  ASSERT_TRUE(xml.ok()) << xml.status().message();
  EXPECT_EQ(swatch(*xml, Category::kKernel, PeakBand::kHigh).rgb, 0x0000ffu);
  expect_load_error(dir, "badpeak.toml", "[[rule]]\npeak = \"fast\"\ncolor = \"#123456\"\n",
                    {"rule 1: peak", "must be low, fair, good, high or none, not 'fast'"});
}

TEST(ColorScheme, XmlPreferences) {
  tracedoc::testing::ScratchDir dir;
  const std::string path = dir.write("colors.xml", R"(
<?xml version="1.0" encoding="UTF-8"?>
<!-- Nsight-style colour preferences -->
<colorPreferences preset="critical">
  <Rule category="kernel" pattern="SGEMM" ignoreCase="true" critical="true" color="#2ca02c" label="GEMM"/>
  <Color category="api|os" name="Synchronize" value="0xFF112233"/>
  <rule category="memcpy, memset" regex="HtoD" critical="false" argb="4278190335"/>
  <Default category="kernel" color="#888888"/>
  <Default category="op" color="#abc" label="PyTorch operator"/>
</colorPreferences>
)");
  const Result<ColorScheme> loaded = ColorScheme::load(path);
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  const ColorScheme& s = *loaded;
  EXPECT_EQ(s.name(), path);
  ASSERT_EQ(s.rules().size(), 3u + ColorScheme::critical_preset().rules().size());

  EXPECT_EQ(rgb_of(s, Category::kKernel, kSgemm, true), 0x2ca02cu);
  EXPECT_EQ(label_of(s, Category::kKernel, kSgemm, true), "GEMM");
  EXPECT_EQ(label_of(s, Category::kKernel, kSgemm, false), "compute-heavy kernel");  // the preset's rule
  EXPECT_EQ(rgb_of(s, Category::kApi, "cudaDeviceSynchronize"), 0x112233u);
  EXPECT_EQ(label_of(s, Category::kApi, "cudaDeviceSynchronize"), "Synchronize");
  // 4278190335 = 0xFF0000FF: nsys's ARGB blue.
  EXPECT_EQ(rgb_of(s, Category::kMemcpy, kMemcpy, false), 0x0000ffu);
  EXPECT_EQ(rgb_of(s, Category::kMemcpy, kMemcpy, true), 0xf1c232u);
  EXPECT_EQ(rgb_of(s, Category::kKernel, kElementwise, false), 0x888888u);
  EXPECT_EQ(s.palette()[7].rgb, 0xaabbccu);
  EXPECT_EQ(s.palette()[7].label, "PyTorch operator");

  // Without a preset: the default colours, and a rule for any category.
  const Result<ColorScheme> plain = ColorScheme::load(
      dir.write("plain.xml", "<ColorPreferences><Rule pattern=\"nccl\" color=\"#ff0000\"/></ColorPreferences>"));
  ASSERT_TRUE(plain.ok()) << plain.status().message();
  EXPECT_EQ(plain->rules().size(), 1u);
  EXPECT_EQ(rgb_of(*plain, Category::kKernel, kNccl), 0xff0000u);
  EXPECT_EQ(rgb_of(*plain, Category::kKernel, kSgemm), 0x4e79a7u);
}

TEST(ColorScheme, XmlErrorsNameTheFile) {
  tracedoc::testing::ScratchDir dir;
  const auto expect_error = [&](const std::string& file, const std::string& text,
                                const std::vector<std::string>& parts) { expect_load_error(dir, file, text, parts); };
  expect_error("malformed.xml", "<ColorPreferences>\n  <Rule color=\"#123456\">\n</ColorPreferences>\n",
               {"malformed XML at byte", ":3:"});
  expect_error("attribute.xml", "<ColorPreferences>\n<Rule color=\"#123456\" colour=\"#123456\"/>\n</ColorPreferences>",
               {":2:", "rule 1: colour", "unknown attribute"});
  expect_error("color.xml", "<ColorPreferences><Rule color=\"red\"/></ColorPreferences>",
               {"rule 1: color", "bad colour 'red'"});
  expect_error("regex.xml",
               "<ColorPreferences><Rule color=\"#123456\"/><Rule pattern=\"(\" color=\"#123456\"/></ColorPreferences>",
               {"rule 2: pattern", "bad regular expression '('"});
  expect_error("category.xml", "<ColorPreferences><Rule category=\"kernel,gpu\" color=\"#123456\"/></ColorPreferences>",
               {"rule 1: category", "unknown category"});
  expect_error("twice.xml", "<ColorPreferences><Rule name=\"a\" pattern=\"b\" color=\"#123456\"/></ColorPreferences>",
               {"rule 1: pattern", "twice"});
  expect_error("element.xml", "<ColorPreferences><Colour color=\"#123456\"/></ColorPreferences>",
               {"unknown element <Colour>"});
  expect_error("root.xml", "<Preferences/>", {"root element is <Preferences>"});
  expect_error("preset.xml", "<ColorPreferences preset=\"loud\"/>", {"unknown preset 'loud'"});
  expect_error("default.xml", "<ColorPreferences><Default color=\"#123456\"/></ColorPreferences>", {"has no category"});
  expect_error("bool.xml", "<ColorPreferences><Rule critical=\"maybe\" color=\"#123456\"/></ColorPreferences>",
               {"rule 1: critical"});
  expect_error("text.xml", "<ColorPreferences>kernel=red</ColorPreferences>", {"unexpected text"});
}

TEST(ColorScheme, LongNamesAreSearchedInTheirFirstBytes) {
  tracedoc::testing::ScratchDir dir;
  // ".*" recurses once per character in libstdc++: a name this long would overflow the stack.
  const Result<ColorScheme> loaded =
      ColorScheme::load(dir.write("long.toml", "[[rule]]\nname = \"^.*x\"\ncolor = \"#ff0000\"\n"));
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  std::string name(200000, 'a');
  EXPECT_EQ(loaded->color_of(Category::kKernel, name, false), 0);
  name[10] = 'x';
  EXPECT_EQ(loaded->color_of(Category::kKernel, name, false), kCategoryCount);
}

}  // namespace
}  // namespace tracedoc::view
