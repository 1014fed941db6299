// The recording side of `tracedoc capture`, inside the profiled process (libtracedoc_inject.so):
// one .tdcap file per process (ingest/capture_format.h), records buffered and written as whole
// frames, so that a crash loses at most the buffer being filled.
//
//  * Where: $TRACEDOC_CAPTURE_DIR/<name>.tdcap, <name> = "rank<R>.pid<P>" when $RANK is set
//    (torchrun), else "pid<P>"; the DataLoader workers and other children a process forks or
//    spawns write their own file (fork: pthread_atfork starts the child's file with a fresh buffer
//    and string table).
//  * When: a buffer becomes a frame when it passes 256 KB, every 100 ms (a background thread), at
//    exit (atexit), and on SIGINT / SIGTERM / SIGHUP (the handler writes what it can without
//    waiting on a lock, then re-raises the signal with the previous disposition).
//  * What: the capture controls ($TRACEDOC_CAPTURE_DELAY_NS, _DURATION_NS, _NVTX_RANGE,
//    _PROFILER_API) decide whether an event at time t is recorded (`recording(t)`).
//
// Every entry point is noexcept and never throws into the application; when the directory is not
// set or the file cannot be created, recording is off and the application runs as without it.
#pragma once

#include <atomic>
#include <climits>
#include <cstdint>
#include <string>
#include <string_view>

#include "ingest/capture_format.h"

namespace tracedoc::inject {

int64_t now_ns() noexcept;  // CLOCK_REALTIME, the clock of every record
// An integer environment variable (the capture command's settings); `fallback` when unset or not
// a whole number.
int64_t env_int(const char* name, int64_t fallback) noexcept;
int64_t current_tid() noexcept;  // the kernel's thread id

// Whether this thread is inside the recorder (writing, flushing, converting) or is one of its
// threads: the OS-call interposers (osrt_interpose.cpp) then pass calls straight through, so that
// the recorder's own write(2) and poll(2) are neither recorded nor able to re-enter its lock.
bool in_recorder() noexcept;
// Whether the recorder's globals are constructed (false while other libraries' constructors run
// before this library's, when it is preloaded).
bool recorder_ready() noexcept;
// What exit() does through atexit, for _exit(): the CUDA buffers and the last frame written, when
// this process has a writer.
void flush_before_exit() noexcept;
class RecorderScope {
 public:
  RecorderScope() noexcept;
  ~RecorderScope();
  RecorderScope(const RecorderScope&) = delete;
  RecorderScope& operator=(const RecorderScope&) = delete;
};

class CaptureWriter {
 public:
  // The process's writer, opened on first use.
  static CaptureWriter& get() noexcept;
  // The process's writer when one was opened, else null (nothing recorded, no file to flush).
  static CaptureWriter* existing() noexcept;

  bool enabled() const noexcept { return fd_ >= 0; }
  // Whether an event at time t falls in the capture (delay, duration, capture range).
  bool recording(int64_t t) const noexcept;
  // Appends one record to the buffer (a frame is written when the buffer is full).
  void record(capture::RecordType type, std::string_view body) noexcept;
  // The id of a string, writing its kString record the first time.
  uint32_t string_id(std::string_view text) noexcept;
  // Writes the buffer as a frame now.
  void flush() noexcept;
  // Code addresses were recorded (CPU samples, OS-call stacks): the recorder's thread records the
  // process's executable mappings that are new (/proc/self/maps) on its next wake-up and at exit,
  // which the reader needs to name them.
  void addresses_recorded() noexcept { modules_stale_.store(true, std::memory_order_relaxed); }
  void record_new_modules() noexcept;
  // Records the kernel's names of the process's threads that are new or renamed since the last
  // call (/proc/self/task/T/comm): PyTorch's and CUDA's threads name themselves, not through NVTX.
  void record_thread_names() noexcept;

  // The NVTX capture range (--capture-range=nvtx): a range with this text (and domain) started or
  // ended. Returns whether `text`/`domain` is the range.
  bool nvtx_range_begins(std::string_view text, std::string_view domain, int64_t t) noexcept;
  bool nvtx_range_ends(std::string_view text, std::string_view domain, int64_t t) noexcept;
  // --capture-range=cudaProfilerApi: cudaProfilerStart / cudaProfilerStop were called.
  void profiler_api(bool start, int64_t t) noexcept;
  bool uses_profiler_api() const noexcept { return range_kind_ == RangeKind::kProfilerApi; }
  bool uses_nvtx_range() const noexcept { return range_kind_ == RangeKind::kNvtx; }

  // Called from the signal handler: writes the buffer if no thread is writing it.
  void flush_from_signal() noexcept;
  // After fork(), in the child: a new file, an empty buffer and string table.
  void reopen_in_child() noexcept;

 private:
  enum class RangeKind : uint8_t { kNone, kNvtx, kProfilerApi };
  CaptureWriter() noexcept;
  void open_file() noexcept;
  uint32_t intern_locked(std::string_view text);  // may throw (allocation): string_id catches
  void write_frame_locked() noexcept;
  void open_range(int64_t t) noexcept;
  void close_range(int64_t t) noexcept;

  int fd_ = -1;
  std::string dir_;
  std::string buffer_;
  int64_t process_start_ = 0;
  int64_t delay_ns_ = 0, duration_ns_ = -1;
  RangeKind range_kind_ = RangeKind::kNone;
  std::string range_text_, range_domain_;
  // The capture range's bounds: INT64_MAX until it starts, then its start; its end likewise (set
  // on one thread, read on every thread that records).
  std::atomic<int64_t> range_start_{INT64_MAX}, range_end_{INT64_MAX};
  std::atomic<bool> modules_stale_{false};
};

}  // namespace tracedoc::inject
