// The rows of `tracedoc view`'s timeline: one track per CPU thread (annotation ranges, PyTorch
// operators, CUDA API calls and OS calls, nested by time into depth rows) and one per GPU stream
// (kernels, copies, memsets, syncs), plus a track per device for Kineto's GPU-side annotations;
// grouped per process (or rank) and coloured by a ColorScheme.
//
// Items point back into the Trace tables (category + row) instead of copying the events, so the
// timeline of a large trace costs 32 bytes per event on top of the model.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/critical_path.h"
#include "model/trace.h"
#include "view/color_scheme.h"
#include "view/op_peaks.h"

namespace tracedoc::view {

inline constexpr uint8_t kMaxTrackRows = 16;  // deeper nesting is drawn on the last row (counted)

struct TrackItem {
  TimeNs start = 0, end = 0;  // end == start: an instant (NVTX mark)
  uint32_t row = 0;           // in the Trace table of its category
  uint32_t name = 0;          // index into Timeline::names
  Category category = Category::kKernel;
  uint8_t depth = 0;
  uint16_t color = 0;  // palette index of the ColorScheme
};

enum class TrackKind : uint8_t { kCpuThread, kGpuStream, kGpuAnnotations };

struct Track {
  TrackKind kind = TrackKind::kCpuThread;
  int64_t global_pid = 0;  // the process (rank tag included) the track belongs to
  int64_t global_tid = 0;  // CPU threads
  int32_t device = -1, stream = -1;
  uint32_t group = 0;            // index into Timeline::groups
  std::string label;             // "thread 4242 (python)", "GPU 0 stream 7", "GPU 0 annotations"
  uint8_t rows = 1;              // depth rows in use
  std::vector<TrackItem> items;  // by start, the longer first on ties (parents before children)
};

struct TrackGroup {
  int64_t global_pid = 0;
  std::string label;  // "rank 0 (pid 4242)", "process python (pid 4242)"
};

struct Timeline {
  std::vector<TrackGroup> groups;
  std::vector<Track> tracks;       // grouped, CPU threads first (main thread first), then GPU streams
  std::vector<std::string> names;  // event names, each once
  TimeNs start = 0, end = 0;       // from the first start to the last end of every item
  int64_t events = 0;
  int64_t clipped_depth = 0;  // items nested deeper than kMaxTrackRows rows
  int64_t unclosed = 0;       // ranges never closed (left out)
};

struct TimelineOptions {
  bool os_calls = true;  // OS runtime calls on the CPU threads
};

}  // namespace tracedoc::view

namespace tracedoc::view {

// Where the CUDA events that syncs wait on were recorded (trace.cuda_events), so that a stream
// wait or event sync can say which stream it waited for. Built once per page.
class EventRecords {
 public:
  struct Record {
    TimeNs call = 0;  // start of the cudaEventRecord call (device time when the call is missing)
    int32_t device = 0, stream = 0;
  };
  explicit EventRecords(const Trace& trace);
  // The last record of event `event_id` in process `global_pid` made at or before t; null if none.
  const Record* last_before(int64_t global_pid, int64_t event_id, TimeNs t) const;

 private:
  std::map<std::pair<int64_t, int64_t>, std::vector<Record>> by_event_;  // (pid, event) -> records by time
};

// The Nsight Compute answers of the kernels (Trace::ncu_reports): each kernel row's bound and its
// answers in one line (analysis/ncu_answers.h), derived once per profiled launch; a kernel without
// a launch standing for it has none.
class KernelNcuAnswers {
 public:
  explicit KernelNcuAnswers(const Trace& trace);
  KernelBound bound(uint32_t kernel_row) const;
  std::string_view line(uint32_t kernel_row) const;

 private:
  std::vector<int32_t> launch_;  // per kernel row: index into bounds_ and lines_, -1 when none
  std::vector<KernelBound> bounds_;
  std::vector<std::string> lines_;
};

// What the items carry beyond their rows, derived once per trace and read by both the colours and
// the hover: Nsight Compute's answers of the kernels (with ncu reports), the operators' FLOPs (with
// recorded shapes).
struct ItemFigures {
  ItemFigures() = default;
  explicit ItemFigures(const Trace& trace);
  std::optional<KernelNcuAnswers> ncu;
  OpPeaks peaks;
};

// `critical` may be null (a scheme that does not use the critical path); `figures` are the trace's.
Timeline build_timeline(const Trace& trace, const ColorScheme& colors, const CriticalPath* critical,
                        const ItemFigures& figures, const TimelineOptions& options = {});

// What the hover shows beyond name and times: launch configuration of a kernel (and what Nsight
// Compute measured in it, with `ncu`), bytes and kinds of a copy, input shapes of an operator, the
// stream a sync waited for (with `events`), an operator's FLOPs and share of its roof and a kernel's
// of the operator it ran under (with `peaks`); empty when there is nothing more.
std::string item_detail(const Trace& trace, const TrackItem& item, const EventRecords* events = nullptr,
                        const KernelNcuAnswers* ncu = nullptr, const OpPeaks* peaks = nullptr);
// The CUDA correlation id linking an API call to the GPU work it launched; -1 when none.
int64_t item_correlation(const Trace& trace, const TrackItem& item);

}  // namespace tracedoc::view
