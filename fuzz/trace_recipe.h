// The input of fuzz_analyses: the fuzz bytes read as a compact recipe for a small, VALID trace, so
// that libFuzzer spends its time in the reports, not in a parser's error paths. Every byte string is
// a recipe (missing bytes read as 0: the empty input is the smallest trace); a few bytes choose how
// many events of each kind there are, and every value is drawn from a table of hostile ones: names
// of 0, 1, 30,000 and 100,000 characters, invalid UTF-8, markup and CSV metacharacters; times near
// 0, negative, near 2^63 and the INT64_MIN "NULL"; durations NaN and Infinity where the format has
// doubles, negative, zero, a week and past int64; byte counts 0, negative and near 2^63; and the
// steps (ProfilerStep#N) in one process while the GPU work is launched from another.
//
// Two routes, chosen by the first byte, so that a trace is only ever one a reader could return:
//  - Kineto JSON: the recipe is written out as a PyTorch profiler trace and read by read_kineto_bytes
//    (which drops what it must, NaN durations, times past int64, and derives steps and launchers);
//  - nsys model: the tables are filled directly, as read_nsys_sqlite fills them from an export
//    (which keeps rows as they are: ends before starts, NULL times, any id), unsorted.
// The format is the harness's own and may change; the regression inputs of fuzz_analyses are
// replayed through this same code, so a change that alters what old inputs mean must keep them
// meaningful (append to the tables, do not reorder them).
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "ingest/nsys_sqlite_reader.h"
#include "model/trace.h"

namespace tracedoc::fuzz::recipe {

// Reads the recipe one byte at a time; past the end every byte is 0.
class Picker {
 public:
  explicit Picker(std::string_view bytes) : bytes_(bytes) {}
  uint8_t byte() { return at_ < bytes_.size() ? static_cast<uint8_t>(bytes_[at_++]) : 0; }
  size_t below(size_t n) { return n == 0 ? 0 : byte() % n; }
  bool bit() { return byte() & 1; }
  template <typename T, size_t N>
  const T& pick(const T (&table)[N]) {
    return table[below(N)];
  }
  template <typename T>
  const T& pick(const std::vector<T>& table) {
    return table[below(table.size())];
  }

