// The Kineto reader on small hand-written documents: every format quirk the eras produced, exact
// timestamps, streaming across window refills, and the errors for inputs no tool can read.
#include <gtest/gtest.h>
#include <zlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>

#include "ingest/json_cursor.h"
#include "ingest/kineto_reader.h"
#include "ingest/open_trace.h"
#include "test_support.h"

namespace tracedoc {
namespace {

namespace fs = std::filesystem;

fs::path temp_path(const std::string& name) {
  // One folder per test process, removed at exit: ctest runs the tests (and another build's suite,
  // e.g. build-asan's) in parallel, and tests write files of the same names.
  static const struct Dir {
    fs::path path = fs::temp_directory_path() / ("tracedoc-kineto-test-" + std::to_string(::getpid()));
    ~Dir() {
      std::error_code ec;
      fs::remove_all(path, ec);
    }
  } dir;
  fs::create_directories(dir.path);
  return dir.path / name;
}

std::string write_text(const std::string& name, const std::string& text) {
  const fs::path p = temp_path(name);
  std::ofstream(p, std::ios::binary) << text;
  return p.string();
}

std::string write_gzip(const std::string& name, const std::string& text) {
  const fs::path p = temp_path(name);
  gzFile f = gzopen(p.c_str(), "wb");
  gzwrite(f, text.data(), static_cast<unsigned>(text.size()));
  gzclose(f);
  return p.string();
}

// One kernel + its runtime call + the op around it, in the 2024+ layout (relative "us.nnn" times).
const char* kModern = R"J({
  "schemaVersion": 1,
  "deviceProperties": [{"id": 0, "name": "NVIDIA H100", "totalGlobalMem": 85018279936, "computeMajor": 9,
                        "computeMinor": 0, "numSms": 132}],
  "distributedInfo": {"backend": "nccl", "rank": 3, "world_size": 8},
  "traceEvents": [
    {"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 100, "tid": 101, "ts": 1419247333291.708,
     "dur": 22.51, "args": {"External id": 2, "Input Dims": [[1, 512],
        []], "Sequence number": 7}},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 100, "tid": 101,
     "ts": 1419247333300.001, "dur": 5.5, "args": {"External id": 2, "cbid": 211, "correlation": 8218}},
    {"ph": "X", "cat": "kernel", "name": "void at::native::add_kernel<float>(int, float*)", "pid": 0, "tid": 7,
     "ts": 1419247333430.849, "dur": 3.136, "args": {"External id": 2, "device": 0, "stream": 7,
     "correlation": 8218, "grid": [564, 1, 1], "block": [128, 1, 1], "registers per thread": 32,
     "shared memory": 0, "Comms Id": 18446744073709551615}},
    {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD (Pageable -> Device)", "pid": 0, "tid": 7,
     "ts": 1419247333500.000, "dur": 1.0, "args": {"device": 0, "stream": 7, "correlation": 8219, "bytes": 4096,
     "memory bandwidth (GB/s)": N/A}},
    {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#4", "pid": 100, "tid": 101,
     "ts": 1419247333000.000, "dur": 1000.000, "args": {}},
    {"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": 100, "tid": 101,
     "ts": 1419247333295.000, "args": {"Total Reserved": 2097152, "Total Allocated": 512, "Bytes": -512,
     "Addr": 139, "Device Type": 1, "Device Id": 0}},
    {"ph": "s", "id": 8218, "pid": 100, "tid": 101, "ts": 1419247333300.001, "cat": "ac2g", "name": "ac2g"},
    {"ph": "M", "name": "thread_name", "pid": 100, "tid": 101, "args": {"name": "thread 101 (python3)"}},
    {"ph": "X", "cat": "python_function", "name": "a.py(1): f", "pid": 100, "tid": 101, "ts": 1.0, "dur": 1.0},
  ],
  "traceName": "x",
  "displayTimeUnit": "ms",
  "baseTimeNanoseconds": 1751410836000000000
})J";

TRACEDOC_TEST_LABELS(KinetoReader, corpus);

