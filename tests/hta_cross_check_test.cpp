// Cross-check of the Kineto reader against Holistic Trace Analysis (HTA), where HTA defines the same
// quantity: the per-kernel-name statistics of its GPU kernel breakdown (count, sum, min, max of `dur`).
//
// tests/golden/kineto/hta_kernel_breakdown.tsv is what HTA itself reports (written by
// tests/kineto/hta_reference.py, which records the HTA version and how HTA was configured). Here the
// same files are read with tracedoc and HTA's definition is recomputed from tracedoc's exact int64 ns
// times, so every number must be equal, not close: a reader that lost or invented an event, misnamed
// one, or got a time wrong by a single ns at a µs boundary fails.
//
// HTA's definition (HTA 0.5.0, hta/common/trace_parser.py round_down_time_stamps): for fractional-µs
// traces it computes end = ts + dur in double, then dur = floor(end) - ceil(ts), in µs. Integer-µs
// traces (2021 - early 2024) are left alone, which the same formula reproduces exactly, so one formula
// covers every era. That rounding is HTA's known defect (HTA issue #317): it throws the ns away, and a
// kernel that starts and ends inside one µs gets dur 0 or -1 (negative sums and means in its report).
// tracedoc keeps the exact ns; the per-file check at the end bounds what HTA loses by that rounding.
//
// Memcpy and memset rows: tracedoc's model does not keep the event name, only what it parsed from it
// (copy_kind, src_kind, dst_kind; mem_kind). Kineto writes the name from those same enums
// ("Memcpy HtoD (Pageable -> Device)", "Memset (Device)", "Memset (Unknown)"), so the name is rebuilt
// from them; an event whose kinds have no Kineto spelling cannot be named and is reported as a failure.
//
// HTA's breakdown takes every event with an integer args.stream; the model does not say whether the
// stream came from args or (2021 traces) from the tid. Every GPU event of the files used here carries
// args.stream, and a file where one did not would show up as a count mismatch, not pass silently.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <set>

#include "ingest/kineto_reader.h"
#include "test_support.h"

namespace tracedoc::testing {
namespace {

namespace fs = std::filesystem;

const char* const kGoldenPath = TRACEDOC_SOURCE_DIR "/tests/golden/kineto/hta_kernel_breakdown.tsv";

struct HtaRow {
  int64_t count = 0, sum = 0, min = 0, max = 0;  // HTA's µs
  std::string kernel_type, cats;
};
using HtaFile = std::map<std::string, HtaRow>;  // by kernel name

// The TSV escapes \, tab and newline in names (hta_reference.py escape()).
std::string unescape(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 1 < s.size()) {
      const char c = s[++i];
      out += c == 't' ? '\t' : c == 'n' ? '\n' : c;
    } else {
      out += s[i];
    }
  }
  return out;
}

// file (relative to shared/traces) -> its rows, in the order the TSV lists the files.
const std::vector<std::pair<std::string, HtaFile>>& golden() {
  static const std::vector<std::pair<std::string, HtaFile>> files = [] {
    std::vector<std::pair<std::string, HtaFile>> out;
    if (!fs::exists(kGoldenPath)) return out;
    bool header = true;
    for (const std::string& line : split(read_file(kGoldenPath), '\n')) {
      if (line.empty() || line[0] == '#') continue;
      if (header) {  // file name count sum_us min_us max_us kernel_type cats
        header = false;
        continue;
      }
      const std::vector<std::string> c = split(line, '\t');
      if (c.size() < 8) throw std::runtime_error("short row in " + std::string(kGoldenPath) + ": " + line);
      if (out.empty() || out.back().first != c[0]) out.emplace_back(c[0], HtaFile{});
      HtaRow r{std::stoll(c[2]), std::stoll(c[3]), std::stoll(c[4]), std::stoll(c[5]), c[6], c[7]};
      out.back().second.emplace(unescape(c[1]), r);
    }
    return out;
  }();
  return files;
}

// --- HTA's definitions -----------------------------------------------------------------------------

// The double Python's json.loads makes of the JSON number the reader read as `ns` (the reader keeps
// exactly ts*1000 of the file, relative to baseTimeNanoseconds when there is one, i.e. the file's own
// number). Formatting it back as decimal µs and parsing with from_chars gives the correctly rounded
// double, as Python's float parsing does; (double)ns / 1000 would not for absolute epoch ns above 2^53.
double json_double(TimeNs ns) {
  char buf[48];
  const bool negative = ns < 0;
  const uint64_t a = negative ? 0 - static_cast<uint64_t>(ns) : static_cast<uint64_t>(ns);
  const int n = std::snprintf(buf, sizeof buf, "%s%llu.%03llu", negative ? "-" : "",
                              static_cast<unsigned long long>(a / 1000), static_cast<unsigned long long>(a % 1000));
  double d = 0;
  std::from_chars(buf, buf + n, d);
  return d;
}

