// The one pool of worker threads every parallel part of tracedoc runs on: table decoding, the
// Kineto sort and rank merge, reports, analyses per GPU and per diff side. Its size is the
// `--threads N` of every subcommand, by default the cores this process may use (its CPU affinity,
// capped by the CPU quota of its cgroup, v2 `cpu.max` or v1 `cpu.cfs_quota_us`), so a 128-core
// node uses 128 and a container limited to 4 CPUs uses 4.
//
// Results never depend on the thread count: work is split into jobs by the data (tables, page
// ranges, ranks, reports), each job writes only its own output, and outputs are combined in job
// order. tests/threads_test.cpp runs real traces with 1, 2 and 7 threads and compares the bytes.
#pragma once

#include <algorithm>
#include <cstddef>
#include <functional>
#include <vector>

namespace tracedoc {

// The cores this process may run on: the CPUs of its affinity mask, at most its cgroup's CPU quota
// (rounded up), at least 1.
int usable_cores();

// Sets the pool's size: `n` threads in all (the caller included), 0 for usable_cores(). Not to be
// called while parallel work runs; the pool restarts at the new size.
void set_thread_count(int n);
// The pool's size (usable_cores() until set).
int thread_count();

// Runs job(0) .. job(count - 1), each once, on up to thread_count() threads, the caller being one
// of them; returns when every job has run. Jobs may call parallel_for themselves: a caller works
// through its own jobs, so nesting never waits on a busy pool. An exception a job throws is
// rethrown to the caller (after the other jobs finish).
void parallel_for(size_t count, const std::function<void(size_t)>& job);

// Runs the functions at once (as parallel_for over them).
void parallel_invoke(const std::vector<std::function<void()>>& functions);

// Rows [0, rows) in consecutive slices for parallel_for: about `rows_per_slice` rows each (at least
// one slice), and at most `most` slices, by default 4 per thread so that the pool evens out slices
// that take longer. Slice s is rows [begin(s), end(s)).
struct RowSlices {
  RowSlices(size_t rows, size_t rows_per_slice, size_t most = 4 * static_cast<size_t>(thread_count()))
      : rows(rows), count(std::max<size_t>(1, std::min(rows / std::max<size_t>(rows_per_slice, 1), most))) {}
  size_t begin(size_t s) const { return rows * s / count; }
  size_t end(size_t s) const { return rows * (s + 1) / count; }
  size_t rows;
  size_t count;
};

}  // namespace tracedoc