TEST(KinetoReader, ModernLayoutExactTimesAndMetadataAfterEvents) {
  auto t = read_kineto_trace(write_text("modern.json", kModern));
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->pytorch.era, 5);
  EXPECT_EQ(t->pytorch.base_time_ns, 1751410836000000000);  // read after traceEvents
  EXPECT_EQ(t->pytorch.rank, 3);
  EXPECT_EQ(t->pytorch.world_size, 8);
  EXPECT_EQ(t->pytorch.event_count, 9);
  EXPECT_EQ(t->pytorch.python_function_count, 1);
  ASSERT_EQ(t->kernels.size(), 1u);
  EXPECT_EQ(t->kernels.start[0], 1419247333430849);  // "1419247333430.849" µs, exactly
  EXPECT_EQ(t->kernels.end[0] - t->kernels.start[0], 3136);
  EXPECT_EQ(t->str(t->kernels.short_name[0]), "add_kernel");
  EXPECT_EQ(t->kernels.grid_x[0], 564);
  EXPECT_EQ(t->kernels.block_x[0], 128);
  EXPECT_EQ(t->kernels.global_pid[0], make_global_tid(0, 100, 0));  // the launching process
  ASSERT_EQ(t->memcpys.size(), 1u);
  EXPECT_EQ(t->memcpys.bytes[0], 4096);
  EXPECT_EQ(t->memcpys.copy_kind[0], static_cast<uint8_t>(CopyKind::kHtoD));
  EXPECT_EQ(t->memcpys.src_kind[0], static_cast<uint8_t>(MemKind::kPageable));
  EXPECT_EQ(t->memcpys.dst_kind[0], static_cast<uint8_t>(MemKind::kDevice));
  ASSERT_EQ(t->api.size(), 1u);
  EXPECT_EQ(t->api.end[0] - t->api.start[0], 5500);
  ASSERT_EQ(t->pytorch.ops.size(), 1u);
  EXPECT_EQ(t->str(t->pytorch.ops.input_dims[0]), "[[1, 512], []]");
  EXPECT_EQ(t->pytorch.ops.sequence_number[0], 7);
  ASSERT_EQ(t->pytorch.steps.size(), 1u);
  ASSERT_EQ(t->pytorch.allocator.size(), 1u);
  EXPECT_EQ(t->pytorch.allocator.bytes[0], -512);
  ASSERT_EQ(t->devices.size(), 1u);
  EXPECT_EQ(t->devices[0].sm_count, 132);
  ASSERT_EQ(t->threads.size(), 1u);
  EXPECT_EQ(t->str(t->threads[0].name), "thread 101 (python3)");
}

TEST(KinetoReader, GzipGivesTheSameTrace) {
  auto plain = read_kineto_trace(write_text("same.json", kModern));
  auto gz = read_kineto_trace(write_gzip("same.json.gz", kModern));
  ASSERT_TRUE(plain.ok() && gz.ok());
  EXPECT_EQ(plain->kernels.start, gz->kernels.start);
  EXPECT_EQ(plain->pytorch.event_count, gz->pytorch.event_count);
}

std::string file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

TEST(KinetoReader, ConcatenatedGzipMembersAndBadChecksums) {
  // `cat a.gz b.gz` is one gzip stream; zero padding after the last member is ignored.
  const std::string doc = kModern;
  const size_t half = doc.size() / 2;
  const std::string joined = file_bytes(write_gzip("a.gz", doc.substr(0, half))) +
                             file_bytes(write_gzip("b.gz", doc.substr(half))) + std::string(8, '\0');
  auto t = read_kineto_trace(write_text("joined.json.gz", joined));
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->pytorch.event_count, 9);
  // A flipped byte in the CRC trailer.
  std::string bad = file_bytes(write_gzip("crc.gz", doc));
  bad[bad.size() - 6] ^= 0x40;
  auto c = read_kineto_trace(write_text("crc.json.gz", bad));
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("CRC mismatch"), std::string::npos) << c.status().message();
}