 private:
  std::string_view bytes_;
  size_t at_ = 0;
};

inline constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
inline constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

inline int64_t sat_add(int64_t a, int64_t b) {
  const __int128 s = static_cast<__int128>(a) + b;
  return s > kMax ? kMax : s < kMin ? kMin : static_cast<int64_t>(s);
}

// Event names (and every other string): ordinary ones the reports recognize, hostile ones, and four
// long ones (30,000 and 100,000 bytes). A long name costs every writer a pass over it, so each long
// one has a single byte value of its own (248-251): a recipe holds one about every other time,
// not in every event.
inline const std::vector<std::string>& names() {
  static const std::vector<std::string> table = {
      "",
      "k",
      "ProfilerStep#1",
      "ProfilerStep#2",
      "ProfilerStep # 3",
      "ProfilerStep#99999999999999999999",
      "ProfilerStep#",
      "aten::mm",
      "aten::copy_",
      "cudaLaunchKernel",
      "cudaMemcpyAsync",
      "nccl:all_reduce",
      "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)",
      "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclWorkElem)",
      "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, "
      "at::detail::Array<char*, 1> >(int, at::native::FillFunctor<float>, at::detail::Array<char*, 1>)",
      "_Z6kernelPfS_i",
      "_Z",
      "void f<(",
      ">>>(",
      "Memcpy HtoD (Pageable -> Device)",
      "Memset (Device)",
      "\xff\xfe\xfd",
      "\xc3",
      "caf\xc3\xa9 \xe2\x82\xac",
      "\xc0\xaf\xed\xa0\x80\xf4\x90\x80\x80",
      "\xf0\x9f\x98",
      "<script>alert(1)</script>&amp;\"'",
      "a,b;c\td\ne\r\"q\"",
      "\\",
      std::string("a\0b", 3),
      "\x01\x1f\x7f",
      "%s%n{}{0}",
      "train.py(10): step",
      "Optimizer.step#SGD.step",
      "autograd::engine::evaluate_function: MmBackward0",
      "ProfilerStep#4",
  };
  return table;
}
inline const std::vector<std::string>& long_names() {
  static const std::vector<std::string> table = [] {
    std::vector<std::string> n;
    n.push_back(std::string(30000, 'w'));
    n.push_back("ProfilerStep#7" + std::string(100000 - 14, '9'));  // 100,000 characters, a step number past int64
    std::string templ = "void k<";
    while (templ.size() < 100000 - 9) templ += "int, ";
    n.push_back(templ + ">(float*)");
    std::string bad;  // 30,000 bytes of UTF-8 continuation bytes and lead bytes without their tails
    for (int i = 0; i < 30000; ++i) bad += static_cast<char>(0x80 + (i * 7) % 128);
    n.push_back(bad);
    return n;
  }();
  return table;
}
// The name a byte picks (252-255: none; ModelBuilder reads them as a NULL string id).
inline const std::string& name_of(uint8_t b) {
  if (b >= 248 && b < 252) return long_names()[b - 248];
  return names()[b % names().size()];
}

// int64 values for ids, byte counts, sizes and times (nsys keeps any int64; INT64_MIN is NULL).
inline constexpr int64_t kInts[] = {
    0,
    1,
    -1,
    2,
    7,
    1000,
    4096,
    int64_t{1} << 20,
    int64_t{1} << 31,
    int64_t{1} << 32,
    int64_t{1} << 40,
    int64_t{1} << 53,
    int64_t{1} << 62,
    kMax,
    kMax - 1,
    kMin,
    kMin + 1,
    -(int64_t{1} << 62),
    std::numeric_limits<int32_t>::max(),
    std::numeric_limits<int32_t>::min(),
    0xFFFFFF,
    1'700'000'000'000'000'000,
    -1'000'000'000,
    999'999'999,
};
// int32 values for devices, streams, grid and block sizes, registers.
inline constexpr int32_t kInts32[] = {
    0, 1, 7, -1, 1024, 65535, std::numeric_limits<int32_t>::max(), std::numeric_limits<int32_t>::min(), 2, 3};
// Where the trace's times start (ns): near 0, negative, the epoch, near 2^63, near -2^63.
inline constexpr int64_t kBases[] = {
    0, 1'700'000'000'000'000'000, -5'000'000, kMax - 2'000'000, kMin + 2'000'000, 1'000'000'000, kMax - 1000, 1};

// Kineto JSON texts (µs; the JSON reader takes bare words) that are not plain numbers, or extreme ones.
inline constexpr std::string_view kJsonTimes[] = {
    "0",
    "-1",
    "-5.5",
    "0.001",
    "1e-3",
    "9223372036854.775807",
    "9223372036854.775808",
    "-9223372036854.775808",
    "4611686018427.387904",
    "1e15",
    "1.2345678901234567890123e10",
    "\"12\"",
    "null",
    "NaN",
    "-0",
    "1E400",
};
inline constexpr std::string_view kJsonDurations[] = {
    "0",
    "-1",
    "NaN",
    "Infinity",
    "-Infinity",
    "nan",
    "604800000000",
    "604800000001",
    "1e300",
    "null",
    "N/A",
    "0.0005",
    "9223372036854.775807",
    "\"7\"",
    "-0.0",
    "inf",
};
inline constexpr std::string_view kJsonDoubles[] = {
    "NaN", "Infinity", "-Infinity", "1e308", "-0.0", "50.5", "1e999", "null", "\"x\"", "0", "-1", "100", "4.9e-324",
};
inline constexpr std::string_view kJsonInts[] = {
    "0",
    "1",
    "-1",
    "4096",
    "9223372036854775807",
    "9223372036854775808",
    "-9223372036854775808",
    "1e20",
    "NaN",
    "18446744073709551615",
    "1.5",
    "null",
    "\"8\"",
    "1099511627776",
    "2147483648",
    "N/A",
};

// A JSON string literal of `s`: quotes, backslashes and control characters escaped, every other byte
// (invalid UTF-8 included) as it is. A few hostile escapes are written as escapes.
inline std::string json_string(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      static constexpr char kHex[] = "0123456789abcdef";
      out += "\\u00";
      out += kHex[(c >> 4) & 0xF];
      out += kHex[c & 0xF];
    } else {
      out += c;
    }
  }
  return out + "\"";
}

// µs text of a time in ns ("-12.345"), exact for the whole int64 range.
inline std::string micros(int64_t ns) {
  const bool negative = ns < 0;
  const unsigned __int128 a =
      negative ? static_cast<unsigned __int128>(-static_cast<__int128>(ns)) : static_cast<unsigned __int128>(ns);
  const uint64_t whole = static_cast<uint64_t>(a / 1000), frac = static_cast<uint64_t>(a % 1000);
  std::string f = std::to_string(frac);
  return (negative ? "-" : "") + std::to_string(whole) + "." + std::string(3 - f.size(), '0') + f;
}

// The recipe's header, shared by both routes.
struct Shape {
  bool nsys = false;         // route
  int64_t base = 0;          // time origin (ns)
  int64_t step_pid = 100;    // the process whose thread records ProfilerStep#N
  int64_t launch_pid = 100;  // the process that launches GPU work (by default)
  size_t steps = 0, kernels = 0, memcpys = 0, memsets = 0, ranges = 0, ops = 0, syncs = 0, extras = 0;
};

