// The protobuf wire format, read: enough to walk the messages of an Nsight Compute report
// (ingest/ncu_report_reader.h) without libprotobuf or generated code. A message is a run of fields,
// each a key (field number << 3 | wire type) as a varint and then its value: a varint, 8 or 4
// little-endian bytes, or a varint length and that many bytes (strings, bytes, nested messages,
// packed lists). Groups (wire types 3 and 4) are long deprecated and treated as corruption.
//
// Every read is checked against the bytes left: a cut or corrupt message ends the walk with
// failed() set, never a read past the end. Fields the caller does not know are skipped by the
// caller simply not asking for them.
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace tracedoc::protobuf {

enum class WireType : uint8_t { kVarint = 0, kFixed64 = 1, kBytes = 2, kFixed32 = 5 };

struct Field {
  uint32_t number = 0;
  WireType type = WireType::kVarint;
  uint64_t value = 0;      // kVarint, kFixed64 and kFixed32 (the raw little-endian bits)
  std::string_view bytes;  // kBytes

  double as_double() const { return type == WireType::kFixed64 ? std::bit_cast<double>(value) : 0.0; }
  float as_float() const {
    return type == WireType::kFixed32 ? std::bit_cast<float>(static_cast<uint32_t>(value)) : 0.0f;
  }
};

class Message {
 public:
  explicit Message(std::string_view bytes) : rest_(bytes) {}

  // The next field into `f`; false at the end of the message or when it is corrupt (then failed()).
  bool next(Field& f) {
    if (rest_.empty() || failed_) return false;
    uint64_t key = 0;
    if (!varint(key) || key >> 3 == 0 || key >> 3 > 0x1FFFFFFF) return fail();
    f.number = static_cast<uint32_t>(key >> 3);
    f.bytes = {};
    switch (key & 7) {
      case 0: f.type = WireType::kVarint; return varint(f.value) || fail();
      case 1: f.type = WireType::kFixed64; return fixed(8, f.value) || fail();
      case 5: f.type = WireType::kFixed32; return fixed(4, f.value) || fail();
      case 2: {
        f.type = WireType::kBytes;
        uint64_t n = 0;
        if (!varint(n) || n > rest_.size()) return fail();
        f.bytes = rest_.substr(0, n);
        rest_.remove_prefix(n);
        return true;
      }
      default: return fail();
    }
  }
  bool failed() const { return failed_; }

 private:
  bool fail() {
    failed_ = true;
    return false;
  }
  bool varint(uint64_t& out) {
    out = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (rest_.empty()) return false;
      const auto byte = static_cast<unsigned char>(rest_.front());
      rest_.remove_prefix(1);
      out |= static_cast<uint64_t>(byte & 0x7F) << shift;
      if (!(byte & 0x80)) return true;
    }
    return false;  // more than ten bytes: not a varint
  }
  bool fixed(size_t n, uint64_t& out) {
    if (rest_.size() < n) return false;
    out = 0;
    for (size_t i = 0; i < n; ++i) out |= static_cast<uint64_t>(static_cast<unsigned char>(rest_[i])) << (8 * i);
    rest_.remove_prefix(n);
    return true;
  }

  std::string_view rest_;
  bool failed_ = false;
};

}  // namespace tracedoc::protobuf