TEST(KinetoReader, Era2021StringTidsAndCapitalizedCategories) {
  auto t = read_kineto_trace(write_text("e1.json", R"J({"traceEvents": [
    {"ph": "X", "cat": "Operator", "name": "ProfilerStep#1", "pid": 25738, "tid": "25738", "ts": 1623142623460000, "dur": 900},
    {"ph": "X", "cat": "Operator", "name": "aten::empty", "pid": 25738, "tid": "25738", "ts": 1623142623460111, "dur": 25,
     "args": {"External id": 2}},
    {"ph": "X", "cat": "Runtime", "name": "cudaLaunchKernel", "pid": 25738, "tid": "25738", "ts": 1623142623460120, "dur": 5,
     "args": {"cbid": 211, "correlation": 34441, "external id": 2}},
    {"ph": "X", "cat": "Kernel", "name": "volta_scudnn_128x64_relu_medium_nn_v1", "pid": 0, "tid": "stream 7",
     "ts": 1623142623531639, "dur": 605, "args": {"device": 0, "context": 1, "correlation": 34441}},
    {"ph": "f", "id": 34441, "pid": 0, "tid": "stream 7", "ts": 1623142623531639, "cat": "async", "name": "launch", "bp": "e"}
  ]})J"));
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->pytorch.era, 1);
  ASSERT_EQ(t->kernels.size(), 1u);
  EXPECT_EQ(t->kernels.start[0], 1623142623531639000);
  EXPECT_EQ(t->kernels.stream[0], 7);  // from "stream 7": 2021 kernels carry no stream arg
  EXPECT_EQ(t->pytorch.ops.size(), 1u);
  EXPECT_EQ(t->ranges.size(), 1u);
  EXPECT_EQ(t->pytorch.steps.size(), 1u);
  EXPECT_EQ(t->api.global_tid[0], make_global_tid(0, 25738, 25738));
}

TEST(KinetoReader, LegacyBareArray) {
  auto t = read_kineto_trace(write_text(
      "legacy.json",
      R"J([{"name": "aten::zeros", "ph": "X", "ts": 187, "dur": 33, "tid": 1, "pid": "CPU functions", "args": {}}, {"name": "ProfilerStep#1", "ph": "X", "ts": 242, "dur": 9549, "tid": 1, "pid": "CPU functions", "args": {}}])J"));
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->pytorch.era, 0);
  EXPECT_EQ(t->pytorch.ops.size(), 1u);
  EXPECT_EQ(t->pytorch.steps.size(), 1u);
  EXPECT_EQ(t->pytorch.ops.end[0] - t->pytorch.ops.start[0], 33000);
}

TEST(KinetoReader, ControlCharactersEscapesAndHugeIntegers) {
  // A raw tab and newline inside a name, escaped quotes and unicode, an integer above 2^63.
  std::string doc =
      "{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"a\tb\nc \\\"q\\\" "
      "\\u00e9\\ud83d\\ude00\", "
      "\"pid\": 1, \"tid\": 2, \"ts\": 5, \"dur\": 1, \"args\": {\"Comms Id\": 18446744073709551615}}]}";
  auto t = read_kineto_trace(write_text("escapes.json", doc));
  ASSERT_TRUE(t.ok()) << t.status().message();
  ASSERT_EQ(t->ranges.size(), 1u);
  EXPECT_EQ(t->str(t->ranges.text[0]), "a\tb\nc \"q\" \xc3\xa9\xf0\x9f\x98\x80");
}

TEST(KinetoReader, NegativeAndAbsurdDurationsAreCountedNotFatal) {
  auto t = read_kineto_trace(write_text("durations.json", R"J({"traceEvents": [
    {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 10, "dur": -1, "args": {"stream": 7}},
    {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 10, "dur": 999999999999, "args": {"stream": 7}},
    {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "dur": 1, "args": {"stream": 7}}
  ]})J"));
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->kernels.size(), 1u);
  EXPECT_EQ(t->kernels.end[0], t->kernels.start[0]);
  EXPECT_EQ(t->warnings.negative_durations, 1);
  EXPECT_EQ(t->warnings.absurd_durations, 1);
  EXPECT_EQ(t->warnings.missing_times, 1);
}

