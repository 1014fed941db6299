// Rank directories (torch.profiler.tensorboard_trace_handler writes one file per rank and step
// window): the trace files are read, and the ranks merged into one Trace, on the task pool (common/task_pool.h).
//
// The merge gives exactly what appending the ranks one after the other, in rank order, gives (the
// same string ids, the same row order), whatever the thread count:
//   1. every rank's string ids are mapped onto the merged pool, rank by rank, in the order such an
//      append would meet them; this is the only serial step, and it interns only each rank's
//      distinct strings (the walk that finds them runs per rank, in parallel);
//   2. every merged column is then an independent job: sized once (the sum of the ranks), filled
//      from each rank in rank order (times moved to the common clock, CPU ids tagged with the rank,
//      strings mapped), and each rank's copy of the column freed as soon as it has been copied, so
//      the ranks' models shrink while the merged one grows and the two are never held side by side;
//   3. the tables are put in time order, table orders and column reorders spread over the threads.
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <limits>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "common/memory_budget.h"
#include "common/task_pool.h"
#include "ingest/byte_stream.h"
#include "ingest/kineto_events.h"
#include "ingest/kineto_reader.h"
#include "ingest/trace_directory.h"
#include "model/table_sort.h"

namespace tracedoc {

namespace {

// Gives freed heap pages back to the system. The ranks' columns were allocated piecemeal by the
// reader threads and are freed one column at a time, so the allocator is left with holes between
// live blocks that it would keep resident; the merged columns, sized once, never reuse them.
void release_free_pages() {
#if defined(__GLIBC__)
  malloc_trim(0);
#endif
}

// A rank's strings while the other ranks are read: a StringPool starts with a 1 MB block, which a
// rank's few hundred names barely use, and 64 of them would hold 64 MB until the merge. Packed, they
// take their bytes. The ids stay: string i of the pool is string i here.
class PackedStrings {
 public:
  // Takes the pool's strings and empties it.
  explicit PackedStrings(StringPool& pool) {
    size_t bytes = 0;
    for (StrId id = 0; id < pool.size(); ++id) bytes += pool.get(id).size();
    bytes_.reserve(bytes);
    ends_.reserve(pool.size());
    for (StrId id = 0; id < pool.size(); ++id) bytes_ += pool.get(id), ends_.push_back(bytes_.size());
    pool = StringPool();
  }
  PackedStrings() = default;
  size_t size() const { return ends_.size(); }
  std::string_view get(StrId id) const {
    const size_t begin = id == 0 ? 0 : ends_[id - 1];
    return std::string_view(bytes_).substr(begin, ends_[id] - begin);
  }
  // The pool back, with the same ids (its strings are distinct: the reader interns them all).
  StringPool unpack() const {
    StringPool pool;
    for (StrId id = 0; id < size(); ++id) pool.add_unique(get(id));
    return pool;
  }

 private:
  std::string bytes_;
  std::vector<size_t> ends_;
};

// One rank's trace and how its rows change on the way into the merged trace.
struct Rank {
  Trace trace;
  PackedStrings strings;     // its string pool, packed
  TimeNs shift = 0;          // its clock base less the earliest base of the directory
  int64_t tag = 0;           // (rank + 1) << 48: keeps equal pids of different hosts apart
  std::vector<StrId> remap;  // its string ids -> the merged pool's
  uint32_t kernel_base = 0;  // its first row in the merged kernel table (collectives point there)
};

// The rank's string ids in the order an append of the rank would meet them: the string columns
// table by table, then thread and process names. The merged pool numbers new strings in this order.
std::vector<StrId> strings_in_order(const Rank& r) {
  const Trace& t = r.trace;
  std::vector<char> seen(r.strings.size(), 0);
  std::vector<StrId> order;
  auto visit = [&](StrId id) {
    if (id != kNoStr && !seen[id]) seen[id] = 1, order.push_back(id);
  };
  for_each_table(t, [&](const TableInfo&, const auto& table) {
    for_each_column(table, [&](const auto& column, const auto& values) {
      if constexpr (std::is_same_v<std::decay_t<decltype(values)>, std::vector<StrId>>) {
        if (column.role == ColumnRole::kString)
          for (StrId id : values) visit(id);
      }
    });
  });
  for (const auto& th : t.threads) visit(th.name);
  for (const auto& p : t.processes) visit(p.name);
  return order;
}

// Builds the merged trace from ranks sorted by rank: map_strings (serial, rank order), then the
// column jobs, which may run in any order on any thread.
class RankMerger {
 public:
  RankMerger(Trace& merged, std::vector<Rank>& ranks) : merged_(merged), ranks_(ranks) {}

