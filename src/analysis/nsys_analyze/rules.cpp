#include "analysis/nsys_analyze/rules.h"

#include <fmt/format.h>

#include <cctype>
#include <charconv>

#include "model/table_set.h"

namespace tracedoc::nsys_analyze {

namespace {

Result<int64_t> parse_int_option(std::string_view rule, std::string_view key, std::string_view value) {
  int64_t v = 0;
  const char* first = value.data();
  const char* last = value.data() + value.size();
  if (!value.empty() && *first == '+') ++first;
  auto [ptr, ec] = std::from_chars(first, last, v);
  if (value.empty() || ec != std::errc() || ptr != last) {
    return UsageError(fmt::format("{}: option {}= needs an integer, got '{}'", rule, key, value));
  }
  return v;
}

// Advice texts. They say what the rows mean and what to change; the rows themselves are nsys's.
std::string memcpy_async_advice(const RuleArgs&) {
  return "These asynchronous copies use pageable host memory, so the driver stages them through a pinned\n"
         "buffer and the call returns only when the copy is done: the CPU waits and the copy cannot\n"
         "overlap compute.\n\n"
         "Suggestion: allocate the host buffers as pinned memory (cudaMallocHost / cudaHostAlloc; in\n"
         "PyTorch, DataLoader(pin_memory=True) or tensor.pin_memory()) and copy with non_blocking=True.";
}
std::string memcpy_async_ok(const RuleArgs&) { return "No asynchronous copy uses pageable host memory."; }
std::string memcpy_sync_advice(const RuleArgs&) {
  return "These synchronous copies block the calling CPU thread until the transfer is done (host to\n"
         "device copies of 64 KB or less are not listed: the driver returns early for those).\n\n"
         "Suggestion: use cudaMemcpyAsync on a stream (PyTorch: .to(device, non_blocking=True) from pinned\n"
         "memory) and synchronize only where the result is needed.";
}
std::string memcpy_sync_ok(const RuleArgs&) { return "No synchronous copy blocks the host."; }
std::string memset_sync_advice(const RuleArgs&) {
  return "These synchronous memsets on pinned or managed memory block the calling CPU thread.\n\n"
         "Suggestion: use cudaMemsetAsync on a stream.";
}
std::string memset_sync_ok(const RuleArgs&) { return "No synchronous memset blocks the host."; }
std::string api_sync_advice(const RuleArgs&) {
  return "These calls block the CPU thread until the GPU has finished all work issued before them; while\n"
         "the CPU waits it cannot queue more work, so the GPU drains and then idles.\n\n"
         "Suggestions:\n"
         "   1. Remove synchronizations that are not needed (in PyTorch: .item(), .cpu(), printing a\n"
         "      tensor and torch.cuda.synchronize() all synchronize).\n"
         "   2. Wait on events instead (cudaStreamWaitEvent, cudaEventSynchronize) so that only the work\n"
         "      that matters is awaited.";
}
std::string api_sync_ok(const RuleArgs&) { return "No device or stream synchronization call was found."; }
std::string gaps_advice(const RuleArgs& a) {
  return fmt::format(
      "The GPU was idle for more than {} ms in these ranges (profiler overhead counts as busy).\n\n"
      "Suggestions:\n"
      "   1. See what the CPU threads did during each gap (OS runtime calls, CPU sampling, NVTX or\n"
      "      record_function ranges): data loading, a synchronization or Python overhead are usual.\n"
      "   2. Add NVTX ranges around CPU work to name the gaps.",
      a.gap_ms);
}
std::string gaps_ok(const RuleArgs& a) { return fmt::format("The GPU was never idle for more than {} ms.", a.gap_ms); }
std::string time_util_advice(const RuleArgs& a) {
  return fmt::format(
      "In these time ranges the GPU was busy less than {}% of the time on average (each device's span\n"
      "is cut into {} equal chunks; consecutive low chunks are merged; operations running at once add\n"
      "up, so a chunk can exceed 100%).\n\n"
      "Suggestions:\n"
      "   1. See what the CPU threads did meanwhile (OS runtime calls, CPU sampling, NVTX ranges).\n"
      "   2. Overlap data loading and copies with compute; batch small kernels (CUDA graphs).",
      a.threshold, a.chunks);
}
std::string time_util_ok(const RuleArgs& a) {
  return fmt::format("No time range has an average GPU utilization below {}%.", a.threshold);
}

constexpr uint32_t kGpuOps = kLoadKernels | kLoadMemcpy | kLoadMemset | kLoadOverhead;

}  // namespace

RuleInputFilter rule_input_filter(const RuleArgs& args) {
  if (!args.start.empty() || !args.end.empty()) return {args.start + "/" + args.end, ""};
  return {"", args.nvtx};
}

Result<RuleArgs> parse_rule_args(std::string_view rule, const std::vector<std::string>& args) {
  RuleArgs out;
  out.raw = args;
  for (const auto& a : args) {
    const size_t eq = a.find('=');
    if (eq == std::string::npos) {
      return UsageError(fmt::format("{}: option '{}' is not key=value (e.g. rows=10)", rule, a));
    }
    const std::string key = a.substr(0, eq);
    const std::string value = a.substr(eq + 1);
    if (key == "start") {
      out.start = value;
      continue;
    }
    if (key == "end") {
      out.end = value;
      continue;
    }
    if (key == "nvtx") {
      out.nvtx = value;
      continue;
    }
    int64_t* target = key == "rows"        ? &out.rows
                      : key == "gap"       ? &out.gap_ms
                      : key == "threshold" ? &out.threshold
                      : key == "chunks"    ? &out.chunks
                      : key == "process"   ? &out.process
                      : key == "thread"    ? &out.thread
                                           : nullptr;
    if (!target) return UsageError(fmt::format("{}: unknown option '{}'", rule, key));
    TRACEDOC_ASSIGN_OR_RETURN(auto v, parse_int_option(rule, key, value));
    *target = v;
  }
  if (out.chunks < 1 || out.chunks > 1000) {
    return UsageError(fmt::format("{}: chunks= must be between 1 and 1000, got {}", rule, out.chunks));
  }
  if (out.gap_ms < 0) return UsageError(fmt::format("{}: gap= must not be negative", rule));
  return out;
}

const std::vector<RuleDef>& all_rules() {
  static const std::vector<RuleDef> rules = {
      {"cuda_memcpy_async", "cuda-async-memcpy", "CUDA Async Memcpy with Pageable Memory", kLoadMemcpy | kLoadApi,
       cuda_memcpy_async, memcpy_async_advice, memcpy_async_ok},
      {"cuda_memcpy_sync", "cuda-sync-memcpy", "CUDA Synchronous Memcpy", kLoadMemcpy | kLoadApi, cuda_memcpy_sync,
       memcpy_sync_advice, memcpy_sync_ok},
      {"cuda_memset_sync", "cuda-sync-memset", "CUDA Synchronous Memset", kLoadMemset | kLoadApi, cuda_memset_sync,
       memset_sync_advice, memset_sync_ok},
      {"cuda_api_sync", "cuda-sync-api", "CUDA Synchronization APIs", kLoadApi, cuda_api_sync, api_sync_advice,
       api_sync_ok},
      {"gpu_gaps", "gpu-starv", "GPU Gaps", kGpuOps, gpu_gaps, gaps_advice, gaps_ok},
      {"gpu_time_util", "gpu-low-util", "GPU Time Utilization", kGpuOps, gpu_time_util, time_util_advice, time_util_ok},
  };
  return rules;
}

const RuleDef* find_rule(std::string_view name) {
  for (const auto& r : all_rules()) {
    if (name == r.name || name == r.old_name) return &r;
  }
  return nullptr;
}

std::vector<std::string> default_rules() {
  std::vector<std::string> out;
  for (const auto& r : all_rules()) out.push_back(r.name);
  return out;
}

bool sql_like(std::string_view text, std::string_view pattern) {
  // Iterative wildcard match with one backtrack point (the last '%'): linear in practice.
  size_t t = 0, p = 0, star_p = std::string_view::npos, star_t = 0;
  auto same = [](char a, char b) {
    return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
  };
  while (t < text.size()) {
    if (p < pattern.size() && pattern[p] == '%') {
      star_p = p++;
      star_t = t;
    } else if (p < pattern.size() && (pattern[p] == '_' || same(pattern[p], text[t]))) {
      ++p;
      ++t;
    } else if (star_p != std::string_view::npos) {
      p = star_p + 1;
      t = ++star_t;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '%') ++p;
  return p == pattern.size();
}

}  // namespace tracedoc::nsys_analyze