TEST(KinetoReader, EventsAcrossManyWindowsAndOneHugeEvent) {
  // ~40 MB: several 16 MB windows, events cut at every possible place, and one 20 MB name that
  // makes the window grow.
  std::string doc = "{\"traceEvents\": [\n";
  const int n = 150000;
  for (int i = 0; i < n; ++i) {
    doc += "  {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"kernel_" + std::to_string(i % 97) +
           "\", \"pid\": 0, \"tid\": 7, \"ts\": " + std::to_string(1000 + i) +
           ".250, \"dur\": 0.500, "
           "\"args\": {\"stream\": 7, \"correlation\": " +
           std::to_string(i) + ", \"grid\": [1, 2, 3], \"padding\": \"" +
           std::string(static_cast<size_t>(i % 300), 'x') + "\"}},\n";
  }
  doc += "  {\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"" + std::string(20u << 20, 'n') +
         "\", \"pid\": 1, \"tid\": 1, \"ts\": 1, \"dur\": 1}\n]}\n";
  auto t = read_kineto_trace(write_gzip("big.json.gz", doc));
  ASSERT_TRUE(t.ok()) << t.status().message();
  ASSERT_EQ(t->kernels.size(), static_cast<size_t>(n));
  int64_t total = 0;
  for (size_t i = 0; i < t->kernels.size(); ++i) total += t->kernels.end[i] - t->kernels.start[i];
  EXPECT_EQ(total, int64_t{n} * 500);
  EXPECT_EQ(t->kernels.start[n - 1], (1000 + n - 1) * int64_t{1000} + 250);
  ASSERT_EQ(t->ranges.size(), 1u);
  EXPECT_EQ(t->str(t->ranges.text[0]).size(), 20u << 20);
}

TEST(KinetoReader, InvalidJsonNamesTheByteOffset) {
  const std::string doc = R"J([{"name": "say "hi"", "ph": "X", "ts": 1, "dur": 1, "tid": 1, "pid": 1}])J";
  auto t = read_kineto_trace(write_text("bad.json", doc));
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), ErrorCode::kBadInput);
  EXPECT_NE(t.status().message().find("bad.json: invalid JSON at byte 16"), std::string::npos) << t.status().message();
}