inline Shape read_shape(Picker& p) {
  Shape s;
  const uint8_t flags = p.byte();
  s.nsys = flags & 1;
  s.step_pid = flags & 2 ? 200 : 100;
  s.launch_pid = flags & 4 ? 100 : 200;  // default: steps in 100, GPU work in 200
  s.base = p.pick(kBases);
  const uint8_t a = p.byte(), b = p.byte(), c = p.byte();
  s.steps = a % 5, s.kernels = (a >> 3) % 9, s.memcpys = b % 6, s.memsets = (b >> 3) % 4;
  s.ranges = c % 4, s.ops = (c >> 2) % 4, s.syncs = (c >> 4) % 3, s.extras = (c >> 6) % 4;
  return s;
}

// An offset from the base (mostly small and ordered, so events nest in steps), or a hostile time.
inline int64_t time_ns(Picker& p, const Shape& s, int64_t slot) {
  const uint8_t b = p.byte();
  if (b < 224) return sat_add(s.base, slot * 100'000 + b * 397);
  return kInts[(b - 224) % std::size(kInts)];
}
// A duration (ns): mostly up to 0.28 ms times `scale` (steps are longer than the work in them), or
// a hostile one.
inline int64_t duration_ns(Picker& p, int64_t scale = 1) {
  const uint8_t b = p.byte();
  if (b < 200) return int64_t{b} * b * 7 * scale;
  static constexpr int64_t kDurations[] = {-1, -1'000'000, 0, kMax, kMin, 604'800'000'000'000, 604'800'000'000'001, 1};
  return kDurations[(b - 200) % std::size(kDurations)];
}

// ----------------------------------------------------------------------------------------------
// Route 1: a Kineto JSON document.

class JsonEvents {
 public:
  JsonEvents(Picker& p, const Shape& s) : p_(p), s_(s) {}

  std::string ts(int64_t slot) {
    const uint8_t b = p_.byte();
    if (b >= 240) return std::string(kJsonTimes[b - 240]);
    return micros(time_ns(p_, s_, slot) / (b & 1 ? 1 : 1000) * (b & 1 ? 1 : 1000));  // whole µs or ns precision
  }
  std::string dur(int64_t scale = 1) {
    const uint8_t b = p_.byte();
    if (b >= 240) return std::string(kJsonDurations[b - 240]);
    return micros(duration_ns(p_, scale));
  }
  std::string name() { return json_string(name_of(p_.byte())); }
  // A step's or op's name: mostly what the reports look for.
  std::string named(std::string_view usual) { return p_.byte() < 192 ? json_string(usual) : name(); }
  std::string integer() {
    const uint8_t b = p_.byte();
    return b < 128 ? std::to_string(b % 8) : std::string(kJsonInts[b % std::size(kJsonInts)]);
  }
  std::string pid(int64_t usual) {
    const uint8_t b = p_.byte();
    if (b < 240) return std::to_string(usual);
    static constexpr std::string_view kPids[] = {
        "\"CPU functions\"", "\"\"", "18446744073709551615", "-1", "16777216", "0", "\"Spans\"", "4294967296"};
    return std::string(kPids[b % std::size(kPids)]);
  }

  void add(const std::string& event) {
    if (!out_.empty()) out_ += ",\n";
    out_ += event;
  }
  std::string take() { return std::move(out_); }

 private:
  Picker& p_;
  const Shape& s_;
  std::string out_;
};

inline std::string kineto_json(Picker& p, const Shape& s) {
  JsonEvents ev(p, s);
  const std::string A = std::to_string(s.step_pid), B = std::to_string(s.launch_pid);
  ev.add("{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": 100, \"tid\": 0, \"args\": {\"name\": " + ev.name() +
         "}}");
  ev.add("{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": 200, \"tid\": 201, \"args\": {\"name\": " + ev.name() +
         "}}");
  ev.add("{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": 0, \"tid\": 0, \"args\": {\"name\": \"GPU 0\"}}");
  // Steps, on the step process's thread.
  for (size_t i = 0; i < s.steps; ++i) {
    const std::string step = "ProfilerStep#" + std::to_string(i + 1);
    ev.add("{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": " + ev.named(step) +
           ", \"pid\": " + ev.pid(s.step_pid) + ", \"tid\": " + A +
           "1, \"ts\": " + ev.ts(static_cast<int64_t>(i) * 10) + ", \"dur\": " + ev.dur(16) + "}");
  }
  // CPU ops, in either process.
  for (size_t i = 0; i < s.ops; ++i) {
    const std::string pid = p.bit() ? A : B;
    ev.add("{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": " + ev.named("aten::mm") + ", \"pid\": " + pid +
           ", \"tid\": " + pid + "1, \"ts\": " + ev.ts(static_cast<int64_t>(i)) + ", \"dur\": " + ev.dur() +
           ", \"args\": {\"External id\": " + ev.integer() + ", \"Sequence number\": " + ev.integer() +
           ", \"Fwd thread id\": " + ev.integer() + ", \"Input Dims\": [[" + ev.integer() + ", 3], []]}}");
  }
  // GPU work: each launched by a runtime call (correlation i + 1) of the launching process, or of
  // the other one; kernels, copies and memsets alike.
  const size_t gpu = s.kernels + s.memcpys + s.memsets;
  for (size_t i = 0; i < gpu; ++i) {
    const std::string corr = p.byte() < 224 ? std::to_string(i + 1) : ev.integer();
    const std::string pid = p.byte() < 200 ? B : A;
    const bool kernel = i < s.kernels, copy = !kernel && i < s.kernels + s.memcpys;
    const char* api = kernel ? "cudaLaunchKernel" : copy ? "cudaMemcpyAsync" : "cudaMemsetAsync";
    const int64_t slot = static_cast<int64_t>(i) * 3;
    ev.add("{\"ph\": \"X\", \"cat\": \"" + std::string(p.bit() ? "cuda_driver" : "cuda_runtime") +
           "\", \"name\": " + ev.named(api) + ", \"pid\": " + pid + ", \"tid\": " + pid + "1, \"ts\": " + ev.ts(slot) +
           ", \"dur\": " + ev.dur() + ", \"args\": {\"correlation\": " + corr + ", \"External id\": " + ev.integer() +
           "}}");
    const std::string device = ev.integer(), stream = std::to_string(p.below(3) + 7);
    std::string gpu_event = "{\"ph\": \"X\", \"pid\": " + device + ", \"tid\": \"stream " + stream +
                            "\", \"ts\": " + ev.ts(slot + 1) + ", \"dur\": " + ev.dur() + ", ";
    if (kernel) {
      gpu_event += "\"cat\": \"kernel\", \"name\": " + ev.name() + ", \"args\": {\"correlation\": " + corr +
                   ", \"device\": " + device + ", \"stream\": " + stream + ", \"grid\": [" + ev.integer() + ", 1, 1]" +
                   ", \"block\": [" + ev.integer() + ", 1, 1], \"registers per thread\": " + ev.integer() +
                   ", \"shared memory\": " + ev.integer() +
                   ", \"est. achieved occupancy %\": " + std::string(p.pick(kJsonDoubles));
      if (p.bit()) {  // NCCL's collective arguments
        static constexpr std::string_view kCollectives[] = {"allreduce", "send", "recv", "all_gather", "", "broadcast"};
        gpu_event += ", \"Collective name\": " + json_string(p.pick(kCollectives)) + ", \"dtype\": " + ev.name() +
                     ", \"In msg nelems\": " + ev.integer() + ", \"Out msg nelems\": " + ev.integer() +
                     ", \"Group size\": " + ev.integer() + ", \"Process Group Name\": " + ev.name();
      }
      gpu_event += "}}";
    } else if (copy) {
      static constexpr std::string_view kCopies[] = {"Memcpy HtoD (Pageable -> Device)",
                                                     "Memcpy DtoH (Device -> Pinned)",
                                                     "Memcpy DtoD (Device -> Device)",
                                                     "Memcpy PtoP (Device -> Device)",
                                                     "Memcpy HtoH (Pinned -> Pinned)",
                                                     "Memcpy",
                                                     "Memcpy ?? (x -> )"};
      gpu_event += "\"cat\": \"gpu_memcpy\", \"name\": " + (p.byte() < 224 ? json_string(p.pick(kCopies)) : ev.name()) +
                   ", \"args\": {\"correlation\": " + corr + ", \"device\": " + device + ", \"stream\": " + stream +
                   ", \"bytes\": " + ev.integer() + "}}";
    } else {
      gpu_event += "\"cat\": \"gpu_memset\", \"name\": " + ev.named("Memset (Device)") +
                   ", \"args\": {\"correlation\": " + corr + ", \"device\": " + device + ", \"stream\": " + stream +
                   ", \"bytes\": " + ev.integer() + "}}";
    }
    ev.add(gpu_event);
    if (p.bit()) {  // the launch flow
      ev.add("{\"ph\": \"s\", \"cat\": \"ac2g\", \"name\": \"ac2g\", \"id\": " + corr + ", \"pid\": " + pid +
             ", \"tid\": " + pid + "1, \"ts\": " + ev.ts(slot) + "}");
      ev.add("{\"ph\": \"f\", \"cat\": \"ac2g\", \"name\": \"ac2g\", \"bp\": \"e\", \"id\": " + corr +
             ", \"pid\": 0, \"tid\": " + stream + ", \"ts\": " + ev.ts(slot + 1) + "}");
    }
  }
  // NVTX-like user annotations, GPU annotations and syncs.
  for (size_t i = 0; i < s.ranges; ++i) {
    const bool on_gpu = p.bit();
    ev.add("{\"ph\": \"X\", \"cat\": \"" + std::string(on_gpu ? "gpu_user_annotation" : "user_annotation") +
           "\", \"name\": " + ev.name() + ", \"pid\": " + (on_gpu ? "0" : A) +
           ", \"tid\": " + (on_gpu ? "7" : A + "1") + ", \"ts\": " + ev.ts(static_cast<int64_t>(i) * 5) +
           ", \"dur\": " + ev.dur() + ", \"args\": {\"External id\": " + ev.integer() + "}}");
  }
  for (size_t i = 0; i < s.syncs; ++i) {
    ev.add("{\"ph\": \"X\", \"cat\": \"cuda_sync\", \"name\": " + ev.named("Stream Sync") +
           ", \"pid\": 0, \"tid\": 7, \"ts\": " + ev.ts(static_cast<int64_t>(i) * 7) + ", \"dur\": " + ev.dur() +
           ", \"args\": {\"stream\": " + ev.integer() + ", \"correlation\": " + ev.integer() + "}}");
  }
  // Allocator events, fwd/bwd flows and Python calls.
  for (size_t i = 0; i < s.extras; ++i) {
    switch (p.below(3)) {
      case 0:
        ev.add("{\"ph\": \"i\", \"cat\": \"cpu_instant_event\", \"name\": \"[memory]\", \"s\": \"t\", \"pid\": " + A +
               ", \"tid\": " + A + "1, \"ts\": " + ev.ts(static_cast<int64_t>(i)) +
               ", \"args\": {\"Addr\": " + ev.integer() + ", \"Bytes\": " + ev.integer() +
               ", \"Total Allocated\": " + ev.integer() + ", \"Total Reserved\": " + ev.integer() +
               ", \"Device Type\": " + ev.integer() + ", \"Device Id\": " + ev.integer() + "}}");
        break;
      case 1: {
        const std::string id = ev.integer();
        ev.add("{\"ph\": \"s\", \"cat\": \"fwdbwd\", \"name\": \"fwdbwd\", \"id\": " + id + ", \"pid\": " + A +
               ", \"tid\": " + A + "1, \"ts\": " + ev.ts(static_cast<int64_t>(i)) + "}");
        ev.add("{\"ph\": \"f\", \"cat\": \"fwdbwd\", \"name\": \"fwdbwd\", \"bp\": \"e\", \"id\": " + id +
               ", \"pid\": " + B + ", \"tid\": " + B + "1, \"ts\": " + ev.ts(static_cast<int64_t>(i) + 20) + "}");
        break;
      }
      default:
        ev.add("{\"ph\": \"X\", \"cat\": \"python_function\", \"name\": " + ev.named("train.py(10): step") +
               ", \"pid\": " + A + ", \"tid\": " + A + "1, \"ts\": " + ev.ts(static_cast<int64_t>(i)) +
               ", \"dur\": " + ev.dur() + ", \"args\": {\"Python id\": " + ev.integer() +
               ", \"Python parent id\": " + ev.integer() + "}}");
    }
  }
  std::string doc = "{\"schemaVersion\": 1,\n";
  if (p.bit()) {
    doc += "\"distributedInfo\": {\"backend\": \"nccl\", \"rank\": " + ev.integer() +
           ", \"world_size\": " + ev.integer() + "},\n";
  }
  if (p.bit()) {
    doc += "\"deviceProperties\": [{\"id\": " + ev.integer() + ", \"name\": " + ev.name() +
           ", \"totalGlobalMem\": " + ev.integer() + ", \"computeMajor\": " + ev.integer() +
           ", \"computeMinor\": 0, \"numSms\": " + ev.integer() + "}],\n";
  }
  doc += "\"traceEvents\": [\n" + ev.take() + "]";
  if (p.bit()) doc += ",\n\"baseTimeNanoseconds\": " + ev.integer();
  return doc + "}\n";
}

// ----------------------------------------------------------------------------------------------
// Route 2: the tables an nsys export fills, filled directly (read_nsys_sqlite keeps every value).

class ModelBuilder {
 public:
  ModelBuilder(Picker& p, const Shape& s, Trace& t) : p_(p), s_(s), t_(t) {}

  StrId str() {
    const uint8_t b = p_.byte();
    if (b >= 252) return kNoStr;  // a NULL or unknown string id
    return t_.strings.intern(name_of(b));
  }
  StrId str_or(std::string_view usual) { return p_.byte() < 160 ? t_.strings.intern(usual) : str(); }
  int64_t integer() {
    const uint8_t b = p_.byte();
    return b < 128 ? b % 8 : kInts[b % std::size(kInts)];
  }
  int32_t int32() {
    const uint8_t b = p_.byte();
    return b < 128 ? b % 4 : kInts32[b % std::size(kInts32)];
  }
  uint8_t kind(uint8_t usual_count) {
    const uint8_t b = p_.byte();
    return b < 224 ? static_cast<uint8_t>(b % usual_count) : b < 240 ? kNoKind : b;
  }
  int64_t time(int64_t slot) { return time_ns(p_, s_, slot); }
  // start, end: end from a duration (saturating), or INT64_MIN. (The reader drops interval rows with
  // NULL times, but an export can store INT64_MIN itself, and the reader keeps any integer.)
  void span(int64_t slot, std::vector<TimeNs>& start, std::vector<TimeNs>& end, int64_t scale = 1) {
    const int64_t s = time(slot);
    const int64_t d = duration_ns(p_, scale);
    start.push_back(s);
    end.push_back(d == kMin ? kNoTime : sat_add(s, d));
  }
  int64_t gpid(int64_t usual) {
    const uint8_t b = p_.byte();
    if (b < 200) return make_global_tid(0, usual, 0);
    if (b < 230) return make_global_tid(0, usual == 100 ? 200 : 100, 0);
    return kInts[b % std::size(kInts)];
  }
  int64_t gtid(int64_t usual_pid) {
    const int64_t g = gpid(usual_pid);
    return g | (p_.byte() < 224 ? 1 : 2);
  }
  int64_t correlation(size_t i) { return p_.byte() < 224 ? static_cast<int64_t>(i + 1) : integer(); }

 private:
  Picker& p_;
  const Shape& s_;
  Trace& t_;
};

inline Trace nsys_model(Picker& p, const Shape& s) {
  Trace t;
  ModelBuilder m(p, s, t);
  t.source.path = "fuzz-input.sqlite";
  t.source.format = "nsys-sqlite";
  t.source.product_version = "2026.1.1.204";
  t.source.tables = {"StringIds", "META_DATA_EXPORT", "PROCESSES", "ThreadNames", "TARGET_INFO_GPU"};
  for (int64_t pid : {int64_t{100}, int64_t{200}}) {
    t.processes.push_back(ProcessInfo{make_global_tid(0, pid, 0), pid, m.str_or("python")});
    t.threads.push_back(ThreadInfo{make_global_tid(0, pid, 1), m.str_or("main"), m.int32()});
  }
  if (p.bit()) {
    t.devices.push_back(DeviceInfo{m.int32(), m.str(), m.int32(), m.integer(), m.int32(), m.int32()});
  }

  // NVTX: the steps as push/pop ranges on the step process's thread, then other ranges.
  RangeTable& r = t.ranges;
  auto add_range = [&](uint16_t kind, StrId text, int64_t slot, int64_t global_tid, int64_t scale) {
    m.span(slot, r.start, r.end, scale);
    r.global_tid.push_back(global_tid);
    r.end_global_tid.push_back(p.byte() < 240 ? kNoValue : m.gtid(s.launch_pid));
    r.kind.push_back(kind), r.text.push_back(text);
    r.domain_id.push_back(p.byte() < 200 ? 0 : m.integer());
    r.range_id.push_back(p.byte() < 200 ? kNoValue : m.integer());
    r.row_id.push_back(static_cast<int64_t>(r.row_id.size()) + 1);
  };
  for (size_t i = 0; i < s.steps; ++i) {
    add_range(static_cast<uint16_t>(RangeKind::kNvtxPushPop), m.str_or("ProfilerStep#" + std::to_string(i + 1)),
              static_cast<int64_t>(i) * 10, m.gtid(s.step_pid), 16);
  }
  static constexpr uint16_t kKinds[] = {34, 59, 60, 70, 71, 75, 0xFFFF, 0};
  for (size_t i = 0; i < s.ranges; ++i)
    add_range(p.pick(kKinds), m.str(), static_cast<int64_t>(i) * 5, m.gtid(s.launch_pid), 1);
  if (r.size() > 0) t.source.tables.insert("NVTX_EVENTS");

  // GPU work and the runtime calls that launched it.
  const size_t gpu = s.kernels + s.memcpys + s.memsets;
  ApiTable& a = t.api;
  for (size_t i = 0; i < gpu; ++i) {
    const int64_t slot = static_cast<int64_t>(i) * 3;
    const bool kernel = i < s.kernels, copy = !kernel && i < s.kernels + s.memcpys;
    m.span(slot, a.start, a.end);
    a.global_tid.push_back(m.gtid(s.launch_pid));
    const int64_t corr = m.correlation(i);
    a.correlation.push_back(corr);
    a.return_value.push_back(m.integer());
    a.name.push_back(m.str_or(kernel ? "cudaLaunchKernel_v7000"
                              : copy ? "cudaMemcpyAsync_v3020"
                                     : "cudaMemsetAsync_v3020"));
    a.api_class.push_back(static_cast<uint8_t>(p.below(3)));
    if (kernel) {
      KernelTable& k = t.kernels;
      m.span(slot + 1, k.start, k.end);
      k.global_pid.push_back(m.gpid(s.launch_pid)), k.correlation.push_back(corr);
      k.device.push_back(m.int32()), k.context.push_back(m.int32());
      k.green_context.push_back(p.byte() < 224 ? kNoGreen : m.int32()), k.stream.push_back(m.int32());
      const StrId name = m.str();
      k.name.push_back(name), k.short_name.push_back(p.bit() ? name : m.str()), k.mangled_name.push_back(m.str());
      k.grid_x.push_back(m.int32()), k.grid_y.push_back(m.int32()), k.grid_z.push_back(m.int32());
      k.block_x.push_back(m.int32()), k.block_y.push_back(m.int32()), k.block_z.push_back(m.int32());
      k.registers_per_thread.push_back(m.int32()), k.static_smem.push_back(m.int32()),
          k.dynamic_smem.push_back(m.int32());
      k.graph_node_id.push_back(p.byte() < 224 ? kNoValue : m.integer());
      t.source.tables.insert("CUPTI_ACTIVITY_KIND_KERNEL");
    } else if (copy) {
      MemcpyTable& c = t.memcpys;
      m.span(slot + 1, c.start, c.end);
      c.global_pid.push_back(m.gpid(s.launch_pid)), c.correlation.push_back(corr), c.bytes.push_back(m.integer());
      c.device.push_back(m.int32()), c.context.push_back(m.int32()), c.green_context.push_back(kNoGreen);
      c.stream.push_back(m.int32()), c.src_device.push_back(m.int32()), c.dst_device.push_back(m.int32());
      c.copy_kind.push_back(m.kind(14)), c.src_kind.push_back(m.kind(8)), c.dst_kind.push_back(m.kind(8));
      t.source.tables.insert("CUPTI_ACTIVITY_KIND_MEMCPY");
    } else {
      MemsetTable& c = t.memsets;
      m.span(slot + 1, c.start, c.end);
      c.global_pid.push_back(m.gpid(s.launch_pid)), c.correlation.push_back(corr), c.bytes.push_back(m.integer());
      c.value.push_back(m.integer()), c.device.push_back(m.int32()), c.context.push_back(m.int32());
      c.green_context.push_back(kNoGreen), c.stream.push_back(m.int32()), c.mem_kind.push_back(m.kind(8));
      t.source.tables.insert("CUPTI_ACTIVITY_KIND_MEMSET");
    }
  }
  if (a.size() > 0) t.source.tables.insert("CUPTI_ACTIVITY_KIND_RUNTIME");

  for (size_t i = 0; i < s.syncs; ++i) {
    SyncTable& y = t.syncs;
    m.span(static_cast<int64_t>(i) * 7, y.start, y.end);
    y.global_pid.push_back(m.gpid(s.launch_pid)), y.correlation.push_back(m.correlation(i)),
        y.event_id.push_back(m.integer());
    y.device.push_back(m.int32()), y.context.push_back(m.int32()), y.stream.push_back(m.int32());
    y.sync_type.push_back(m.int32());
    t.source.tables.insert("CUPTI_ACTIVITY_KIND_SYNCHRONIZATION");
  }

  // Everything else an export can hold: one row of a table each.
  for (size_t i = 0; i < s.extras; ++i) {
    const int64_t slot = static_cast<int64_t>(i) * 11;
    switch (p.below(9)) {
      case 0: {
        OsCallTable& o = t.os_calls;
        m.span(slot, o.start, o.end);
        o.global_tid.push_back(m.gtid(s.launch_pid)), o.return_value.push_back(m.integer()),
            o.name.push_back(m.str_or("poll"));
        o.event_class.push_back(p.byte() < 224 ? 27 : m.int32()), o.nesting_level.push_back(m.int32());
        t.source.tables.insert("OSRT_API");
        break;
      }
      case 1: {
        OverheadTable& o = t.overhead;
        m.span(slot, o.start, o.end);
        o.global_tid.push_back(m.gtid(s.launch_pid)), o.name.push_back(m.str_or("CUPTI buffer flush"));
        t.source.tables.insert("PROFILER_OVERHEAD");
        break;
      }
      case 2: {
        MemoryEventTable& e = t.memory;
        e.time.push_back(m.time(slot)), e.global_pid.push_back(m.gpid(s.launch_pid)), e.address.push_back(m.integer());
        e.bytes.push_back(m.integer()), e.correlation.push_back(m.correlation(i)), e.device.push_back(m.int32());
        e.mem_kind.push_back(m.int32()), e.operation.push_back(m.int32());
        t.source.tables.insert("CUDA_GPU_MEMORY_USAGE_EVENTS");
        break;
      }
      case 3: {
        CudaEventTable& e = t.cuda_events;
        const int64_t time = m.time(slot);
        e.time.push_back(time == 0 ? kNoTime : time), e.global_pid.push_back(m.gpid(s.launch_pid));
        e.correlation.push_back(m.correlation(i)), e.event_id.push_back(m.integer()), e.sync_id.push_back(m.integer());
        e.device.push_back(m.int32()), e.context.push_back(m.int32()), e.stream.push_back(m.int32());
        t.source.tables.insert("CUPTI_ACTIVITY_KIND_CUDA_EVENT");
        break;
      }
      case 4: {
        GraphTraceTable& g = t.graph_traces;
        m.span(slot, g.start, g.end);
        g.global_pid.push_back(m.gpid(s.launch_pid)), g.correlation.push_back(m.correlation(i));
        g.graph_id.push_back(m.integer()), g.graph_exec_id.push_back(m.integer());
        g.device.push_back(m.int32()), g.context.push_back(m.int32()), g.stream.push_back(m.int32());
        t.source.tables.insert("CUPTI_ACTIVITY_KIND_GRAPH_TRACE");
        break;
      }
      case 5: {
        SchedTable& d = t.sched;
        d.time.push_back(m.time(slot)), d.global_tid.push_back(m.gtid(s.launch_pid)), d.cpu.push_back(m.int32());
        d.sched_in.push_back(p.bit()), d.state.push_back(m.kind(8));
        CpuSampleTable& c = t.cpu_samples;
        c.time.push_back(m.time(slot)), c.global_tid.push_back(m.gtid(s.step_pid)), c.state.push_back(m.kind(8));
        t.source.tables.insert("SCHED_EVENTS");
        t.source.tables.insert("COMPOSITE_EVENTS");
        break;
      }
      case 6: {
        UmMigrationTable& u = t.unified_memory.migrations;
        m.span(slot, u.start, u.end);
        u.global_pid.push_back(m.gpid(s.launch_pid)), u.bytes.push_back(m.integer());
        u.virtual_address.push_back(m.integer()), u.device.push_back(m.int32());
        u.copy_kind.push_back(static_cast<uint8_t>(11 + p.below(3))), u.migration_cause.push_back(m.kind(6));
        // The reader takes migrations from the memcpy table, where the row stays too.
        MemcpyTable& c = t.memcpys;
        c.start.push_back(u.start.back()), c.end.push_back(u.end.back()), c.global_pid.push_back(u.global_pid.back());
        c.correlation.push_back(kNoValue), c.bytes.push_back(u.bytes.back()), c.device.push_back(u.device.back());
        c.context.push_back(0), c.green_context.push_back(kNoGreen), c.stream.push_back(0);
        c.src_device.push_back(kNoGreen), c.dst_device.push_back(kNoGreen);
        c.copy_kind.push_back(u.copy_kind.back()), c.src_kind.push_back(kNoKind), c.dst_kind.push_back(kNoKind);
        t.source.tables.insert("CUPTI_ACTIVITY_KIND_MEMCPY");
        break;
      }
      case 7: {
        UmCpuPageFaultTable& c = t.unified_memory.cpu_faults;
        c.time.push_back(m.time(slot)), c.global_pid.push_back(m.gpid(s.launch_pid)), c.address.push_back(m.integer());
        UmGpuPageFaultTable& g = t.unified_memory.gpu_faults;
        m.span(slot, g.start, g.end);
        g.global_pid.push_back(m.gpid(s.launch_pid)), g.address.push_back(m.integer()),
            g.fault_count.push_back(m.integer());
        g.device.push_back(m.int32()), g.access_type.push_back(m.kind(4));
        t.source.tables.insert("CUDA_UM_CPU_PAGE_FAULT_EVENTS");
        t.source.tables.insert("CUDA_UM_GPU_PAGE_FAULT_EVENTS");
        break;
      }
      default: {
        OpenMpEventTable& o = t.openmp;
        if (o.source_tables.empty()) o.source_tables = {"OPENMP_EVENT_KIND_PARALLEL", "OPENMP_EVENT_KIND_TASK"};
        m.span(slot, o.start, o.end);
        o.global_tid.push_back(m.gtid(s.step_pid)), o.name.push_back(m.str_or("omp_parallel"));
        o.event_kind.push_back(m.kind(40)), o.source.push_back(static_cast<uint16_t>(p.below(2)));
        for (const auto& name : o.source_tables) t.source.tables.insert(name);
      }
    }
  }
  count_reversed_rows(t);  // as the reader: rows that end before they start are kept, and counted
  return t;
}

}  // namespace tracedoc::fuzz::recipe
