// Benchmark: reading Nsight Compute reports (ingest/ncu_report_reader.h) and computing `tracedoc
// ncu`'s launch table. Times every real report of ../shared/traces/ncu, then a report of 200
// launches made by repeating the real results of one (ncu users profile whole iterations with
// `--set full`: reports of hundreds of launches), plain and zstd-compressed. Prints MB/s and
// launches/s, and, as the baseline measured in the same run, the time to bring the same bytes
// into memory: decoding costs that many times a plain read (for the zstd file, a read of the
// compressed bytes; its MB/s counts the report it inflates to).
//
//   ncu_read [--shared DIR] [--source REPORT] [--launches N] [--runs R]
#include <zstd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "analysis/ncu_reports.h"
#include "ingest/ncu_report_reader.h"
#include "ingest/protobuf_wire.h"

namespace fs = std::filesystem;

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void put_u32(std::string& out, uint32_t n) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((n >> (8 * i)) & 0xFF));
}
void put_varint(std::string& out, uint64_t v) {
  while (v >= 0x80) out.push_back(static_cast<char>((v & 0x7F) | 0x80)), v >>= 7;
  out.push_back(static_cast<char>(v));
}

// The report with its result blocks repeated until it holds `launches` results. Repeated blocks
// keep their results and process but leave out the string table and session details, which the
// first copy carries (a metric names an entry of the one table).
std::string tiled_report(const std::string& bytes, size_t launches) {
  size_t pos = 8;  // magic, file header length
  uint32_t n = 0;
  std::memcpy(&n, bytes.data() + 4, 4);
  pos += n;
  struct Block {
    std::string header_without_tables, payload;
    uint64_t results = 0;
  };
  std::vector<Block> result_blocks;
  size_t results = 0;
  while (pos + 4 <= bytes.size()) {
    std::memcpy(&n, bytes.data() + pos, 4);
    const std::string_view header(bytes.data() + pos + 4, n);
    pos += 4 + n;
    Block b;
    uint64_t payload = 0;
    tracedoc::protobuf::Message m(header);
    tracedoc::protobuf::Field f;
    while (m.next(f)) {
      if (f.number == 5) payload = f.value;
      if (f.number == 2) b.results = f.value;
      if (f.number == 3 || f.number == 4) continue;
      put_varint(b.header_without_tables, (uint64_t{f.number} << 3) | static_cast<uint64_t>(f.type));
      if (f.type == tracedoc::protobuf::WireType::kBytes) {
        put_varint(b.header_without_tables, f.bytes.size());
        b.header_without_tables.append(f.bytes);
      } else {
        put_varint(b.header_without_tables, f.value);
      }
    }
    b.payload = bytes.substr(pos, payload);
    pos += payload;
    if (b.results > 0) results += b.results, result_blocks.push_back(std::move(b));
  }
  std::string out = bytes;
  for (size_t k = 0; results < launches; k = (k + 1) % result_blocks.size()) {
    put_u32(out, static_cast<uint32_t>(result_blocks[k].header_without_tables.size()));
    out += result_blocks[k].header_without_tables;
    out += result_blocks[k].payload;
    results += result_blocks[k].results;
  }
  return out;
}

// Best of `runs`: the plain read of the file, and the read, decode and launch table. MB/s counts the
// report's content (`content_bytes`: what a zstd file inflates to; 0: the file's size).
void measure(const std::string& label, const fs::path& path, int runs, size_t content_bytes = 0) {
  double best_read = 1e30, best_decode = 1e30;
  size_t launches = 0;
  for (int i = 0; i < runs; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    const std::string bytes = slurp(path);
    best_read = std::min(best_read, seconds_since(t0));
    t0 = std::chrono::steady_clock::now();
    auto report = tracedoc::read_ncu_report(path.string());
    if (!report.ok()) {
      std::fprintf(stderr, "ncu_read: %s\n", report.status().message().c_str());
      std::exit(2);
    }
    tracedoc::TableSink rows;
    (void)tracedoc::ncu_kernel_rows(*report, {}, rows);
    best_decode = std::min(best_decode, seconds_since(t0));
    launches = report->results.size();
  }
  const double mb = static_cast<double>(content_bytes ? content_bytes : fs::file_size(path)) / 1e6;
  std::printf("%-44s %7.2f MB %5zu launches  %8.2f ms  %7.0f MB/s  %8.0f launches/s  %5.1fx a plain read\n",
              label.c_str(), mb, launches, best_decode * 1e3, mb / best_decode,
              static_cast<double>(launches) / best_decode, best_decode / best_read);
}

}  // namespace

int main(int argc, char** argv) {
  fs::path shared = fs::path(TRACEDOC_SOURCE_DIR).parent_path() / "shared";
  std::string source = "cs599k/rms_norm_vector_v1.ncu-rep";
  size_t launches = 200;
  int runs = 5;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--shared") shared = argv[i + 1];
    if (flag == "--source") source = argv[i + 1];
    if (flag == "--launches") launches = std::strtoul(argv[i + 1], nullptr, 10);
    if (flag == "--runs") runs = std::atoi(argv[i + 1]);
  }
  const fs::path reports = shared / "traces/ncu";
  if (!fs::is_directory(reports)) {
    std::fprintf(stderr, "ncu_read: %s not found (pass --shared DIR)\n", reports.c_str());
    return 2;
  }
  std::vector<fs::path> files;
  for (const auto& e : fs::recursive_directory_iterator(reports)) {
    if (e.path().extension() == ".ncu-rep") files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  std::printf("read + launch table, best of %d (the plain read of the same bytes is the baseline):\n", runs);
  for (const fs::path& f : files) measure(fs::relative(f, reports).string(), f, runs);

  const fs::path dir = fs::temp_directory_path() / "tracedoc-ncu-bench";
  fs::create_directories(dir);
  const std::string big = tiled_report(slurp(reports / source), launches);
  const fs::path plain = dir / "tiled.ncu-rep", packed = dir / "tiled.ncu-repz";
  std::ofstream(plain, std::ios::binary) << big;
  std::string z(ZSTD_compressBound(big.size()), '\0');
  z.resize(ZSTD_compress(z.data(), z.size(), big.data(), big.size(), 3));
  std::ofstream(packed, std::ios::binary) << z;
  measure(fs::path(source).stem().string() + " x" + std::to_string(launches) + " launches", plain, runs);
  measure(fs::path(source).stem().string() + " x" + std::to_string(launches) + " launches, zstd", packed, runs,
          big.size());
  fs::remove_all(dir);
  return 0;
}