// round_down_time_stamps: end = ts + dur (double add, as pandas does), dur = floor(end) - ceil(ts).
int64_t hta_duration_us(TimeNs start, TimeNs end) {
  const double ts = json_double(start);
  const double stop = ts + json_double(end - start);
  return static_cast<int64_t>(std::floor(stop)) - static_cast<int64_t>(std::ceil(ts));
}

// hta/utils/utils.py get_kernel_type, with Python re.match semantics: anchored at the start, and `.`
// does not cross a newline, so every pattern only ever looks at the first line of the name.
std::string hta_kernel_type(std::string_view name) {
  const std::string_view n = name.substr(0, name.find('\n'));
  auto starts = [&](std::string_view p) { return n.substr(0, p.size()) == p; };
  auto has = [&](std::string_view p, size_t from = 0) { return n.find(p, from) != std::string_view::npos; };
  if (starts("nccl") && has("Kernel", 4)) return "COMMUNICATION";              // ^nccl.*Kernel
  if (starts("Memcpy") || starts("Memset") || starts("dma")) return "MEMORY";  // ^Memcpy|^Memset|^dma
  if (has("Memcpy") || has("Sync")) return "OTHER";  // (^nccl.*Kernel)|(.*Memcpy)|(^Memset)|(.*Sync)
  return "COMPUTATION";
}

// Kineto's spelling of the copy and memory kinds (libkineto memcpyKindString / memoryKindString),
// indexed by tracedoc's CopyKind / MemKind. Kineto writes "Unknown" for CUPTI's unknown kinds, which
// the reader stores as kUnknown; the reader also stores kinds it does not recognise ("Device Static",
// "Managed Static") as kUnknown, so such a name would come back as "Unknown" and fail as a mismatch
// rather than pass unnoticed.
const char* kineto_copy_kind(uint8_t k) {
  static const char* const kNames[] = {"Unknown", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA",
                                       "AtoD",    "DtoA", "DtoD", "HtoH", "PtoP"};
  return k < std::size(kNames) ? kNames[k] : nullptr;
}
const char* kineto_mem_kind(uint8_t k) {
  static const char* const kNames[] = {"Pageable", "Pinned", "Device", "Array", "Managed", nullptr, nullptr, "Unknown"};
  return k < std::size(kNames) ? kNames[k] : nullptr;
}

// --- tracedoc's side ---------------------------------------------------------------------------------

struct Stats {
  int64_t count = 0, sum = 0, min = INT64_MAX, max = INT64_MIN;  // HTA's µs, recomputed
  int64_t exact_ns = 0;                                          // tracedoc's own total
  int64_t lost_short = 0;  // events with a positive exact duration that HTA's rounding makes <= 0
  void add(TimeNs start, TimeNs end) {
    const int64_t us = hta_duration_us(start, end);
    ++count;
    sum += us;
    min = std::min(min, us);
    max = std::max(max, us);
    exact_ns += end - start;
    if (end > start && us <= 0) ++lost_short;
  }
};

struct Computed {
  std::map<std::string, Stats> by_name;  // only the names HTA's breakdown keeps
  int64_t unnamed_memory = 0;            // copies / sets whose Kineto name cannot be rebuilt
  int64_t other_kernels = 0;             // events HTA classifies OTHER and leaves out
};

Computed compute(const Trace& t) {
  Computed c;
  auto add = [&](const std::string& name, TimeNs start, TimeNs end) {
    if (hta_kernel_type(name) == "OTHER") {
      ++c.other_kernels;
      return;
    }
    c.by_name[name].add(start, end);
  };
  for (size_t i = 0; i < t.kernels.size(); ++i)
    add(std::string(t.str(t.kernels.name[i])), t.kernels.start[i], t.kernels.end[i]);
  for (size_t i = 0; i < t.memcpys.size(); ++i) {
    const char* dir = kineto_copy_kind(t.memcpys.copy_kind[i]);
    const char* src = kineto_mem_kind(t.memcpys.src_kind[i]);
    const char* dst = kineto_mem_kind(t.memcpys.dst_kind[i]);
    if (!dir || !src || !dst) {
      ++c.unnamed_memory;
      continue;
    }
    add(std::string("Memcpy ") + dir + " (" + src + " -> " + dst + ")", t.memcpys.start[i], t.memcpys.end[i]);
  }
  for (size_t i = 0; i < t.memsets.size(); ++i) {
    const char* kind = kineto_mem_kind(t.memsets.mem_kind[i]);
    if (!kind) {
      ++c.unnamed_memory;
      continue;
    }
    add(std::string("Memset (") + kind + ")", t.memsets.start[i], t.memsets.end[i]);
  }
  return c;
}

