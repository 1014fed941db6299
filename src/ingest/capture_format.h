// The file format of `tracedoc capture` (".tdcap"): what the injection library (src/inject) writes
// while the program runs and ingest/capture_reader reads. Built to survive the program's death:
//
//   file    = header frame*
//   header  = "TDCAP" 0x00 version(u16)                       8 bytes
//   frame   = magic(u32 'TDFR') length(u32) crc32(u32) payload[length]
//   payload = record*
//   record  = type(u16) size(u16) body[size]
//
// A frame is one completed buffer, written with a single write(2) and never rewritten, so a process
// killed at any instant leaves whole frames followed by at most one torn frame (short, or with a
// CRC that does not match): the reader keeps every whole frame and counts the torn tail. Integers
// are little-endian; times are int64 ns of CLOCK_REALTIME (the clock CUPTI is told to use too), so
// the files of several processes line up. Strings are written once per process (kString) and
// referred to by id; a record type the reader does not know is skipped by its size.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <type_traits>

namespace tracedoc::capture {

inline constexpr char kFileMagic[8] = {'T', 'D', 'C', 'A', 'P', 0, 1, 0};  // version 1
inline constexpr uint32_t kFrameMagic = 0x52464454;  // "TDFR"
inline constexpr size_t kFrameHeader = 12;
inline constexpr uint32_t kMaxFrame = 64u << 20;     // larger lengths are corruption

enum class RecordType : uint16_t {
  kProcess = 1,      // i64 pid, i64 ppid, i64 start_ns; name bytes (the command line's first word)
  kThreadName = 2,   // i64 tid; name bytes
  kString = 3,       // u32 id; bytes
  kDomain = 4,       // u32 domain id; name bytes
  kNvtxPush = 10,    // i64 tid, i64 time, u32 domain, u32 text, u32 argb, u32 category
  kNvtxPop = 11,     // i64 tid, i64 time, u32 domain
  kNvtxStart = 12,   // u64 range id, i64 tid, i64 time, u32 domain, u32 text, u32 argb, u32 category
  kNvtxEnd = 13,     // u64 range id, i64 tid, i64 time
  kNvtxMark = 14,    // i64 tid, i64 time, u32 domain, u32 text, u32 argb, u32 category
  kKernel = 20,      // KernelBody
  kMemcpy = 21,      // MemcpyBody
  kMemset = 22,      // MemsetBody
  kApi = 23,         // ApiBody
  kSync = 24,        // SyncBody
  kMemory = 25,      // MemoryBody
  kOverhead = 26,    // i64 tid, i64 start, i64 end, u32 kind
  kDevice = 27,      // DeviceBody
  kDropped = 28,     // u64 records CUPTI dropped (buffers full)
  kCaptureRange = 29, // i64 start, i64 end: the stretch the capture range recorded
  kCudaEvent = 30,    // CudaEventBody
  kGraphTrace = 31,   // GraphTraceBody
  kOsCall = 32,       // OsCallBody
  kOsThreadName = 33, // i64 tid; name bytes: the kernel's name of the thread (/proc/self/task/T/comm)
};

// Fixed-layout bodies of the CUDA activity records (what the CUPTI records carry that tracedoc's
// model keeps). Written and read field by field, never as raw structs, so padding never matters.
struct KernelBody {
  int64_t start = 0, end = 0, correlation = 0, graph_node = 0;
  int32_t device = 0, context = 0, stream = 0;
  int32_t grid_x = 0, grid_y = 0, grid_z = 0, block_x = 0, block_y = 0, block_z = 0;
  int32_t registers = 0, static_smem = 0, dynamic_smem = 0;
  uint32_t name = 0;  // kString id of the (mangled) name
};
struct MemcpyBody {
  int64_t start = 0, end = 0, correlation = 0, bytes = 0;
  int32_t device = 0, context = 0, stream = 0, src_device = -1, dst_device = -1;
  uint8_t copy_kind = 0, src_kind = 0, dst_kind = 0;
};
struct MemsetBody {
  int64_t start = 0, end = 0, correlation = 0, bytes = 0, value = 0;
  int32_t device = 0, context = 0, stream = 0;
  uint8_t mem_kind = 0;
};
struct ApiBody {
  int64_t tid = 0, start = 0, end = 0, correlation = 0, return_value = 0;
  uint32_t name = 0;      // kString id ("cudaLaunchKernel_v7000")
  uint8_t api_class = 0;  // ApiClass: 0 runtime, 1 driver
};
struct SyncBody {
  int64_t start = 0, end = 0, correlation = 0, event = -1;
  int32_t device = 0, context = 0, stream = 0, sync_type = 0;
};
struct MemoryBody {
  int64_t time = 0, address = 0, bytes = 0, correlation = 0;
  int32_t device = 0, mem_kind = 0, operation = 0;  // operation: 0 allocation, 1 free
};
struct CudaEventBody {
  int64_t correlation = 0, event = 0, sync_id = -1, device_time = 0;  // device_time 0: not collected
  int32_t device = 0, context = 0, stream = 0;
};
struct GraphTraceBody {
  int64_t start = 0, end = 0, correlation = 0, graph_id = 0;
  int32_t device = 0, context = 0, stream = 0;
};
struct OsCallBody {
  int64_t tid = 0, start = 0, end = 0, return_value = 0;
  uint32_t name = 0;  // kString id of the function ("poll")
};
struct DeviceBody {
  int32_t id = 0, sm_count = 0, compute_major = 0, compute_minor = 0;
  int64_t total_memory = 0;
  uint32_t name = 0;
};

// Appends little-endian values to a record body.
class BodyWriter {
 public:
  explicit BodyWriter(std::string& out) : out_(out) {}
  template <typename T>
  BodyWriter& put(T v) {
    static_assert(std::is_integral_v<T>);
    char bytes[sizeof(T)];
    for (size_t i = 0; i < sizeof(T); ++i) bytes[i] = static_cast<char>((static_cast<uint64_t>(v) >> (8 * i)) & 0xFF);
    out_.append(bytes, sizeof(T));  // one append, not a push_back per byte: bodies are built per event
    return *this;
  }
  BodyWriter& bytes(std::string_view s) {
    out_.append(s);
    return *this;
  }