TEST(KinetoReader, TruncatedInputsAreClearErrors) {
  std::string doc = kModern;
  auto cut = read_kineto_trace(write_text("cut.json", doc.substr(0, doc.size() / 2)));
  ASSERT_FALSE(cut.ok());
  EXPECT_NE(cut.status().message().find("truncated JSON"), std::string::npos) << cut.status().message();

  // A gzip file cut in the middle of its compressed stream.
  std::string big;
  for (int i = 0; i < 2000; ++i) big += std::string(kModern).substr(0, 200) + std::to_string(i);
  const std::string gz = write_gzip("whole.json.gz", big);
  std::ifstream in(gz, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto half = read_kineto_trace(write_text("half.json.gz", bytes.substr(0, bytes.size() / 2)));
  ASSERT_FALSE(half.ok());
  EXPECT_NE(half.status().message().find("truncated gzip"), std::string::npos) << half.status().message();
}

TEST(KinetoReader, NotATrace) {
  auto obj = read_kineto_trace(write_text("meta.json", R"J({"schema": "1.0.1", "nodes": []})J"));
  ASSERT_FALSE(obj.ok());
  EXPECT_NE(obj.status().message().find("no traceEvents"), std::string::npos);
  auto arr = read_kineto_trace(write_text("list.json", R"J([{"file": "a.json.gz", "batch_size": 32}])J"));
  ASSERT_FALSE(arr.ok());
  EXPECT_NE(arr.status().message().find("not a PyTorch profiler trace"), std::string::npos);
  auto deep = read_kineto_trace(write_text("deep.json", "{\"traceEvents\": [{\"args\": " + std::string(100000, '[')));
  ASSERT_FALSE(deep.ok());
  EXPECT_NE(deep.status().message().find("nested deeper"), std::string::npos) << deep.status().message();
  auto empty = open_trace(write_text("empty.json", ""));
  ASSERT_FALSE(empty.ok());
  EXPECT_NE(empty.status().message().find("empty file"), std::string::npos);
}

TEST(KinetoReader, RankDirectoryMergesAndAlignsClocks) {
  const fs::path dir = temp_path("ranks");
  fs::remove_all(dir);
  fs::create_directories(dir);
  auto rank_doc = [](int rank, int64_t base) {
    return "{\"distributedInfo\": {\"rank\": " + std::to_string(rank) +
           "}, \"baseTimeNanoseconds\": " + std::to_string(base) +
           ", \"traceEvents\": [{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"pid\": 0, "
           "\"tid\": 7, \"ts\": 10.000, \"dur\": 1.000, \"args\": {\"stream\": 7}}]}";
  };
  std::ofstream(dir / "a.pt.trace.json") << rank_doc(1, 2000000);
  std::ofstream(dir / "b.pt.trace.json") << rank_doc(0, 1000000);
  std::ofstream(dir / "notes.json") << "[{\"file\": \"a\"}]";
  auto all = read_kineto_directory(dir.string());
  ASSERT_TRUE(all.ok()) << all.status().message();
  ASSERT_EQ(all->kernels.size(), 2u);
  EXPECT_EQ(all->kernels.start[0], 10000);            // rank 0 on the earliest base
  EXPECT_EQ(all->kernels.start[1], 10000 + 1000000);  // rank 1's base is 1 ms later
  auto one = read_kineto_directory(dir.string(), 1);
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(one->pytorch.rank, 1);
  EXPECT_EQ(one->kernels.size(), 1u);
  EXPECT_FALSE(read_kineto_directory(dir.string(), 7).ok());
}

TEST(KinetoReader, RealRankDirectory) {
  const auto shared = testing::shared_dir();
  if (shared.empty()) GTEST_SKIP() << "../shared is absent: the real traces are needed";
  // HTA's two sampled ranks of a 128-rank job (distributedInfo rank 0 and 1): 1154 + 1104 kernels.
  const std::string dir = (shared / "traces/kineto/HolisticTraceAnalysis/tests/data/trace_filter").string();
  auto all = read_kineto_directory(dir);
  ASSERT_TRUE(all.ok()) << all.status().message();
  EXPECT_EQ(all->kernels.size(), 1154u + 1104u);
  EXPECT_EQ(all->pytorch.steps.size(), 4u);
  std::set<int64_t> tags;
  for (int64_t g : all->api.global_tid) tags.insert(g >> 48);
  EXPECT_EQ(tags, (std::set<int64_t>{1, 2}));  // rank + 1
  OpenOptions only_rank_1;
  only_rank_1.rank = 1;
  auto one = open_trace(dir, only_rank_1);
  ASSERT_TRUE(one.ok()) << one.status().message();
  EXPECT_EQ(one->kernels.size(), 1104u);
  EXPECT_EQ(one->pytorch.rank, 1);
}

TEST(KinetoReader, RealCollectivesAndSyncs) {
  const auto shared = testing::shared_dir();
  if (shared.empty()) GTEST_SKIP() << "../shared is absent: the real traces are needed";
  const auto traces = shared / "traces/kineto/HolisticTraceAnalysis/tests/data";
  // 21 NCCL kernels carry the collective's arguments (copied by Kineto from record_param_comms).
  auto nccl = read_kineto_trace((traces / "nccl_parser_config/nccl_data.json.gz").string());
  ASSERT_TRUE(nccl.ok()) << nccl.status().message();
  const auto& c = nccl->pytorch.collectives;
  ASSERT_EQ(c.size(), 21u);
  std::map<std::pair<std::string, std::string>, int> kinds;  // (collective, dtype) -> kernels
  int64_t in_elements = 0;
  for (size_t i = 0; i < c.size(); ++i) {
    kinds[{std::string(nccl->str(c.collective[i])), std::string(nccl->str(c.dtype[i]))}]++;
    in_elements += c.in_nelems[i];
    EXPECT_EQ(c.group_size[i], 2);
    EXPECT_EQ(nccl->str(nccl->kernels.name[c.kernel[i]]).rfind("ncclKernel_", 0), 0u);
  }
  EXPECT_EQ(kinds, (std::map<std::pair<std::string, std::string>, int>{
                       {{"allreduce", "Float"}, 15}, {{"broadcast", "Float"}, 3}, {{"broadcast", "Long"}, 3}}));
  EXPECT_EQ(in_elements, 76830615);
  // cuda_sync events: 20 Stream Wait Event, 16 Stream Sync, 5 Context Sync.
  auto sync = read_kineto_trace(
      (traces / "critical_path/simple_add/benchmark_result_493459_1694039959_trace.json.gz").string());
  ASSERT_TRUE(sync.ok()) << sync.status().message();
  std::map<int32_t, int> by_type;
  for (int32_t t : sync->syncs.sync_type) by_type[t]++;
  EXPECT_EQ(by_type, (std::map<int32_t, int>{{2, 20}, {3, 16}, {4, 5}}));
}

TEST(KinetoReader, FormatEraOfRealTraces) {
  const auto shared = testing::shared_dir();
  if (shared.empty()) GTEST_SKIP() << "../shared is absent: the real traces are needed";
  // The eras of the format notes' table, decided from the file's own markers. Two files differ from
  // that table, which dates them: df_index_resolver (2022-11) already writes "Ev Idx" (era 3's
  // marker), and the 2-event synthetic large_integer_trace has no marker at all (era 2).
  const std::pair<const char*, int> cases[] = {
      {"torch113-cpu/cnn_fastdata.json", 0},
      {"kineto/kineto/tb_plugin/samples/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz", 1},
      {"kineto/HolisticTraceAnalysis/tests/data/trace_file_list/inference_rank_1.json.gz", 2},  // PyTorch 1.10
      {"kineto/HolisticTraceAnalysis/tests/data/trace_diff/control/control.json.gz", 2},
      {"kineto/HolisticTraceAnalysis/tests/data/df_index_resolver/df_index_resolver.json.gz", 3},
      {"kineto/HolisticTraceAnalysis/tests/data/negative_queue_length_values_check/rank0.json.gz", 3},
      {"kineto/HolisticTraceAnalysis/tests/data/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz", 4},
      {"kineto/HolisticTraceAnalysis/tests/data/nccl_parser_config/nccl_data.json.gz", 5},
      {"kineto/TraceLens/tests/traces/mi300/gaunernst_bert-small-uncased__1016001.json.gz", 5},
  };
  for (const auto& [path, era] : cases) {
    const Trace& t = testing::load_kineto((shared / "traces" / path).string());
    EXPECT_EQ(t.pytorch.era, era) << path;
  }
}

TRACEDOC_TEST_LABELS(JsonCursor, unit sanitize);

TEST(JsonCursor, MicrosecondsToNanosecondsIsExact) {
  int64_t ns = 0;
  ASSERT_TRUE(json::parse_micros_as_ns("1623142623460111", &ns));
  EXPECT_EQ(ns, 1623142623460111000);
  ASSERT_TRUE(json::parse_micros_as_ns("1419247333430.849", &ns));
  EXPECT_EQ(ns, 1419247333430849);
  ASSERT_TRUE(json::parse_micros_as_ns("0.0005", &ns));  // half a ns rounds away from zero
  EXPECT_EQ(ns, 1);
  ASSERT_TRUE(json::parse_micros_as_ns("-2.5e-3", &ns));
  EXPECT_EQ(ns, -3);
  ASSERT_TRUE(json::parse_micros_as_ns("1.5E2", &ns));
  EXPECT_EQ(ns, 150000);
  EXPECT_FALSE(json::parse_micros_as_ns("N/A", &ns));
  EXPECT_FALSE(json::parse_micros_as_ns("1e30", &ns));
}

}  // namespace
}  // namespace tracedoc
