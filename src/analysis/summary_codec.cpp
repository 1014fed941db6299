// A summary part as bytes: what a worker that read one rank file sends to the process that merges
// (tracedoc.distributed, over Dask). Little-endian fixed-width integers, doubles by their bits (the
// merge must see exactly the values the worker computed), strings and lists length-prefixed, after
// a magic and a version. Each struct's fields are listed once, in `fields`, for both directions.
#include <fmt/format.h>

#include <bit>
#include <cstring>
#include <type_traits>

#include "analysis/summary.h"

namespace tracedoc {

namespace {

constexpr char kMagic[4] = {'T', 'D', 'S', 'P'};
constexpr uint32_t kVersion = 1;

template <typename F>
void fields(F& f, NamedTotal& t) {
  f(t.name), f(t.count), f(t.total_ns);
}
template <typename F>
void fields(F& f, DeviceSummary& d) {
  f(d.pid), f(d.rank), f(d.device), f(d.name), f(d.first_start), f(d.last_end), f(d.busy_ns), f(d.kernel_ns);
  f(d.memcpy_ns), f(d.memset_ns), f(d.kernels), f(d.memcpys), f(d.memsets), f(d.graphs), f(d.graph_ns);
  f(d.streams), f(d.gaps_over_threshold), f(d.longest_gap_ns), f(d.longest_gap_start), f(d.compute_ns);
  f(d.non_compute_ns), f(d.communication_ns), f(d.comm_overlap_ns), f(d.peak_allocated), f(d.peak_time);
  f(d.peak_reserved), f(d.launches), f(d.short_kernels), f(d.launch_delay_median_ns), f(d.sm_efficiency_pct);
  f(d.occupancy_pct), f(d.tensor_core_pct);
}
template <typename F>
void fields(F& f, CopyPart& c) {
  f(c.copy_kind), f(c.host), f(c.mixed_links), f(c.copy.direction), f(c.copy.host_memory), f(c.copy.count);
  f(c.copy.bytes), f(c.copy.total_ns), f(c.copy.link), f(c.copy.link_peak_gb_per_s);
}
template <typename F>
void fields(F& f, StepValues& v) {
  f(v.cpu_ns), f(v.gpu), f(v.gpu_span_ns), f(v.gpu_busy_ns), f(v.has_pct), f(v.busy_pct);
}
template <typename F>
void fields(F& f, DispatchSummary& d) {
  f(d.framework_ns), f(d.cuda_api_ns), f(d.gpu_ns), f(d.kernels), f(d.top_ops);
}
template <typename F>
void fields(F& f, ThreadSummary& t) {
  f(t.pid), f(t.tid), f(t.name), f(t.main), f(t.span_ns), f(t.running_ns), f(t.lock_waits), f(t.lock_wait_ns);
  f(t.sync_wait_ns), f(t.api_ns);
}
template <typename F>
void fields(F& f, SummaryUnitPart& u) {
  RankRow& r = u.row;  // the collective columns are the merge's
  f(r.pid), f(r.rank), f(r.device), f(r.name), f(r.busy_ns), f(r.compute_ns), f(r.exposed_comm_ns), f(u.step_ns);
}
template <typename F>
void fields(F& f, FindingsSummary& s) {
  f(s.sync_calls), f(s.sync_call_ns), f(s.sync_copies), f(s.sync_copy_ns), f(s.pageable_async_copies);
  f(s.sync_memsets);
}
template <typename F>
void fields(F& f, SummaryPart& p) {
  f(p.input), f(p.format), f(p.producer), f(p.rank), f(p.clock_base_ns), f(p.any_time), f(p.span_start);
  f(p.span_end), f(p.gpu_ops), f(p.api_calls), f(p.ranges), f(p.cpu_ops), f(p.devices), f(p.kernel_total_ns);
  f(p.kernels), f(p.api), f(p.copies), f(p.has_steps), f(p.step_source), f(p.steps), f(p.role_steps);
  f(p.role_step_ns), f(p.role_ns), f(p.has_dispatch), f(p.dispatch), f(p.threads), f(p.pytorch_units);
  f(p.units), f(p.collectives), f(p.findings), f(p.gap_threshold_ns);
}

class Writer {
 public:
  std::string bytes;
  template <typename T>
  void operator()(const T& v) {
    if constexpr (std::is_same_v<T, std::string>) {
      (*this)(static_cast<uint64_t>(v.size()));
      bytes.append(v);
    } else if constexpr (std::is_same_v<T, double>) {
      (*this)(std::bit_cast<uint64_t>(v));
    } else if constexpr (std::is_enum_v<T>) {
      (*this)(static_cast<uint64_t>(v));
    } else if constexpr (std::is_integral_v<T>) {
      auto u = static_cast<uint64_t>(v);
      for (int i = 0; i < 8; ++i) bytes.push_back(static_cast<char>((u >> (8 * i)) & 0xFF));
    } else {
      fields(*this, const_cast<T&>(v));
    }
  }
  template <typename T>
  void operator()(const std::vector<T>& v) {
    (*this)(static_cast<uint64_t>(v.size()));
    for (const T& x : v) (*this)(x);
  }
  template <typename T, size_t N>
  void operator()(const std::array<T, N>& v) {
    for (const T& x : v) (*this)(x);
  }
  void operator()(const CollectiveStarts& starts) {
    (*this)(static_cast<uint64_t>(starts.size()));
    for (const auto& [name, per_unit] : starts) (*this)(name), (*this)(per_unit);
  }
};

class Reader {
 public:
  explicit Reader(std::string_view bytes) : rest_(bytes) {}
  bool failed = false;
  size_t left() const { return rest_.size(); }

