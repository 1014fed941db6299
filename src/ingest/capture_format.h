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
#include <tuple>
#include <type_traits>

namespace tracedoc::capture {

inline constexpr char kFileMagic[8] = {'T', 'D', 'C', 'A', 'P', 0, 1, 0};  // version 1
inline constexpr uint32_t kFrameMagic = 0x52464454;                        // "TDFR"
inline constexpr size_t kFrameHeader = 12;
inline constexpr uint32_t kMaxFrame = 64u << 20;  // larger lengths are corruption

enum class RecordType : uint16_t {
  kProcess = 1,        // i64 pid, i64 ppid, i64 start_ns; name bytes (the command line's first word)
  kThreadName = 2,     // i64 tid; name bytes
  kString = 3,         // u32 id; bytes
  kDomain = 4,         // u32 domain id; name bytes
  kNvtxPush = 10,      // i64 tid, i64 time, u32 domain, u32 text, u32 argb, u32 category
  kNvtxPop = 11,       // i64 tid, i64 time, u32 domain
  kNvtxStart = 12,     // u64 range id, i64 tid, i64 time, u32 domain, u32 text, u32 argb, u32 category
  kNvtxEnd = 13,       // u64 range id, i64 tid, i64 time
  kNvtxMark = 14,      // i64 tid, i64 time, u32 domain, u32 text, u32 argb, u32 category
  kKernel = 20,        // KernelBody
  kMemcpy = 21,        // MemcpyBody
  kMemset = 22,        // MemsetBody
  kApi = 23,           // ApiBody
  kSync = 24,          // SyncBody
  kMemory = 25,        // MemoryBody
  kOverhead = 26,      // i64 tid, i64 start, i64 end, u32 kind
  kDevice = 27,        // DeviceBody
  kDropped = 28,       // u64 records CUPTI dropped (buffers full)
  kCaptureRange = 29,  // i64 start, i64 end: the stretch the capture range recorded
  kCudaEvent = 30,     // CudaEventBody
  kGraphTrace = 31,    // GraphTraceBody
  kOsCall = 32,        // OsCallBody, then its call stack when --osrt-backtrace recorded one (u64 pc*, leaf first)
  kOsThreadName = 33,  // i64 tid; name bytes: the kernel's name of the thread (/proc/self/task/T/comm)
  kCpuSample = 34,     // i64 tid, i64 time, i32 cpu; u64 pc* (the call stack, leaf first: the interrupted pc,
                       // then return addresses)
  kModule = 35,        // u64 start, u64 end, u64 file offset; path bytes: an executable mapping of the process
  kSymbol = 36,        // u64 address, u8 return address (1) or interrupted pc (0), u8 resolved; symbol bytes,
                       // NUL, module bytes: an address's name, appended by `tracedoc capture` once the program ended
};

// The deepest call stack a CPU sample or an OS call records (nsys's default depth is 128 too).
inline constexpr int kMaxStackDepth = 128;

// Fixed-layout bodies of the CUDA activity records (what the CUPTI records carry that tracedoc's
// model keeps). Each body is described once, as a field list (type, name, default): the list makes
// the struct's members and fields(), and put_body / get_body write and read the fields in that
// order, little-endian, never as raw structs, so padding never matters and the writer and the
// reader cannot disagree. A field added to a list is written and read with no other edit.
#define TRACEDOC_CAPTURE_FIELD_MEMBER(type, name, init) type name = init;
#define TRACEDOC_CAPTURE_FIELD_POINTER(type, name, init) &Self::name,
#define TRACEDOC_CAPTURE_BODY(BodyType, FIELD_LIST)                \
  FIELD_LIST(TRACEDOC_CAPTURE_FIELD_MEMBER)                        \
  static constexpr auto fields() {                                 \
    using Self = BodyType;                                         \
    return std::tuple{FIELD_LIST(TRACEDOC_CAPTURE_FIELD_POINTER)}; \
  }

// One field per line (clang-format would join them).
// clang-format off
#define TRACEDOC_KERNEL_BODY(F)                               \
  F(int64_t, start, 0)                                        \
  F(int64_t, end, 0)                                          \
  F(int64_t, correlation, 0)                                  \
  F(int64_t, graph_node, 0)                                   \
  F(int32_t, device, 0)                                       \
  F(int32_t, context, 0)                                      \
  F(int32_t, stream, 0)                                       \
  F(int32_t, grid_x, 0)                                       \
  F(int32_t, grid_y, 0)                                       \
  F(int32_t, grid_z, 0)                                       \
  F(int32_t, block_x, 0)                                      \
  F(int32_t, block_y, 0)                                      \
  F(int32_t, block_z, 0)                                      \
  F(int32_t, registers, 0)                                    \
  F(int32_t, static_smem, 0)                                  \
  F(int32_t, dynamic_smem, 0)                                 \
  F(uint32_t, name, 0) /* kString id of the (mangled) name */
struct KernelBody {
  TRACEDOC_CAPTURE_BODY(KernelBody, TRACEDOC_KERNEL_BODY)
};
#define TRACEDOC_MEMCPY_BODY(F) \
  F(int64_t, start, 0)          \
  F(int64_t, end, 0)            \
  F(int64_t, correlation, 0)    \
  F(int64_t, bytes, 0)          \
  F(int32_t, device, 0)         \
  F(int32_t, context, 0)        \
  F(int32_t, stream, 0)         \
  F(int32_t, src_device, -1)    \
  F(int32_t, dst_device, -1)    \
  F(uint8_t, copy_kind, 0)      \
  F(uint8_t, src_kind, 0)       \
  F(uint8_t, dst_kind, 0)
struct MemcpyBody {
  TRACEDOC_CAPTURE_BODY(MemcpyBody, TRACEDOC_MEMCPY_BODY)
};
#define TRACEDOC_MEMSET_BODY(F) \
  F(int64_t, start, 0)          \
  F(int64_t, end, 0)            \
  F(int64_t, correlation, 0)    \
  F(int64_t, bytes, 0)          \
  F(int64_t, value, 0)          \
  F(int32_t, device, 0)         \
  F(int32_t, context, 0)        \
  F(int32_t, stream, 0)         \
  F(uint8_t, mem_kind, 0)
struct MemsetBody {
  TRACEDOC_CAPTURE_BODY(MemsetBody, TRACEDOC_MEMSET_BODY)
};
#define TRACEDOC_API_BODY(F)                                       \
  F(int64_t, tid, 0)                                               \
  F(int64_t, start, 0)                                             \
  F(int64_t, end, 0)                                               \
  F(int64_t, correlation, 0)                                       \
  F(int64_t, return_value, 0)                                      \
  F(uint32_t, name, 0) /* kString id ("cudaLaunchKernel_v7000") */ \
  F(uint8_t, api_class, 0) /* ApiClass: 0 runtime, 1 driver */
struct ApiBody {
  TRACEDOC_CAPTURE_BODY(ApiBody, TRACEDOC_API_BODY)
};
#define TRACEDOC_SYNC_BODY(F) \
  F(int64_t, start, 0)        \
  F(int64_t, end, 0)          \
  F(int64_t, correlation, 0)  \
  F(int64_t, event, -1)       \
  F(int32_t, device, 0)       \
  F(int32_t, context, 0)      \
  F(int32_t, stream, 0)       \
  F(int32_t, sync_type, 0)
struct SyncBody {
  TRACEDOC_CAPTURE_BODY(SyncBody, TRACEDOC_SYNC_BODY)
};
#define TRACEDOC_MEMORY_BODY(F)                       \
  F(int64_t, time, 0)                                 \
  F(int64_t, address, 0)                              \
  F(int64_t, bytes, 0)                                \
  F(int64_t, correlation, 0)                          \
  F(int32_t, device, 0)                               \
  F(int32_t, mem_kind, 0)                             \
  F(int32_t, operation, 0) /* 0 allocation, 1 free */
struct MemoryBody {
  TRACEDOC_CAPTURE_BODY(MemoryBody, TRACEDOC_MEMORY_BODY)
};
#define TRACEDOC_CUDA_EVENT_BODY(F)                 \
  F(int64_t, correlation, 0)                        \
  F(int64_t, event, 0)                              \
  F(int64_t, sync_id, -1)                           \
  F(int64_t, device_time, 0) /* 0: not collected */ \
  F(int32_t, device, 0)                             \
  F(int32_t, context, 0)                            \
  F(int32_t, stream, 0)
struct CudaEventBody {
  TRACEDOC_CAPTURE_BODY(CudaEventBody, TRACEDOC_CUDA_EVENT_BODY)
};
#define TRACEDOC_GRAPH_TRACE_BODY(F) \
  F(int64_t, start, 0)               \
  F(int64_t, end, 0)                 \
  F(int64_t, correlation, 0)         \
  F(int64_t, graph_id, 0)            \
  F(int32_t, device, 0)              \
  F(int32_t, context, 0)             \
  F(int32_t, stream, 0)
struct GraphTraceBody {
  TRACEDOC_CAPTURE_BODY(GraphTraceBody, TRACEDOC_GRAPH_TRACE_BODY)
};
#define TRACEDOC_OS_CALL_BODY(F)                                 \
  F(int64_t, tid, 0)                                             \
  F(int64_t, start, 0)                                           \
  F(int64_t, end, 0)                                             \
  F(int64_t, return_value, 0)                                    \
  F(uint32_t, name, 0) /* kString id of the function ("poll") */
struct OsCallBody {
  TRACEDOC_CAPTURE_BODY(OsCallBody, TRACEDOC_OS_CALL_BODY)
};
#define TRACEDOC_DEVICE_BODY(F) \
  F(int32_t, id, 0)             \
  F(int32_t, sm_count, 0)       \
  F(int32_t, compute_major, 0)  \
  F(int32_t, compute_minor, 0)  \
  F(int64_t, total_memory, 0)   \
  F(uint32_t, name, 0)
struct DeviceBody {
  TRACEDOC_CAPTURE_BODY(DeviceBody, TRACEDOC_DEVICE_BODY)
};
// clang-format on

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
    for (size_t i = 0; i < sizeof(T); ++i)
      v |= static_cast<uint64_t>(static_cast<unsigned char>(body_[at_ + i])) << (8 * i);
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

// A record body, field by field in its list's order: the writer (injection library), the reader and
// the tests share these two.
template <typename Body>
void put_body(BodyWriter& w, const Body& body) {
  std::apply([&](auto... field) { (w.put(body.*field), ...); }, Body::fields());
}
template <typename Body>
Body get_body(BodyReader& r) {
  Body body;
  std::apply([&](auto... field) { ((body.*field = r.get<std::remove_reference_t<decltype(body.*field)>>()), ...); },
             Body::fields());
  return body;
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
    crc = t[7][lo & 0xFF] ^ t[6][(lo >> 8) & 0xFF] ^ t[5][(lo >> 16) & 0xFF] ^ t[4][lo >> 24] ^ t[3][p[4]] ^
          t[2][p[5]] ^ t[1][p[6]] ^ t[0][p[7]];
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
