// The colour scheme of `tracedoc view` (the HTML timeline): which colour each event gets and what
// the legend says about it. A scheme is a list of rules (category, name pattern, on/off the critical
// path -> colour and legend label) in front of one fallback colour per category. Two presets are
// built in ("default": category colours only; "critical": what stands out on the critical path);
// anything else is read from a TOML or an XML file, told apart by content (a first non-blank
// character '<' means XML).
//
// TOML form:
//
//   preset = "critical"      # optional: start from a preset ("default", "critical", "roofline", "peak"); the file's
//                            # rules go FIRST, so they win over the preset's
//   [[rule]]                 # rules are tried in order, the first that matches wins
//   category = "kernel"      # a category, a list of them (["memcpy", "memset"]) or "any" (default)
//   name = "gemm|cutlass"    # RE2 regex searched in the event name (default: any name)
//   ignore_case = true       # optional: match the name case-insensitively
//   critical = true          # optional: only events on (true) / off (false) the critical path
//   bound = "memory"         # optional: only kernels Nsight Compute found "memory" or "compute"
//                            # bound, or "none" for kernels it did not profile
//   peak = "low"             # optional: only operators (and their kernels) at that share of their
//                            # roof: "low" (< 10%), "fair" (< 30%), "good" (< 60%), "high", "none"
//   color = "#2ca02c"        # required: #rrggbb, #rgb, 0xRRGGBB, 0xAARRGGBB (nsys's ARGB) or an
//                            # integer ARGB (4278255360); the alpha byte is ignored
//   label = "GEMM"           # optional legend text (default: the pattern, else the categories)
//   [default]                # optional: the fallback colour of a category,
//   kernel = "#888888"       #   as a colour or { color = "#888888", label = "other kernel" }
//
// XML form (in the spirit of Nsight's colour preferences):
//
//   <ColorPreferences preset="critical">
//     <Rule category="kernel" pattern="gemm" ignoreCase="true" critical="true" color="#2ca02c" label="GEMM"/>
//     <Default category="kernel" color="#888888" label="other kernel"/>
//   </ColorPreferences>
//
// Element and attribute names are matched case-insensitively. A rule is <Rule> or <Color>; its
// pattern attribute may be spelled pattern, name or regex, its colour color, value or argb (the
// same forms as in TOML, plus a decimal ARGB integer as nsys stores NVTX colours). In XML a list of
// categories is separated by ',' or '|'.
//
// The "critical" preset, rule by rule (the first that matches wins):
//
//   1. kernels on the critical path                                    #d62728 kernel on the critical path
//   2. every memcpy and memset, kernels named [Mm]emcpy|[Mm]emset       #f1c232 memory operation
//   3. every sync; CUDA API calls named Synchronize|StreamWaitEvent|     #8e44ad sync wait
//      EventQuery|StreamQuery; OS calls named pthread_cond_wait|
//      pthread_mutex_lock|sem_wait|futex|poll|epoll_wait
//   4. kernels named (ignoring case) gemm|conv|attn|attention|flash|     #2ca02c compute-heavy kernel
//      cutlass|cublas|cudnn|xmma|matmul|wgmma|mma|sm[0-9]+_
//      operators named aten::(mm|bmm|addmm|matmul|linear|conv.*|         #2ca02c compute-heavy operator
//      .*attention.*|baddbmm)
//   5. kernels named (ignoring case) nccl|rccl                           #1f77b4 communication
//
// The "roofline" preset colours kernels by what Nsight Compute measured (--ncu, or a report viewed
// alone): memory-bound kernels #1f77b4, compute-bound #d62728; kernels ncu did not profile and
// everything else in the muted greys below. Any rule may ask for it: `bound = "memory"`, "compute"
// or "none" (a kernel without ncu answers).
//
// The "peak" preset colours the operators whose FLOPs the recorded shapes give, and the kernels
// launched under them, by their share of the roof (view/op_peaks.h): under 10% #d73027, under 30%
// #fc8d59, under 60% #91cf60, from 60% #1a9850; everything else in the muted greys below.
//
// Everything else takes its category's muted grey ("other kernel", "other CUDA API", ...), so that
// the colours of the rules stand out. The "default" scheme has no rules: kernel #4e79a7,
// memcpy #e6b800, memset #f28e2b, sync #9467bd, gpu_annotation #7f7f7f, api #59a14f,
// range #76b7b2, op #9c755f, os #bab0ac.
//
// Categories: kernel, memcpy, memset, sync, gpu_annotation, api, range, op, os (also os_call).
// Unknown keys, attributes and elements are errors (a typo must not pass silently), and so are a bad
// colour, category or regex; every message names the file and the rule (numbered from 1).
//
// Use: load the scheme once, then ask color_of for each unique (category, name, critical) and keep
// the answer; the legend is the palette entries the timeline used. color_of does not cache (a
// regex search per rule is slow next to a hash lookup, so callers cache per unique name) and it is
// const and thread-safe: threads may share one scheme. Copies share the compiled patterns.
//
// Patterns are RE2's syntax (common/name_pattern.h), searched in the whole name in linear time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace tracedoc::view {