  // Step 1, with the small per-rank tables (threads, processes, devices) and counters.
  void map_strings() {
    std::vector<std::vector<StrId>> orders(ranks_.size());
    parallel_for(ranks_.size(), [&](size_t i) { orders[i] = strings_in_order(ranks_[i]); });
    uint32_t kernel_rows = 0;
    for (size_t i = 0; i < ranks_.size(); ++i) {
      Rank& r = ranks_[i];
      const Trace& src = r.trace;
      r.kernel_base = kernel_rows;
      kernel_rows += static_cast<uint32_t>(src.kernels.size());
      r.remap.assign(r.strings.size(), kNoStr);
      for (StrId id : orders[i]) r.remap[id] = merged_.strings.intern(r.strings.get(id));
      std::vector<StrId>().swap(orders[i]);
      auto str = [&](StrId id) {
        if (id == kNoStr) return kNoStr;
        if (r.remap[id] == kNoStr) r.remap[id] = merged_.strings.intern(r.strings.get(id));
        return r.remap[id];
      };
      for (const auto& th : src.threads) merged_.threads.push_back({th.global_tid | r.tag, str(th.name), th.priority});
      for (const auto& p : src.processes) merged_.processes.push_back({p.global_pid | r.tag, p.pid, str(p.name)});
      for (const auto& dev : src.devices) {
        auto& devices = merged_.devices;
        if (std::none_of(devices.begin(), devices.end(), [&](const DeviceInfo& x) { return x.id == dev.id; })) {
          DeviceInfo copy = dev;
          copy.name = str(dev.name);
          devices.push_back(copy);
        }
      }
      add_counts(src);
      r.strings = PackedStrings();  // every string it uses is in the merged pool now
    }
  }

  // Step 2: one job per merged column, for every column of every table (model/columns.h).
  std::vector<std::function<void()>> column_jobs() {
    jobs_.clear();
    for_each_trace_table([&](const TableInfo&, auto get) {
      // Row counts now: the jobs free the ranks' columns, and a table's size is one of them.
      auto rows = std::make_shared<std::vector<size_t>>();
      for (Rank& r : ranks_) rows->push_back(get(r.trace).size());
      using Table = std::decay_t<decltype(get(merged_))>;
      for_each_column_of<Table>([&](const auto& column) {
        jobs_.push_back([this, get, column, rows] { merge_column(get, column, *rows); });
      });
    });
    return std::move(jobs_);
  }

  // True once every `bytes` of rank columns freed (then it is time to give the pages back).
  bool freed_at_least(size_t bytes) {
    size_t freed = freed_.load();
    while (freed >= bytes && !freed_.compare_exchange_weak(freed, 0)) {
    }
    return freed >= bytes;
  }

 private:
  void add_counts(const Trace& src) {
    auto& dp = merged_.pytorch;
    dp.event_count += src.pytorch.event_count;
    dp.python_function_count += src.pytorch.python_function_count;
    dp.flow_count += src.pytorch.flow_count;
    merged_.warnings.negative_durations += src.warnings.negative_durations;
    merged_.warnings.absurd_durations += src.warnings.absurd_durations;
    merged_.warnings.missing_times += src.warnings.missing_times;
    merged_.warnings.unusable_durations += src.warnings.unusable_durations;
    merged_.warnings.oversized_events += src.warnings.oversized_events;
    merged_.warnings.unknown_events += src.warnings.unknown_events;
    merged_.source.tables.insert(src.source.tables.begin(), src.source.tables.end());
  }