// Rows fed only by GPU activity tracedoc models as kernels / copies / sets. HTA's breakdown takes any
// event with an integer args.stream; a row from another category would have no tracedoc counterpart.
bool comparable(const std::string& cats) {
  static const std::set<std::string> kCats = {"kernel", "Kernel", "gpu_memcpy", "Memcpy", "gpu_memset", "Memset"};
  for (const std::string& c : split(cats, ',')) {
    if (!kCats.count(c)) return false;
  }
  return true;
}

class HtaCrossCheck : public ::testing::TestWithParam<size_t> {};

TRACEDOC_TEST_LABELS(HtaCrossCheck, corpus golden);

TEST_P(HtaCrossCheck, KernelBreakdownEqualsHta) {
  ASSERT_NE(GetParam(), SIZE_MAX) << kGoldenPath << " is missing or empty: run tests/kineto/hta_reference.py";
  const auto& [file, hta] = golden()[GetParam()];
  const fs::path shared = shared_dir();
  if (shared.empty()) GTEST_SKIP() << "../shared/traces not found: HTA cross-check on real traces skipped";
  const fs::path path = shared / "traces" / file;
  if (!fs::exists(path)) GTEST_SKIP() << file << " is in hta_kernel_breakdown.tsv but not in shared/traces";

  Result<Trace> r = read_kineto_trace(path.string());
  ASSERT_TRUE(r.ok()) << file << ": " << r.status().message();
  const Trace& t = r.value();
  // HTA keeps negative durations (its rounding then makes them more negative) and, in 0.5.0, events
  // longer than a week; tracedoc clamps the first to 0 and drops the second. None of these files has
  // either, and if one did the numbers below could not agree.
  EXPECT_EQ(t.warnings.negative_durations, 0) << file;
  EXPECT_EQ(t.warnings.absurd_durations, 0) << file;

  const Computed mine = compute(t);
  EXPECT_EQ(mine.unnamed_memory, 0) << file << ": copies/sets whose Kineto name cannot be rebuilt from the model";

  // Both directions: every HTA row has tracedoc's equal numbers, and tracedoc has no name HTA lacks.
  int64_t hta_total_us = 0, exact_total_ns = 0, events = 0, lost_short = 0;
  size_t compared = 0, skipped = 0;
  for (const auto& [name, h] : hta) {
    if (!comparable(h.cats)) {
      ++skipped;
      continue;
    }
    ++compared;
    EXPECT_EQ(hta_kernel_type(name), h.kernel_type) << file << ": " << name;
    const auto it = mine.by_name.find(name);
    if (it == mine.by_name.end()) {
      ADD_FAILURE() << file << ": HTA reports " << h.count << " x \"" << name << "\", tracedoc has none";
      continue;
    }
    const Stats& s = it->second;
    EXPECT_EQ(s.count, h.count) << file << ": count of " << name;
    EXPECT_EQ(s.sum, h.sum) << file << ": sum (µs) of " << name;
    EXPECT_EQ(s.min, h.min) << file << ": min (µs) of " << name;
    EXPECT_EQ(s.max, h.max) << file << ": max (µs) of " << name;
    hta_total_us += h.sum;
    exact_total_ns += s.exact_ns;
    events += s.count;
    lost_short += s.lost_short;
  }
  for (const auto& [name, s] : mine.by_name) {
    if (!hta.count(name)) ADD_FAILURE() << file << ": tracedoc has " << s.count << " x \"" << name << "\", HTA none";
  }
  EXPECT_GT(compared, 0u) << file;

  // What HTA's rounding costs, against tracedoc's exact ns. Per event exact - HTA = (end - floor(end))
  // + (ceil(ts) - ts), each in [0, 1) µs, so the total lies in [0, 2 µs x events). For integer-µs
  // files nothing is rounded and the totals must be identical. For absolute-epoch fractional files
  // (2024-04 nightlies) the double holding ts has 1/4-µs resolution, which shifts each end by up to
  // 1/8 µs more either way, hence the +-250 ns per event of slack there.
  bool integer_times = true;
  for (const auto* v :
       {&t.kernels.start, &t.kernels.end, &t.memcpys.start, &t.memcpys.end, &t.memsets.start, &t.memsets.end}) {
    for (TimeNs x : *v) integer_times = integer_times && x % 1000 == 0;
  }
  const int64_t loss_ns = exact_total_ns - hta_total_us * 1000;
  if (integer_times) {
    EXPECT_EQ(loss_ns, 0) << file << ": integer-µs trace, HTA rounds nothing";
  } else {
    EXPECT_GT(loss_ns, -250 * events) << file;
    EXPECT_LT(loss_ns, 2250 * events) << file << ": HTA lost more than its rounding can explain";
  }
  std::printf(
      "[ HTA      ] %s: %zu names (%zu not comparable), %lld events; exact %lld ns, HTA %lld us, "
      "rounding loss %.3f us/event; %lld sub-us events HTA makes <= 0 us; %lld OTHER events\n",
      file.c_str(), compared, skipped, static_cast<long long>(events), static_cast<long long>(exact_total_ns),
      static_cast<long long>(hta_total_us), events ? loss_ns / 1000.0 / events : 0.0,
      static_cast<long long>(lost_short), static_cast<long long>(mine.other_kernels));
}