// What an event on the timeline is; the rules of a colour scheme match it.
// kGraph (whole CUDA graph executions, graph-level tracing) comes last so that the other categories
// keep their numbers in pages and colour files.
enum class Category : uint8_t { kKernel, kMemcpy, kMemset, kSync, kGpuAnnotation, kApi, kRange, kOp, kOsCall, kGraph };
inline constexpr size_t kCategoryCount = 10;
// The mask of every category: a rule with it matches any category.
inline constexpr uint16_t kAnyCategory = (1u << kCategoryCount) - 1;

inline constexpr uint16_t category_bit(Category c) { return static_cast<uint16_t>(1u << static_cast<unsigned>(c)); }

// The identifier in files: "kernel", "memcpy", "memset", "sync", "gpu_annotation", "api", "range", "op", "os".
const char* category_name(Category c);
// The readable name in the legend: "kernel", "memory copy", "memset", "sync", "GPU annotation",
// "CUDA API", "annotation range", "operator", "OS call".
const char* category_label(Category c);
// One identifier (case-insensitive; "os_call" is accepted for "os"). "any" is not a category: it is
// handled by parse_category_mask.
bool parse_category(std::string_view text, Category* out);
// Categories separated by ',' or '|' (blanks around them are ignored), or "any" for every category.
bool parse_category_mask(std::string_view text, uint16_t* out);

// What Nsight Compute says bounds a kernel (analysis/ncu_answers.h), for rules with `bound`.
enum class KernelBound : uint8_t { kNone, kMemory, kCompute };

// How close an operator ran to its roof (view/op_peaks.h: its FLOPs from the recorded shapes, at
// the roofline's limit for its intensity), for rules with `peak`; its kernels take its band. kNone:
// no estimate (no shapes, no formula, no known peak). Low under 10%, fair under 30%, good under
// 60%, high from 60%.
enum class PeakBand : uint8_t { kNone, kLow, kFair, kGood, kHigh };

struct ColorRule {
  uint16_t categories = 0;           // bit mask (1 << category); kAnyCategory = any category
  std::string pattern;               // RE2 regex searched in the event name; empty = any name
  bool ignore_case = false;          // the pattern ignores case
  std::optional<bool> critical;      // set: only events on (true) / off (false) the critical path
  uint32_t rgb = 0;                  // 0xRRGGBB
  std::string label;                 // legend text; defaults to the pattern or the category names
  std::optional<KernelBound> bound;  // set: only kernels ncu found so bound (kNone: not profiled)
  std::optional<PeakBand> peak;      // set: only operators and their kernels in this band
};

struct Swatch {
  uint32_t rgb = 0;
  std::string label;
};

class ColorScheme {
 public:
  // The default scheme (as defaults()): a scheme held by value is never without its palette.
  ColorScheme();
  // No rules: one colour per category.
  static ColorScheme defaults();
  // Kernels on the critical path red, memory operations yellow, sync waits purple, compute-heavy
  // kernels and operators green, communication blue; everything else in muted greys.
  static ColorScheme critical_preset();
  // Kernels by their Nsight Compute bound: memory blue, compute red, the rest muted greys.
  static ColorScheme roofline_preset();
  // Operators and their kernels by their share of the roof (PeakBand): red to green, the rest muted greys.
  static ColorScheme peak_preset();
  // name: "default", "critical", "roofline" or "peak" (presets), else a TOML or XML file. Errors name the file and what
  // is wrong.
  static Result<ColorScheme> load(const std::string& name);

  // The palette index of an event: the first rule that matches wins, else the category's colour.
  uint16_t color_of(Category c, std::string_view name, bool critical, KernelBound bound = KernelBound::kNone,
                    PeakBand peak = PeakBand::kNone) const;
  // Index -> colour and legend label. 0..kCategoryCount-1 are the category colours; the rules'
  // swatches follow in rule order (rules with equal colour and label share one).
  const std::vector<Swatch>& palette() const { return palette_; }
  const std::vector<ColorRule>& rules() const { return rules_; }
  // Some rule has `critical` set (the caller then has to compute the critical path).
  bool uses_critical_path() const;
  // Some rule has `bound` set (the caller then joins the Nsight Compute reports).
  bool uses_kernel_bound() const;
  // Whether a rule asks for an operator's share of its roof (`peak`).
  bool uses_peak_band() const;
  // "default", "critical" or the file name as given to load().
  std::string name() const { return name_; }

 private:
  struct Compiled;  // the rules' compiled patterns (kept out of this header)
  struct Builder;   // assembles a scheme: presets and the file readers

  std::string name_;
  std::vector<ColorRule> rules_;
  std::vector<Swatch> palette_;
  std::vector<uint16_t> rule_swatch_;         // rule index -> palette index
  std::shared_ptr<const Compiled> compiled_;  // shared: copies of a scheme are cheap
};

// "#d62728".
std::string rgb_hex(uint32_t rgb);

}  // namespace tracedoc::view