  template <typename T>
  void operator()(T& v) {
    if constexpr (std::is_same_v<T, std::string>) {
      const uint64_t n = count(1);
      if (failed) return;
      v.assign(rest_.substr(0, n));
      rest_.remove_prefix(n);
    } else if constexpr (std::is_same_v<T, double>) {
      v = std::bit_cast<double>(word());
    } else if constexpr (std::is_enum_v<T>) {
      v = static_cast<T>(word());
    } else if constexpr (std::is_same_v<T, bool>) {
      v = word() != 0;
    } else if constexpr (std::is_integral_v<T>) {
      v = static_cast<T>(word());
    } else {
      fields(*this, v);
    }
  }
  template <typename T>
  void operator()(std::vector<T>& v) {
    const uint64_t n = count(8);  // every element takes at least 8 bytes
    if (failed) return;
    v.resize(n);
    for (T& x : v) (*this)(x);
  }
  template <typename T, size_t N>
  void operator()(std::array<T, N>& v) {
    for (T& x : v) (*this)(x);
  }
  void operator()(CollectiveStarts& starts) {
    const uint64_t n = count(16);
    for (uint64_t i = 0; i < n && !failed; ++i) {
      std::string name;
      std::vector<std::vector<TimeNs>> per_unit;
      (*this)(name), (*this)(per_unit);
      starts.emplace(std::move(name), std::move(per_unit));
    }
  }

 private:
  uint64_t word() {
    if (rest_.size() < 8) {
      failed = true;
      return 0;
    }
    uint64_t u = 0;
    for (int i = 0; i < 8; ++i) u |= static_cast<uint64_t>(static_cast<unsigned char>(rest_[i])) << (8 * i);
    rest_.remove_prefix(8);
    return u;
  }
  // A length, checked against the bytes left (each item needs at least `item_bytes`).
  uint64_t count(uint64_t item_bytes) {
    const uint64_t n = word();
    if (failed || n > rest_.size() / item_bytes) failed = true;
    return failed ? 0 : n;
  }
  std::string_view rest_;
};

}  // namespace

std::string encode_summary_part(const SummaryPart& part) {
  Writer w;
  w.bytes.append(kMagic, sizeof kMagic);
  w(kVersion);
  w(part);
  return std::move(w.bytes);
}

Result<SummaryPart> decode_summary_part(std::string_view bytes) {
  if (bytes.size() < sizeof kMagic || std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0)
    return BadInput("not a tracedoc summary part");
  Reader r(bytes.substr(sizeof kMagic));
  uint32_t version = 0;
  r(version);
  if (r.failed || version != kVersion)
    return BadInput(fmt::format("summary part of version {}, this tracedoc reads version {}", version, kVersion));
  SummaryPart part;
  r(part);
  if (r.failed || r.left() != 0) return BadInput("summary part cut short or corrupt");
  return part;
}

}  // namespace tracedoc