  // Fills one merged column from every rank in rank order, freeing each rank's copy once copied.
  // An optional column stays empty when no rank recorded it, else every rank fills its rows.
  template <typename Get, typename Table, typename T>
  void merge_column(Get get, const Column<Table, T>& column, const std::vector<size_t>& rows) {
    auto& dst = column.of(get(merged_));
    if (column.optional() &&
        std::all_of(ranks_.begin(), ranks_.end(), [&](Rank& r) { return column.of(get(r.trace)).empty(); })) {
      return;
    }
    size_t total = dst.size();
    for (size_t n : rows) total += n;
    reserve_on_huge_pages(dst, total);
    for (size_t i = 0; i < ranks_.size(); ++i) {
      Rank& r = ranks_[i];
      auto& src = column.of(get(r.trace));
      append_values(column, dst, src, rows[i], RowMove{r.shift, r.tag, &r.remap, r.kernel_base});
      freed_ += src.capacity() * sizeof(T);
      std::vector<T>().swap(src);
    }
  }

  Trace& merged_;
  std::vector<Rank>& ranks_;
  std::vector<std::function<void()>> jobs_;
  std::atomic<size_t> freed_{0};
};

// Merges ranks (sorted by rank, at least two) into one trace, on the task pool.
Result<Trace> merge_ranks(const std::string& dir, std::vector<Rank> ranks) {
  // Ranks started in different quarters have different bases: express all times on the earliest.
  int64_t base = INT64_MAX;
  for (const auto& r : ranks)
    if (r.trace.pytorch.base_time_ns > 0) base = std::min(base, r.trace.pytorch.base_time_ns);
  Trace merged;
  merged.source.path = dir;
  merged.source.format = "kineto-json";
  const auto& first = ranks[0].trace.pytorch;
  merged.pytorch.era = first.era;
  merged.pytorch.base_time_ns = base == INT64_MAX ? 0 : base;
  merged.pytorch.world_size = first.world_size;
  merged.pytorch.backend = first.backend;
  for (auto& r : ranks) {
    const auto& py = r.trace.pytorch;
    r.shift = py.base_time_ns > 0 ? py.base_time_ns - base : 0;
    r.tag = (py.rank + 1) << 48;
  }

  RankMerger merger(merged, ranks);
  merger.map_strings();
  release_free_pages();  // what the readers left behind: outgrown column buffers, read windows
  const auto jobs = merger.column_jobs();
  std::mutex failure_mutex;
  Status failure;
  std::atomic<bool> failed{false};
  // Pages go back after every 16 MB freed, so the ranks' freed columns never pile up beside the
  // merged ones (64 ranks, 1.2 GB of JSON: peak RSS 300-315 MB, 405 MB without; 4 to 32 MB all do).
  constexpr size_t kReleaseBytes = size_t{16} << 20;
  parallel_for(jobs.size(), [&](size_t i) {
    if (failed) return;
    jobs[i]();
    if (merger.freed_at_least(kReleaseBytes)) release_free_pages();
    if (Status st = MemoryBudget::check(dir); !st.ok()) {
      std::lock_guard<std::mutex> lock(failure_mutex);
      if (!failed.exchange(true)) failure = std::move(st);
    }
  });
  if (failed) return failure;
  ranks.clear();
  release_free_pages();
  merged.source.session_start_utc_ns = merged.pytorch.base_time_ns;
  sort_by_time(merged);
  kineto::find_steps(merged);
  return merged;
}

}  // namespace

std::vector<std::string> kineto_files_in(const std::string& dir) {
  const auto listed = list_trace_directory(dir);
  if (!listed.ok() || listed->kind != TraceDirectory::Kind::kKinetoRanks) return {};
  return listed->files;
}

uint64_t kineto_model_estimate(const std::string& path) {
  std::error_code ec;
  const uint64_t size = std::filesystem::file_size(path, ec);
  if (ec) return 0;
  uint64_t json = size;
  if (is_gzip_file(path)) {
    // The trailer's ISIZE is the last member's inflated size modulo 4 GiB; traces deflate 10-20x.
    uint32_t isize = 0;
    if (std::FILE* f = std::fopen(path.c_str(), "rb")) {
      unsigned char tail[4] = {};
      if (size >= 4 && std::fseek(f, -4, SEEK_END) == 0 && std::fread(tail, 1, 4, f) == 4)
        isize = tail[0] | (tail[1] << 8) | (tail[2] << 16) | (uint32_t{tail[3]} << 24);
      std::fclose(f);
    }
    json = std::max<uint64_t>(isize, 8 * size);
  }
  return json / 5;
}

size_t kineto_files_at_once(const std::vector<std::string>& files) {
  const size_t all = std::max<size_t>(files.size(), 1);
  const uint64_t limit = MemoryBudget::limit();
  if (limit == 0) return all;
  uint64_t largest = 1;
  for (const std::string& f : files) largest = std::max(largest, kineto_model_estimate(f));
  const uint64_t resident = MemoryBudget::resident_bytes();
  const uint64_t room = limit > resident ? limit - resident : 0;
  return static_cast<size_t>(std::clamp<uint64_t>(room / largest, 1, all));
}

Result<Trace> read_kineto_directory(const std::string& dir, int64_t only_rank, const KinetoReadOptions& options) {
  TRACEDOC_ASSIGN_OR_RETURN(const TraceDirectory listed, list_trace_directory(dir));
  if (listed.kind != TraceDirectory::Kind::kKinetoRanks)
    return BadInput(fmt::format("{}: a tracedoc capture, not a folder of PyTorch profiler traces", dir));
  const std::vector<std::string>& files = listed.files;
  std::vector<std::string> skipped = listed.skipped;

  std::vector<Rank> read(files.size());
  std::vector<Status> errors(files.size());
  // Files are read `lanes` at once, each lane taking every lanes-th file in turn.
  const size_t lanes = kineto_files_at_once(files);
  // As many files as threads already keep every thread reading: each file then reads on its own
  // thread, without the pipeline's windows (three per file).
  KinetoReadOptions per_file = options;
  if (lanes >= static_cast<size_t>(thread_count())) per_file.parallel_run_bytes = 0;
  parallel_for(lanes, [&](size_t lane) {
    for (size_t i = lane; i < files.size(); i += lanes) {
      auto t = read_kineto_trace(files[i], per_file);
      if (!t.ok()) {
        errors[i] = t.status();
        continue;
      }
      read[i].trace = std::move(t).value();
      read[i].strings = PackedStrings(read[i].trace.strings);
    }
  });

  // Files that are JSON but not traces (e.g. a run's metadata beside its traces) are passed over,
  // and named.
  std::vector<Rank> ranks;
  for (size_t i = 0; i < files.size(); ++i) {
    if (!errors[i].ok()) {
      const std::string& why = errors[i].message();
      if (why.find("not a PyTorch profiler trace") == std::string::npos) return errors[i];
      const std::string named = files[i] + ": ";
      skipped.push_back(named + "not read: " + (why.starts_with(named) ? why.substr(named.size()) : why));
      continue;
    }
    Rank r = std::move(read[i]);
    auto& rank = r.trace.pytorch.rank;
    if (rank < 0) rank = static_cast<int64_t>(ranks.size());
    if (only_rank >= 0 && rank != only_rank) continue;
    ranks.push_back(std::move(r));
  }
  if (ranks.empty()) {
    if (only_rank >= 0) return UsageError(fmt::format("{}: no trace of rank {} in this directory", dir, only_rank));
    return BadInput(fmt::format("{}: no PyTorch profiler traces in this directory ({} JSON file{} that {} not traces)",
                                dir, files.size(), files.size() == 1 ? "" : "s", files.size() == 1 ? "is" : "are"));
  }
  Result<Trace> merged = [&]() -> Result<Trace> {
    if (ranks.size() == 1) {
      Trace t = std::move(ranks[0].trace);
      t.strings = ranks[0].strings.unpack();
      t.source.path = dir;
      return t;
    }
    std::sort(ranks.begin(), ranks.end(),
              [](const Rank& a, const Rank& b) { return a.trace.pytorch.rank < b.trace.pytorch.rank; });
    return merge_ranks(dir, std::move(ranks));
  }();
  if (merged.ok()) merged->warnings.skipped_entries = std::move(skipped);
  return merged;
}

}  // namespace tracedoc