 private:
  std::string& out_;
};

// Reads little-endian values from a record body; reading past the end yields zeros and sets `short_read`.
class BodyReader {
 public:
  explicit BodyReader(std::string_view body) : body_(body) {}
  template <typename T>
  T get() {
    static_assert(std::is_integral_v<T>);
    if (at_ + sizeof(T) > body_.size()) {
      short_read = true;
      at_ = body_.size();
      return 0;
    }
    uint64_t v = 0;
    for (size_t i = 0; i < sizeof(T); ++i) v |= static_cast<uint64_t>(static_cast<unsigned char>(body_[at_ + i])) << (8 * i);
    at_ += sizeof(T);
    return static_cast<T>(v);
  }
  std::string_view rest() {
    std::string_view r = body_.substr(at_);
    at_ = body_.size();
    return r;
  }
  bool short_read = false;

 private:
  std::string_view body_;
  size_t at_ = 0;
};

// One record (type, size, body) appended to a frame's payload.
inline void append_record(std::string& payload, RecordType type, std::string_view body) {
  BodyWriter(payload).put(static_cast<uint16_t>(type)).put(static_cast<uint16_t>(body.size())).bytes(body);
}
// The frame of a payload: its header (magic, length, CRC) and the payload, ready for one write(2).
inline std::string frame_of(std::string_view payload);

// Record bodies, one function per type, shared by the writer (injection library) and the tests.
inline void put_kernel(BodyWriter& w, const KernelBody& k) {
  w.put(k.start).put(k.end).put(k.correlation).put(k.graph_node).put(k.device).put(k.context).put(k.stream);
  w.put(k.grid_x).put(k.grid_y).put(k.grid_z).put(k.block_x).put(k.block_y).put(k.block_z);
  w.put(k.registers).put(k.static_smem).put(k.dynamic_smem).put(k.name);
}
inline KernelBody get_kernel(BodyReader& r) {
  KernelBody k;
  k.start = r.get<int64_t>(), k.end = r.get<int64_t>(), k.correlation = r.get<int64_t>(), k.graph_node = r.get<int64_t>();
  k.device = r.get<int32_t>(), k.context = r.get<int32_t>(), k.stream = r.get<int32_t>();
  k.grid_x = r.get<int32_t>(), k.grid_y = r.get<int32_t>(), k.grid_z = r.get<int32_t>();
  k.block_x = r.get<int32_t>(), k.block_y = r.get<int32_t>(), k.block_z = r.get<int32_t>();
  k.registers = r.get<int32_t>(), k.static_smem = r.get<int32_t>(), k.dynamic_smem = r.get<int32_t>();
  k.name = r.get<uint32_t>();
  return k;
}
inline void put_memcpy(BodyWriter& w, const MemcpyBody& m) {
  w.put(m.start).put(m.end).put(m.correlation).put(m.bytes).put(m.device).put(m.context).put(m.stream);
  w.put(m.src_device).put(m.dst_device).put(m.copy_kind).put(m.src_kind).put(m.dst_kind);
}
inline MemcpyBody get_memcpy(BodyReader& r) {
  MemcpyBody m;
  m.start = r.get<int64_t>(), m.end = r.get<int64_t>(), m.correlation = r.get<int64_t>(), m.bytes = r.get<int64_t>();
  m.device = r.get<int32_t>(), m.context = r.get<int32_t>(), m.stream = r.get<int32_t>();
  m.src_device = r.get<int32_t>(), m.dst_device = r.get<int32_t>();
  m.copy_kind = r.get<uint8_t>(), m.src_kind = r.get<uint8_t>(), m.dst_kind = r.get<uint8_t>();
  return m;
}
inline void put_memset(BodyWriter& w, const MemsetBody& m) {
  w.put(m.start).put(m.end).put(m.correlation).put(m.bytes).put(m.value).put(m.device).put(m.context).put(m.stream).put(m.mem_kind);
}
inline MemsetBody get_memset(BodyReader& r) {
  MemsetBody m;
  m.start = r.get<int64_t>(), m.end = r.get<int64_t>(), m.correlation = r.get<int64_t>(), m.bytes = r.get<int64_t>();
  m.value = r.get<int64_t>(), m.device = r.get<int32_t>(), m.context = r.get<int32_t>(), m.stream = r.get<int32_t>();
  m.mem_kind = r.get<uint8_t>();
  return m;
}
inline void put_api(BodyWriter& w, const ApiBody& a) {
  w.put(a.tid).put(a.start).put(a.end).put(a.correlation).put(a.return_value).put(a.name).put(a.api_class);
}
inline ApiBody get_api(BodyReader& r) {
  ApiBody a;
  a.tid = r.get<int64_t>(), a.start = r.get<int64_t>(), a.end = r.get<int64_t>(), a.correlation = r.get<int64_t>();
  a.return_value = r.get<int64_t>(), a.name = r.get<uint32_t>(), a.api_class = r.get<uint8_t>();
  return a;
}
inline void put_sync(BodyWriter& w, const SyncBody& s) {
  w.put(s.start).put(s.end).put(s.correlation).put(s.event).put(s.device).put(s.context).put(s.stream).put(s.sync_type);
}
inline SyncBody get_sync(BodyReader& r) {
  SyncBody s;
  s.start = r.get<int64_t>(), s.end = r.get<int64_t>(), s.correlation = r.get<int64_t>(), s.event = r.get<int64_t>();
  s.device = r.get<int32_t>(), s.context = r.get<int32_t>(), s.stream = r.get<int32_t>(), s.sync_type = r.get<int32_t>();
  return s;
}
inline void put_memory(BodyWriter& w, const MemoryBody& m) {
  w.put(m.time).put(m.address).put(m.bytes).put(m.correlation).put(m.device).put(m.mem_kind).put(m.operation);
}
inline MemoryBody get_memory(BodyReader& r) {
  MemoryBody m;
  m.time = r.get<int64_t>(), m.address = r.get<int64_t>(), m.bytes = r.get<int64_t>(), m.correlation = r.get<int64_t>();
  m.device = r.get<int32_t>(), m.mem_kind = r.get<int32_t>(), m.operation = r.get<int32_t>();
  return m;
}
inline void put_cuda_event(BodyWriter& w, const CudaEventBody& e) {
  w.put(e.correlation).put(e.event).put(e.sync_id).put(e.device_time).put(e.device).put(e.context).put(e.stream);
}
inline CudaEventBody get_cuda_event(BodyReader& r) {
  CudaEventBody e;
  e.correlation = r.get<int64_t>(), e.event = r.get<int64_t>(), e.sync_id = r.get<int64_t>(), e.device_time = r.get<int64_t>();
  e.device = r.get<int32_t>(), e.context = r.get<int32_t>(), e.stream = r.get<int32_t>();
  return e;
}
inline void put_graph_trace(BodyWriter& w, const GraphTraceBody& g) {
  w.put(g.start).put(g.end).put(g.correlation).put(g.graph_id).put(g.device).put(g.context).put(g.stream);
}
inline GraphTraceBody get_graph_trace(BodyReader& r) {
  GraphTraceBody g;
  g.start = r.get<int64_t>(), g.end = r.get<int64_t>(), g.correlation = r.get<int64_t>(), g.graph_id = r.get<int64_t>();
  g.device = r.get<int32_t>(), g.context = r.get<int32_t>(), g.stream = r.get<int32_t>();
  return g;
}
inline void put_os_call(BodyWriter& w, const OsCallBody& o) {
  w.put(o.tid).put(o.start).put(o.end).put(o.return_value).put(o.name);
}
inline OsCallBody get_os_call(BodyReader& r) {
  OsCallBody o;
  o.tid = r.get<int64_t>(), o.start = r.get<int64_t>(), o.end = r.get<int64_t>(), o.return_value = r.get<int64_t>();
  o.name = r.get<uint32_t>();
  return o;
}
inline void put_device(BodyWriter& w, const DeviceBody& d) {
  w.put(d.id).put(d.sm_count).put(d.compute_major).put(d.compute_minor).put(d.total_memory).put(d.name);
}
inline DeviceBody get_device(BodyReader& r) {
  DeviceBody d;
  d.id = r.get<int32_t>(), d.sm_count = r.get<int32_t>(), d.compute_major = r.get<int32_t>(), d.compute_minor = r.get<int32_t>();
  d.total_memory = r.get<int64_t>(), d.name = r.get<uint32_t>();
  return d;
}

// CRC-32 (the zlib / PNG polynomial) with a table made at compile time: the injection library
// needs no zlib, and a frame of a few MB costs milliseconds.
// Slicing by 8 (eight tables, eight bytes a step): every byte recorded goes through it once.
inline constexpr auto kCrcTables = [] {
  std::array<std::array<uint32_t, 256>, 8> t{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
    t[0][i] = c;
  }
  for (uint32_t i = 0; i < 256; ++i) {
    for (size_t s = 1; s < 8; ++s) t[s][i] = (t[s - 1][i] >> 8) ^ t[0][t[s - 1][i] & 0xFF];
  }
  return t;
}();
inline uint32_t crc32_of(std::string_view data) {
  const auto& t = kCrcTables;
  uint32_t crc = 0xFFFFFFFFu;
  const auto* p = reinterpret_cast<const unsigned char*>(data.data());
  size_t n = data.size();
  for (; n >= 8; n -= 8, p += 8) {
    const uint32_t lo = crc ^ (uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24);
    crc = t[7][lo & 0xFF] ^ t[6][(lo >> 8) & 0xFF] ^ t[5][(lo >> 16) & 0xFF] ^ t[4][lo >> 24] ^ t[3][p[4]] ^ t[2][p[5]] ^
          t[1][p[6]] ^ t[0][p[7]];
  }
  for (; n > 0; --n, ++p) crc = t[0][(crc ^ *p) & 0xFF] ^ (crc >> 8);
  return ~crc;
}

inline std::string frame_of(std::string_view payload) {
  std::string frame;
  frame.reserve(kFrameHeader + payload.size());
  BodyWriter(frame).put(kFrameMagic).put(static_cast<uint32_t>(payload.size())).put(crc32_of(payload));
  frame.append(payload);
  return frame;
}

}  // namespace tracedoc::capture
