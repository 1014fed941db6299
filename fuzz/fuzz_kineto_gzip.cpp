// libFuzzer target: gzip-compressed Kineto traces (.json.gz) -> read_kineto_bytes (the ISA-L
// inflater on its thread, then the JSON reader) -> the PyTorch reports. The body is
// tracedoc::fuzz::fuzz_kineto (fuzz_targets.h), the same as fuzz_kineto_json's.
//
// Why a custom mutator: byte mutations of compressed data almost never survive the CRC check, so
// a plain gzip fuzzer spends its time on the first few error paths of the inflater. Here, most
// mutations inflate the input, mutate the JSON inside, and compress it again (sometimes as two
// concatenated members, as Python's gzip appends them): the whole reader behind a valid gzip
// stream gets fuzzed. The rest mutate the compressed bytes as they are, for the corrupt-header,
// bad-block, CRC and truncation paths.
#include <zlib.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "fuzz_targets.h"

extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

namespace {

// The inflated size a mutation works on: bounded so one mutation stays fast.
constexpr size_t kMaxInflated = 1u << 20;

// Inflates every gzip member of `in`; false when it is not a complete, valid gzip stream.
bool gunzip(const uint8_t* in, size_t size, std::vector<uint8_t>& out) {
  out.clear();
  z_stream z{};
  if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) return false;
  z.next_in = const_cast<uint8_t*>(in);
  z.avail_in = static_cast<uInt>(size);
  uint8_t buf[16384];
  bool ok = false;
  for (;;) {
    z.next_out = buf;
    z.avail_out = sizeof buf;
    const int rc = inflate(&z, Z_NO_FLUSH);
    out.insert(out.end(), buf, buf + (sizeof buf - z.avail_out));
    if (out.size() > kMaxInflated) break;
    if (rc == Z_STREAM_END) {
      if (z.avail_in == 0) {
        ok = true;
        break;
      }
      if (inflateReset(&z) != Z_OK) break;  // another member follows
      continue;
    }
    if (rc != Z_OK) break;
  }
  inflateEnd(&z);
  return ok;
}

// Appends `data` to `out` as one gzip member at compression `level` (0..9).
bool gzip_member(const uint8_t* data, size_t size, int level, std::vector<uint8_t>& out) {
  z_stream z{};
  if (deflateInit2(&z, level, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK) return false;
  const size_t start = out.size();
  out.resize(start + deflateBound(&z, static_cast<uLong>(size)));
  z.next_in = const_cast<uint8_t*>(data);
  z.avail_in = static_cast<uInt>(size);
  z.next_out = out.data() + start;
  z.avail_out = static_cast<uInt>(out.size() - start);
  const int rc = deflate(&z, Z_FINISH);
  out.resize(start + (out.size() - start - z.avail_out));
  deflateEnd(&z);
  return rc == Z_STREAM_END;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return tracedoc::fuzz::fuzz_kineto({reinterpret_cast<const char*>(data), size});
}

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size, unsigned int seed) {
  std::minstd_rand rng(seed);
  std::vector<uint8_t> plain;
  // One in eight: the compressed bytes themselves. So also whenever they do not inflate.
  if (rng() % 8 == 0 || !gunzip(data, size, plain)) return LLVMFuzzerMutate(data, size, max_size);

  const size_t plain_size = plain.size();
  plain.resize(std::min(kMaxInflated, std::max<size_t>(plain_size * 2, 4096)));
  const size_t mutated = LLVMFuzzerMutate(plain.data(), plain_size, plain.size());
  std::vector<uint8_t> gz;
  const int level = static_cast<int>(rng() % 10);
  bool ok;
  if (mutated > 1 && rng() % 4 == 0) {  // two members, split anywhere
    const size_t split = 1 + rng() % (mutated - 1);
    ok = gzip_member(plain.data(), split, level, gz) && gzip_member(plain.data() + split, mutated - split, level, gz);
  } else {
    ok = gzip_member(plain.data(), mutated, level, gz);
  }
  if (!ok || gz.size() > max_size) return LLVMFuzzerMutate(data, size, max_size);
  std::memcpy(data, gz.data(), gz.size());
  return gz.size();
}
