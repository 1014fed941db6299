// Levels of detail for `tracedoc view`: what the page can draw at every zoom without holding every
// event of a large trace.
//
//  * Buckets: the timeline's span is cut into B equal buckets (8192, fewer when the trace has so
//    many rows that the cells would pass `max_cells`). For every track row and bucket the page gets
//    the time covered by that row's events, how many start there and the colour covering the most
//    time (three candidates kept per bucket, so the dominant colour is exact unless a bucket mixes
//    more than three colours). Only non-empty cells are stored; the page merges pairs of buckets
//    into coarser levels itself.
//  * Raw events: at most `max_events` events are embedded exactly (ns times, names, details),
//    those of one time window: the whole run when it fits, else from `window_start` (the run's
//    start by default) up to where the budget ends, plus the events already open at the window's
//    start (the parents of nested rows). Zoomed into that window the page draws single events;
//    elsewhere it draws the buckets.
//  * Lanes: per GPU the share of each bucket with GPU work (union over streams), per device
//    with memory events the highest memory allocated in each bucket, and per sampled GPU metric
//    its time-weighted mean in each bucket.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "analysis/pytorch/gpu_work.h"
#include "model/trace.h"
#include "view/timeline.h"

namespace tracedoc::view {

// Maps times onto buckets of a span. Bucket positions are computed in double: they only decide
// where the page draws a cell, never a time the page prints.
struct Buckets {
  TimeNs start = 0;
  double width = 1;
  uint32_t count = 1;
  uint32_t index_of(TimeNs t) const {
    const double b = std::floor((static_cast<double>(t) - static_cast<double>(start)) /
                                width);  // no int64 overflow on hostile times
    if (!(b >= 0)) return 0;             // also NaN: a width of NaN or infinity on hostile spans
    return b >= count ? count - 1 : static_cast<uint32_t>(b);
  }
  double begin_of(uint32_t b) const { return static_cast<double>(start) + width * b; }
};

struct LodOptions {
  uint32_t buckets = 8192;
  size_t max_cells = 2'000'000;   // non-empty bucket cells over every row
  int64_t max_events = 500'000;   // raw events embedded
  int64_t max_samples = 250'000;  // raw CPU samples embedded (view/sample_view.h)
  // The raw window in ns from the timeline's start (what the page's axis shows); kNoTime: the
  // timeline's start / as far as the budget goes.
  TimeNs window_start = kNoTime;
  TimeNs window_end = kNoTime;
};

struct LodRow {
  uint32_t track = 0;
  uint8_t row = 0;
  std::vector<uint16_t> bucket;  // bucket index, ascending
  std::vector<uint16_t> busy;    // covered share of the bucket, 0..65535
  std::vector<uint16_t> color;   // palette index covering the most time
  std::vector<uint32_t> count;   // events starting in the bucket
};

struct UtilizationLane {
  std::string label;  // "rank 0 GPU 0", "pid 4242 GPU 0"
  int64_t global_pid = 0;
  int32_t device = 0;
  uint32_t group = 0;          // the Timeline group it is drawn in (view_model.cpp decides)
  std::vector<uint16_t> busy;  // every bucket, 0..65535
  double busy_share = 0;       // over the whole timeline
};

struct MemoryLane {
  std::string label;
  int64_t global_pid = 0;
  int32_t device = 0;
  uint32_t group = 0;
  std::vector<double> peak;  // every bucket: the most allocated in it (bytes); -1 before the first event
  int64_t max_bytes = 0;
  TimeNs max_time = kNoTime;
};

// A GPU metric the GPU sampled (analysis/gpu_metrics.h: SM active, SM issue, tensor active, warps
// in flight, DRAM and PCIe throughput): its time-weighted mean in each bucket.
struct MetricLane {
  std::string label;  // "GPU 0 SM Active"
  std::string unit;   // "%", "MHz", ...
  int32_t device = 0;
  uint32_t group = 0;        // the group of the first process with work on the GPU
  std::vector<double> mean;  // every bucket: -1 where nothing was sampled
  double max = 0;            // the lane's full scale: 100 for percentages, else the largest value
};

struct RawSelection {
  TimeNs start = 0, end = 0;  // the window drawn exactly (absolute trace time)
  bool complete = true;       // every event of the trace is embedded
  int64_t events = 0;
  std::vector<std::vector<uint32_t>> items;  // per track: indices into Track::items, ascending
};

struct Lod {
  TimeNs start = 0, end = 0;  // the bucketed span
  uint32_t buckets = 0;
  double bucket_ns = 0;
  std::vector<LodRow> rows;
  std::vector<UtilizationLane> utilization;
  std::vector<MemoryLane> memory;
  std::vector<MetricLane> metrics;
  RawSelection raw;
  int64_t cells() const;
  Buckets grid() const { return {start, bucket_ns, buckets}; }
};

// `labels[i]` names work.units[i] ("rank 0 GPU 0").
Lod build_lod(const Trace& trace, const Timeline& timeline, const pytorch::GpuWork& work,
              const std::vector<std::string>& unit_labels, const LodOptions& options);

}  // namespace tracedoc::view
