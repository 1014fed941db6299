// The rank-directory merge on real traces. The merge runs on several threads (string mapping per
// rank, one job per merged column, the time sort per table and column), so its result must not
// depend on the thread count: every table, string id and metadata row is compared between one and
// more threads. And every rank's rows must come through as the rank's own file reads them, but for
// the clock shift and the rank tag, in the rank's own order.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "common/task_pool.h"
#include "ingest/kineto_reader.h"
#include "test_support.h"

namespace tracedoc {
namespace {

namespace fs = std::filesystem;

template <typename T>
void expect_same(const char* what, const std::vector<T>& a, const std::vector<T>& b) {
  if (a == b) return;
  size_t i = 0;
  while (i < a.size() && i < b.size() && a[i] == b[i]) ++i;
  ADD_FAILURE() << what << " differs: " << a.size() << " vs " << b.size() << " rows, first difference at row " << i;
}
#define EXPECT_SAME_COLUMN(col) expect_same(#col, x.col, y.col)

// Every table the Kineto reader fills, column by column, and the strings behind the ids.
void expect_same_trace(const Trace& x, const Trace& y) {
  EXPECT_SAME_COLUMN(kernels.start), EXPECT_SAME_COLUMN(kernels.end), EXPECT_SAME_COLUMN(kernels.global_pid);
  EXPECT_SAME_COLUMN(kernels.correlation), EXPECT_SAME_COLUMN(kernels.device), EXPECT_SAME_COLUMN(kernels.context);
  EXPECT_SAME_COLUMN(kernels.green_context), EXPECT_SAME_COLUMN(kernels.stream), EXPECT_SAME_COLUMN(kernels.name);
  EXPECT_SAME_COLUMN(kernels.short_name), EXPECT_SAME_COLUMN(kernels.mangled_name), EXPECT_SAME_COLUMN(kernels.grid_x);
  EXPECT_SAME_COLUMN(kernels.grid_y), EXPECT_SAME_COLUMN(kernels.grid_z), EXPECT_SAME_COLUMN(kernels.block_x);
  EXPECT_SAME_COLUMN(kernels.block_y), EXPECT_SAME_COLUMN(kernels.block_z),
      EXPECT_SAME_COLUMN(kernels.registers_per_thread);
  EXPECT_SAME_COLUMN(kernels.static_smem), EXPECT_SAME_COLUMN(kernels.dynamic_smem),
      EXPECT_SAME_COLUMN(kernels.graph_node_id);
  EXPECT_SAME_COLUMN(memcpys.start), EXPECT_SAME_COLUMN(memcpys.end), EXPECT_SAME_COLUMN(memcpys.global_pid);
  EXPECT_SAME_COLUMN(memcpys.correlation), EXPECT_SAME_COLUMN(memcpys.bytes), EXPECT_SAME_COLUMN(memcpys.device);
  EXPECT_SAME_COLUMN(memcpys.context), EXPECT_SAME_COLUMN(memcpys.green_context), EXPECT_SAME_COLUMN(memcpys.stream);
  EXPECT_SAME_COLUMN(memcpys.src_device), EXPECT_SAME_COLUMN(memcpys.dst_device), EXPECT_SAME_COLUMN(memcpys.copy_kind);
  EXPECT_SAME_COLUMN(memcpys.src_kind), EXPECT_SAME_COLUMN(memcpys.dst_kind);
  EXPECT_SAME_COLUMN(memsets.start), EXPECT_SAME_COLUMN(memsets.end), EXPECT_SAME_COLUMN(memsets.global_pid);
  EXPECT_SAME_COLUMN(memsets.correlation), EXPECT_SAME_COLUMN(memsets.bytes), EXPECT_SAME_COLUMN(memsets.value);
  EXPECT_SAME_COLUMN(memsets.device), EXPECT_SAME_COLUMN(memsets.context), EXPECT_SAME_COLUMN(memsets.green_context);
  EXPECT_SAME_COLUMN(memsets.stream), EXPECT_SAME_COLUMN(memsets.mem_kind);
  EXPECT_SAME_COLUMN(syncs.start), EXPECT_SAME_COLUMN(syncs.end), EXPECT_SAME_COLUMN(syncs.global_pid);
  EXPECT_SAME_COLUMN(syncs.correlation), EXPECT_SAME_COLUMN(syncs.event_id), EXPECT_SAME_COLUMN(syncs.device);
  EXPECT_SAME_COLUMN(syncs.context), EXPECT_SAME_COLUMN(syncs.stream), EXPECT_SAME_COLUMN(syncs.sync_type);
  EXPECT_SAME_COLUMN(api.start), EXPECT_SAME_COLUMN(api.end), EXPECT_SAME_COLUMN(api.global_tid);
  EXPECT_SAME_COLUMN(api.correlation), EXPECT_SAME_COLUMN(api.return_value), EXPECT_SAME_COLUMN(api.name);
  EXPECT_SAME_COLUMN(api.api_class);
  EXPECT_SAME_COLUMN(ranges.start), EXPECT_SAME_COLUMN(ranges.end), EXPECT_SAME_COLUMN(ranges.global_tid);
  EXPECT_SAME_COLUMN(ranges.end_global_tid), EXPECT_SAME_COLUMN(ranges.kind), EXPECT_SAME_COLUMN(ranges.text);
  EXPECT_SAME_COLUMN(ranges.domain_id), EXPECT_SAME_COLUMN(ranges.range_id), EXPECT_SAME_COLUMN(ranges.row_id);
  EXPECT_SAME_COLUMN(pytorch.ops.start), EXPECT_SAME_COLUMN(pytorch.ops.end),
      EXPECT_SAME_COLUMN(pytorch.ops.global_tid);
  EXPECT_SAME_COLUMN(pytorch.ops.name), EXPECT_SAME_COLUMN(pytorch.ops.external_id);
  EXPECT_SAME_COLUMN(pytorch.ops.sequence_number), EXPECT_SAME_COLUMN(pytorch.ops.fwd_thread_id);
  EXPECT_SAME_COLUMN(pytorch.ops.input_dims);
  EXPECT_SAME_COLUMN(pytorch.gpu_annotations.start), EXPECT_SAME_COLUMN(pytorch.gpu_annotations.end);
  EXPECT_SAME_COLUMN(pytorch.gpu_annotations.device), EXPECT_SAME_COLUMN(pytorch.gpu_annotations.stream);
  EXPECT_SAME_COLUMN(pytorch.gpu_annotations.name), EXPECT_SAME_COLUMN(pytorch.gpu_annotations.external_id);
  EXPECT_SAME_COLUMN(pytorch.allocator.time), EXPECT_SAME_COLUMN(pytorch.allocator.global_tid);
  EXPECT_SAME_COLUMN(pytorch.allocator.address), EXPECT_SAME_COLUMN(pytorch.allocator.bytes);
  EXPECT_SAME_COLUMN(pytorch.allocator.total_allocated), EXPECT_SAME_COLUMN(pytorch.allocator.total_reserved);
  EXPECT_SAME_COLUMN(pytorch.allocator.device_type), EXPECT_SAME_COLUMN(pytorch.allocator.device_id);
  EXPECT_SAME_COLUMN(pytorch.collectives.kernel), EXPECT_SAME_COLUMN(pytorch.collectives.collective);
  EXPECT_SAME_COLUMN(pytorch.collectives.dtype), EXPECT_SAME_COLUMN(pytorch.collectives.group_name);
  EXPECT_SAME_COLUMN(pytorch.collectives.in_nelems), EXPECT_SAME_COLUMN(pytorch.collectives.out_nelems);
  EXPECT_SAME_COLUMN(pytorch.collectives.group_size);
  EXPECT_SAME_COLUMN(pytorch.forward_backward.id), EXPECT_SAME_COLUMN(pytorch.forward_backward.time);
  EXPECT_SAME_COLUMN(pytorch.forward_backward.global_tid), EXPECT_SAME_COLUMN(pytorch.forward_backward.phase);
  EXPECT_SAME_COLUMN(pytorch.steps);

  // String ids: the same pool, id for id (reports break ties by id).
  ASSERT_EQ(x.strings.size(), y.strings.size());
  for (StrId id = 0; id < x.strings.size(); ++id) ASSERT_EQ(x.str(id), y.str(id)) << "string id " << id;

  ASSERT_EQ(x.threads.size(), y.threads.size());
  for (size_t i = 0; i < x.threads.size(); ++i) {
    EXPECT_EQ(x.threads[i].global_tid, y.threads[i].global_tid);
    EXPECT_EQ(x.threads[i].name, y.threads[i].name);
    EXPECT_EQ(x.threads[i].priority, y.threads[i].priority);
  }
  ASSERT_EQ(x.processes.size(), y.processes.size());
  for (size_t i = 0; i < x.processes.size(); ++i) {
    EXPECT_EQ(x.processes[i].global_pid, y.processes[i].global_pid);
    EXPECT_EQ(x.processes[i].pid, y.processes[i].pid);
    EXPECT_EQ(x.processes[i].name, y.processes[i].name);
  }
  ASSERT_EQ(x.devices.size(), y.devices.size());
  for (size_t i = 0; i < x.devices.size(); ++i) {
    EXPECT_EQ(x.devices[i].id, y.devices[i].id);
    EXPECT_EQ(x.devices[i].name, y.devices[i].name);
    EXPECT_EQ(x.devices[i].total_memory, y.devices[i].total_memory);
  }
  EXPECT_EQ(x.source.tables, y.source.tables);
  EXPECT_EQ(x.source.session_start_utc_ns, y.source.session_start_utc_ns);
  EXPECT_EQ(x.pytorch.era, y.pytorch.era);
  EXPECT_EQ(x.pytorch.rank, y.pytorch.rank);
  EXPECT_EQ(x.pytorch.world_size, y.pytorch.world_size);
  EXPECT_EQ(x.pytorch.base_time_ns, y.pytorch.base_time_ns);
  EXPECT_EQ(x.pytorch.event_count, y.pytorch.event_count);
  EXPECT_EQ(x.pytorch.python_function_count, y.pytorch.python_function_count);
  EXPECT_EQ(x.pytorch.flow_count, y.pytorch.flow_count);
  EXPECT_EQ(x.warnings.negative_durations, y.warnings.negative_durations);
  EXPECT_EQ(x.warnings.unknown_events, y.warnings.unknown_events);
}
#undef EXPECT_SAME_COLUMN

// A directory of five ranks of different jobs, eras and clock bases, made of links to real traces
// (nothing is copied): rank 0 the NCCL trace with collectives (distributedInfo rank 0), rank 1 HTA's
// sampled rank 1 (integer-µs era, no clock base), ranks 2-4 TraceLens traces without distributedInfo
// (rank from the file name), two of them with a baseTimeNanoseconds 15 months after rank 0's.
// Removed when the test process exits.
struct MixedRankDirectory {
  fs::path path = fs::temp_directory_path() / ("tracedoc-ranks-test-" + std::to_string(::getpid()));
  explicit MixedRankDirectory(const fs::path& shared) {
    const fs::path kineto = shared / "traces/kineto";
    const std::pair<const char*, fs::path> links[] = {
        {"rank-0.json.gz", kineto / "HolisticTraceAnalysis/tests/data/nccl_parser_config/nccl_data.json.gz"},
        {"rank-1.json.gz", kineto / "HolisticTraceAnalysis/tests/data/trace_filter/sampled_rank-1.json.gz"},
        {"rank-2.json.gz", kineto / "TraceLens/tests/traces/h100/Falconsai_nsfw_image_detection__1016002.json.gz"},
        {"rank-3.json.gz", kineto / "TraceLens/tests/traces/h100/gaunernst_bert-small-uncased__1016001.json.gz"},
        {"rank-4.json.gz", kineto / "TraceLens/tests/traces/h100/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz"},
    };
    fs::remove_all(path);
    fs::create_directories(path);
    for (const auto& [name, target] : links) fs::create_symlink(target, path / name);
  }
  MixedRankDirectory(const MixedRankDirectory&) = delete;
  ~MixedRankDirectory() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};
fs::path mixed_rank_directory(const fs::path& shared) {
  static const MixedRankDirectory dir(shared);
  return dir.path;
}

TEST(KinetoDirectory, SameTablesOnOneOrMoreThreads) {
  const fs::path shared = testing::shared_dir();
  if (shared.empty()) GTEST_SKIP() << "../shared is absent: the real traces are needed";
  const fs::path kineto = shared / "traces/kineto";
  const std::vector<fs::path> dirs = {
      mixed_rank_directory(shared),
      kineto / "HolisticTraceAnalysis/tests/data/trace_filter",  // two ranks of one 128-rank job
      kineto / "TraceLens/tests/traces/mi300",  // six files: ranks by file order, and one more rank 0 (distributedInfo)
  };
  for (const auto& dir : dirs) {
    SCOPED_TRACE(dir.string());
    const int before = thread_count();
    set_thread_count(1);
    auto one = read_kineto_directory(dir.string(), -1);
    ASSERT_TRUE(one.ok()) << one.status().message();
    ASSERT_GT(one->kernels.size(), 0u);
    for (int threads : {2, 3, 7}) {
      SCOPED_TRACE(threads);
      set_thread_count(threads);
      auto many = read_kineto_directory(dir.string(), -1);
      ASSERT_TRUE(many.ok()) << many.status().message();
      expect_same_trace(*one, *many);
    }
    set_thread_count(before);
  }
}

// Each rank's kernels, API calls and operators appear in the merged tables in the rank's own order,
// with its names, its times moved by its clock base, and its CPU ids tagged with rank + 1.
TEST(KinetoDirectory, RanksKeepTheirRows) {
  const fs::path shared = testing::shared_dir();
  if (shared.empty()) GTEST_SKIP() << "../shared is absent: the real traces are needed";
  const fs::path dir = mixed_rank_directory(shared);
  auto merged = read_kineto_directory(dir.string());
  ASSERT_TRUE(merged.ok()) << merged.status().message();
  const auto files = kineto_files_in(dir.string());
  ASSERT_EQ(files.size(), 5u);

  std::vector<Trace> ranks;
  int64_t base = INT64_MAX;
  for (const auto& f : files) {
    auto t = read_kineto_trace(f);
    ASSERT_TRUE(t.ok()) << t.status().message();
    if (t->pytorch.base_time_ns > 0) base = std::min(base, t->pytorch.base_time_ns);
    ranks.push_back(std::move(t).value());
  }
  EXPECT_EQ(merged->pytorch.base_time_ns, base);
  size_t kernels = 0, api = 0, ops = 0, collectives = 0;
  for (size_t r = 0; r < ranks.size(); ++r) {
    const Trace& t = ranks[r];
    SCOPED_TRACE(files[r]);
    ASSERT_EQ(t.pytorch.rank, static_cast<int64_t>(r));
    const int64_t tag = static_cast<int64_t>(r + 1);
    const TimeNs shift = t.pytorch.base_time_ns > 0 ? t.pytorch.base_time_ns - base : 0;
    kernels += t.kernels.size(), api += t.api.size(), ops += t.pytorch.ops.size(),
        collectives += t.pytorch.collectives.size();

    std::vector<std::string> own, seen;
    std::vector<TimeNs> own_start, seen_start;
    for (size_t i = 0; i < t.kernels.size(); ++i)
      own.emplace_back(t.str(t.kernels.name[i])), own_start.push_back(t.kernels.start[i] + shift);
    const auto& mk = merged->kernels;
    for (size_t i = 0; i < mk.size(); ++i) {
      if ((mk.global_pid[i] >> 48) == tag)
        seen.emplace_back(merged->str(mk.name[i])), seen_start.push_back(mk.start[i]);
    }
    EXPECT_EQ(own, seen);
    EXPECT_EQ(own_start, seen_start);

    own.clear(), seen.clear(), own_start.clear(), seen_start.clear();
    for (size_t i = 0; i < t.api.size(); ++i)
      own.emplace_back(t.str(t.api.name[i])), own_start.push_back(t.api.start[i] + shift);
    for (size_t i = 0; i < merged->api.size(); ++i) {
      if ((merged->api.global_tid[i] >> 48) == tag)
        seen.emplace_back(merged->str(merged->api.name[i])), seen_start.push_back(merged->api.start[i]);
    }
    EXPECT_EQ(own, seen);
    EXPECT_EQ(own_start, seen_start);

    own.clear(), seen.clear();
    const auto& o = t.pytorch.ops;
    const auto& mo = merged->pytorch.ops;
    for (size_t i = 0; i < o.size(); ++i)
      own.push_back(std::string(t.str(o.name[i])) + " " + std::string(t.str(o.input_dims[i])));
    for (size_t i = 0; i < mo.size(); ++i) {
      if ((mo.global_tid[i] >> 48) == tag)
        seen.push_back(std::string(merged->str(mo.name[i])) + " " + std::string(merged->str(mo.input_dims[i])));
    }
    EXPECT_EQ(own, seen);
  }
  EXPECT_EQ(merged->kernels.size(), kernels);
  EXPECT_EQ(merged->api.size(), api);
  EXPECT_EQ(merged->pytorch.ops.size(), ops);
  ASSERT_EQ(merged->pytorch.collectives.size(), collectives);
  ASSERT_GT(collectives, 0u);
  for (uint32_t row : merged->pytorch.collectives.kernel) {
    EXPECT_EQ(merged->str(merged->kernels.name[row]).rfind("ncclKernel_", 0), 0u);  // still point at their kernels
  }
  EXPECT_TRUE(std::is_sorted(merged->kernels.start.begin(), merged->kernels.start.end()));
  EXPECT_TRUE(std::is_sorted(merged->pytorch.ops.start.begin(), merged->pytorch.ops.start.end()));
}

}  // namespace
}  // namespace tracedoc