std::vector<size_t> file_indices() {
  std::vector<size_t> idx(golden().size());
  for (size_t i = 0; i < idx.size(); ++i) idx[i] = i;
  if (idx.empty()) idx.push_back(SIZE_MAX);  // reported by the test, not dropped silently
  return idx;
}

// gtest names allow [A-Za-z0-9_]: the path without "kineto/" and extension, made unique by a suffix.
std::string case_name(const ::testing::TestParamInfo<size_t>& info) {
  if (info.param == SIZE_MAX) return "missing_golden_tsv";
  return trace_test_name(golden()[info.param].first) + "_" + std::to_string(info.param);
}

INSTANTIATE_TEST_SUITE_P(Traces, HtaCrossCheck, ::testing::ValuesIn(file_indices()), case_name);

// The recomputation itself, on hand-worked values, so a failure above points at the reader, not here.
TEST(HtaCrossCheck, RoundingDefinition) {
  // Integer µs: nothing to round.
  EXPECT_EQ(hta_duration_us(1623142623531625000, 1623142623531627000), 2);
  // ts 10.400, dur 0.500: ceil(10.4) = 11, floor(10.9) = 10 -> -1 µs (HTA issue #317).
  EXPECT_EQ(hta_duration_us(10400, 10900), -1);
  // ts 10.000, dur 0.999: 10 - 10 -> 0 µs for a 999 ns kernel.
  EXPECT_EQ(hta_duration_us(10000, 10999), 0);
  // ts 1.999, dur 3.002: ceil 2, floor(5.001) = 5 -> 3 µs for 3002 ns.
  EXPECT_EQ(hta_duration_us(1999, 5001), 3);
  // Absolute epoch µs with ns (2024-04 nightlies): the double nearest 1712195495519689.047 is
  // ...689.0, the one nearest ...689.047 + 63.813 = ...752.860 is ...752.75 -> 752 - 689 = 63.
  EXPECT_EQ(json_double(1712195495519689047), 1712195495519689.0);
  EXPECT_EQ(hta_duration_us(1712195495519689047, 1712195495519752860), 63);
  EXPECT_EQ(hta_kernel_type("ncclDevKernel_Generic(ncclDevKernelArgsStorage<4096ul>)"), "COMMUNICATION");
  EXPECT_EQ(hta_kernel_type("Memcpy DtoD (Device -> Device)"), "MEMORY");
  EXPECT_EQ(hta_kernel_type("Memset (Device)"), "MEMORY");
  EXPECT_EQ(hta_kernel_type("void foo_Memcpy_kernel()"), "OTHER");
  EXPECT_EQ(hta_kernel_type("Stream Sync"), "OTHER");
  EXPECT_EQ(hta_kernel_type("ncclAllReduceRingLLKernel"), "COMMUNICATION");
  EXPECT_EQ(hta_kernel_type("nccl_custom_op"), "COMPUTATION");  // ^nccl without Kernel
  EXPECT_EQ(hta_kernel_type("void gemm<float>(float*)"), "COMPUTATION");
}

}  // namespace
}  // namespace tracedoc::testing
