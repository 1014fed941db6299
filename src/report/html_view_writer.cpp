#include "report/html_view_writer.h"

#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <map>
#include <optional>
#include <random>
#include <string_view>
#include <unordered_map>

#include "analysis/checked_math.h"
#include "analysis/pytorch/gpu_work.h"
#include "common/human_units.h"
#include "report/view_assets.h"
#include "report/writers.h"

namespace tracedoc {

namespace {

using view::Track;
using view::TrackItem;

// A tiny JSON emitter for the data document: compact, keys in a fixed order.
class Json {
 public:
  explicit Json(std::string& out) : out_(out) {}
  void open(char c) {
    comma();
    out_ += c;
    first_ = true;
  }
  void close(char c) {
    out_ += c;
    first_ = false;
  }
  void key(std::string_view k) {
    comma();
    append_json_string(out_, k);
    out_ += ':';
    first_ = true;  // the value follows without a comma
  }
  void str(std::string_view v) {
    comma();
    append_json_string(out_, v);
  }
  void num(int64_t v) {
    comma();
    out_ += std::to_string(v);
  }
  void real(double v) {
    comma();
    out_ += std::isfinite(v) ? fmt::format("{}", v) : "null";
  }
  void boolean(bool v) {
    comma();
    out_ += v ? "true" : "false";
  }
  void field(std::string_view k, std::string_view v) { key(k), str(v); }
  void field(std::string_view k, const char* v) { key(k), str(v); }
  void field(std::string_view k, const std::string& v) { key(k), str(v); }
  void field(std::string_view k, int64_t v) { key(k), num(v); }
  void field(std::string_view k, int v) { key(k), num(v); }
  void field(std::string_view k, size_t v) { key(k), num(static_cast<int64_t>(v)); }
  void field(std::string_view k, double v) { key(k), real(v); }
  void flag(std::string_view k, bool v) { key(k), boolean(v); }
  // key: [ {each(item)}, ... ]
  template <typename T, typename Fn>
  void objects(std::string_view k, const std::vector<T>& items, Fn each) {
    key(k);
    open('[');
    for (const T& item : items) {
      open('{');
      each(item);
      close('}');
    }
    close(']');
  }
  template <typename T>
  void column(std::string_view k, const std::vector<T>& v) {
    key(k);
    str(base64_encode(v.data(), v.size() * sizeof(T)));
  }

 private:
  void comma() {
    if (!first_) out_ += ',';
    first_ = false;
  }
  std::string& out_;
  bool first_ = true;
};

// Detail strings are shared by many events (one launch configuration per kernel shape).
class DetailTable {
 public:
  uint32_t of(std::string text) {
    auto [it, added] = index_.try_emplace(std::move(text), static_cast<uint32_t>(texts_.size()));
    if (added) texts_.push_back(it->first);
    return it->second;
  }
  const std::vector<std::string>& texts() const { return texts_; }

 private:
  std::unordered_map<std::string, uint32_t> index_;
  std::vector<std::string> texts_;
};

const char* track_kind(view::TrackKind k) {
  switch (k) {
    case view::TrackKind::kCpuThread: return "cpu";
    case view::TrackKind::kGpuStream: return "gpu";
    case view::TrackKind::kGpuAnnotations: return "gpu_annotations";
  }
  return "cpu";
}

// Times of hostile traces may span past int64: differences saturate instead of overflowing.
double rel(TimeNs t, TimeNs origin) { return static_cast<double>(sat_sub(t, origin)); }

void write_tracks(Json& j, const Trace& trace, const view::ViewModel& vm, DetailTable& details) {
  const view::Timeline& tl = vm.timeline;
  j.key("tracks");
  j.open('[');
  details.of("");  // index 0: no detail
  const view::EventRecords events(trace);
  const view::KernelNcuAnswers* ncu = vm.figures.ncu ? &*vm.figures.ncu : nullptr;
  const view::OpPeaks* peaks = vm.figures.peaks.any() ? &vm.figures.peaks : nullptr;
  for (size_t t = 0; t < tl.tracks.size(); ++t) {
    const Track& track = tl.tracks[t];
    const std::vector<uint32_t>& keep = vm.lod.raw.items[t];
    std::vector<double> start, dur, corr;
    std::vector<uint32_t> name, detail;
    std::vector<uint16_t> color;
    std::vector<uint8_t> depth, cat;
    for (auto* v : {&start, &dur, &corr}) v->reserve(keep.size());
    for (uint32_t i : keep) {
      const TrackItem& item = track.items[i];
      start.push_back(rel(item.start, tl.start));
      dur.push_back(static_cast<double>(sat_sub(item.end, item.start)));
      corr.push_back(static_cast<double>(view::item_correlation(trace, item)));
      name.push_back(item.name);
      detail.push_back(details.of(view::item_detail(trace, item, &events, ncu, peaks)));
      color.push_back(item.color);
      depth.push_back(item.depth);
      cat.push_back(static_cast<uint8_t>(item.category));
    }
    j.open('{');
    j.field("group", static_cast<int64_t>(track.group));
    j.field("label", track.label);
    j.field("kind", track_kind(track.kind));
    j.field("device", static_cast<int64_t>(track.device));
    j.field("rows", static_cast<int64_t>(track.rows));
    j.field("events", track.items.size());
    j.field("n", keep.size());
    j.column("s", start);
    j.column("d", dur);
    j.column("c", corr);
    j.column("name", name);
    j.column("detail", detail);
    j.column("color", color);
    j.column("depth", depth);
    j.column("cat", cat);
    j.close('}');
  }
  j.close(']');
}

void write_lod(Json& j, const view::ViewModel& vm) {
  const view::Lod& lod = vm.lod;
  j.key("lod");
  j.open('{');
  j.field("buckets", static_cast<int64_t>(lod.buckets));
  j.field("bucket_ns", lod.bucket_ns);
  j.objects("rows", lod.rows, [&](const view::LodRow& r) {
    j.field("track", static_cast<int64_t>(r.track));
    j.field("row", static_cast<int64_t>(r.row));
    j.column("b", r.bucket);
    j.column("busy", r.busy);
    j.column("color", r.color);
    j.column("count", r.count);
  });
  j.close('}');
  j.objects("utilization", lod.utilization, [&](const view::UtilizationLane& u) {
    j.field("label", u.label);
    j.field("group", static_cast<int64_t>(u.group));
    j.field("device", static_cast<int64_t>(u.device));
    j.field("share", u.busy_share);
    j.column("busy", u.busy);
  });
  j.objects("memory", lod.memory, [&](const view::MemoryLane& m) {
    j.field("label", m.label);
    j.field("group", static_cast<int64_t>(m.group));
    j.field("device", static_cast<int64_t>(m.device));
    j.field("max", m.max_bytes);
    j.field("max_time", m.max_time == kNoTime ? -1.0 : rel(m.max_time, vm.timeline.start));
    j.column("peak", m.peak);
  });
  j.objects("metrics", lod.metrics, [&](const view::MetricLane& m) {
    j.field("label", m.label);
    j.field("unit", m.unit);
    j.field("group", static_cast<int64_t>(m.group));
    j.field("device", static_cast<int64_t>(m.device));
    j.field("max", m.max);
    j.column("mean", m.mean);
  });
}

// CPU samples: the lanes under the threads (every sample, bucketed) and the embedded samples with
// their stacks, for the flame graph (view/sample_view.h).
void write_samples(Json& j, const view::ViewModel& vm) {
  const view::SampleView& s = vm.samples;
  const TimeNs origin = vm.timeline.start;
  j.key("samples");
  j.open('{');
  j.field("total", s.total);
  j.field("embedded", s.time.size());
  j.flag("complete", s.complete);
  j.field("start", rel(s.start, origin));
  j.field("end", rel(s.end, origin));
  j.key("classes");
  j.open('[');
  for (const std::string& c : s.classes) j.str(c);
  j.close(']');
  j.objects("lanes", s.lanes, [&](const view::SampleLane& l) {
    j.field("track", static_cast<int64_t>(l.track));
    j.field("samples", l.samples);
    j.column("b", l.bucket);
    j.column("count", l.count);
    j.column("cls", l.cls);
  });
  j.key("strings");
  j.open('[');
  for (const std::string& text : s.strings) j.str(text);
  j.close(']');
  j.column("fn_name", s.function_name);
  j.column("fn_module", s.function_module);
  j.column("fn_class", s.function_class);
  j.column("stack_offsets", s.stack_offsets);
  j.column("stack_fns", s.stack_functions);
  j.column("stack_class", s.stack_class);
  std::vector<double> time;
  time.reserve(s.time.size());
  for (TimeNs t : s.time) time.push_back(rel(t, origin));
  j.column("track", s.track);
  j.column("t", time);
  j.column("stack", s.stack);
  j.column("idle", s.gpu_idle);
  j.close('}');
}

void write_panels(Json& j, const view::ViewModel& vm) {
  const TimeNs origin = vm.timeline.start;
  const TraceSummary& s = vm.summary;
  j.key("figures");
  j.open('[');
  auto figure = [&](const std::string& label, const std::string& value) {
    j.open('{');
    j.field("label", label);
    j.field("value", value);
    j.close('}');
  };
  figure("Span", human_duration(sat_sub(vm.timeline.end, vm.timeline.start)));
  figure("Events", fmt::format("{}", vm.timeline.events));
  for (const DeviceSummary& d : s.devices) {
    const std::string who =
        d.rank >= 0 ? fmt::format("rank {} GPU {}", d.rank, d.device) : fmt::format("pid {} GPU {}", d.pid, d.device);
    figure(who + " busy",
           fmt::format("{:.1f}% of {}", d.busy_pct(), human_duration(sat_sub(d.last_end, d.first_start))));
  }
  if (s.steps) {
    figure("Steps", fmt::format("{} ({})", s.steps->count, step_source_name(s.steps->source)));
    figure("Median step", human_duration(s.steps->median_cpu_ns));
    figure("GPU busy per step", fmt::format("{:.1f}% (median)", s.steps->median_busy_pct));
  }
  if (vm.critical_computed) {
    figure("Critical path",
           fmt::format("{} operations, {}", vm.critical.operations, human_duration(vm.critical.path_ns)));
  }
  j.close(']');

  j.objects("findings", vm.findings, [&](const diagnose::Finding& f) {
    j.field("id", f.id);
    j.field("severity", diagnose::severity_name(f.severity));
    j.field("scope", f.scope);
    j.field("title", f.title);
    j.field("savings_ns", f.savings_ns);
    j.field("share", f.savings_share);
    j.field("remedy", f.remedy);
    j.objects("ranges", f.ranges, [&](const diagnose::TimeRange& r) {
      j.field("start", rel(r.start, origin));
      j.field("end", rel(r.end, origin));
      j.field("where", r.where);
      j.field("label", r.label);
    });
  });
  j.objects("kernels", vm.kernels, [&](const view::KernelRow& k) {
    j.field("name", k.name);
    j.field("count", k.count);
    j.field("total_ns", k.total_ns);
    j.field("median_ns", k.median_ns);
    j.field("max_ns", k.max_ns);
    j.field("share", k.share);
  });
  j.key("steps");
  j.open('{');
  j.field("source", vm.step_source);
  j.key("parts");
  j.open('[');
  for (const char* p : pytorch::kTimePartNames) j.str(p);
  j.close(']');
  j.objects("bars", vm.steps, [&](const view::StepBar& b) {
    j.field("unit", b.unit);
    j.field("number", b.number);
    j.field("start", rel(b.start, origin));
    j.field("end", rel(b.end, origin));
    j.key("parts");
    j.open('[');
    for (int64_t p : b.parts) j.num(p);
    j.close(']');
  });
  j.close('}');
}

// '<', '>' and '&' only occur inside JSON strings, so replacing them everywhere keeps the document
// valid and makes "</script>" impossible; U+2028/2029 are escaped for old JavaScript parsers.
std::string escape_for_script(const std::string& json) {
  std::string out;
  out.reserve(json.size() + json.size() / 64);
  for (size_t i = 0; i < json.size(); ++i) {
    const char c = json[i];
    if (c == '<')
      out += "\\u003c";
    else if (c == '>')
      out += "\\u003e";
    else if (c == '&')
      out += "\\u0026";
    else if (c == '\xE2' && i + 2 < json.size() && json[i + 1] == '\x80' &&
             (json[i + 2] == '\xA8' || json[i + 2] == '\xA9')) {
      out += json[i + 2] == '\xA8' ? "\\u2028" : "\\u2029";
      i += 2;
    } else {
      out += c;
    }
  }
  return out;
}

// Fills {{NAME}} placeholders in one pass over the template, so text put in (a file name, a
// kernel name in the data) is never searched for placeholders itself.
std::string fill_template(std::string_view page, const std::map<std::string_view, std::string>& values) {
  std::string out;
  out.reserve(page.size() + [&] {
    size_t n = 0;
    for (const auto& [k, v] : values) n += v.size();
    return n;
  }());
  size_t at = 0;
  while (at < page.size()) {
    const size_t open = page.find("{{", at);
    if (open == std::string_view::npos) break;
    const size_t close = page.find("}}", open + 2);
    if (close == std::string_view::npos) break;
    out.append(page.substr(at, open - at));
    const auto it = values.find(page.substr(open + 2, close - open - 2));
    if (it != values.end())
      out += it->second;
    else
      out.append(page.substr(open, close + 2 - open));
    at = close + 2;
  }
  out.append(page.substr(at));
  return out;
}

// A fresh nonce per page: only the viewer's own script runs, not an inline handler that could
// ever slip into the page (defence in depth; names are inserted as text anyway).
std::string script_nonce() {
  std::random_device random;
  uint32_t words[4];
  for (uint32_t& w : words) w = random();
  return base64_encode(words, sizeof(words));
}

}  // namespace

std::string base64_encode(const void* data, size_t bytes) {
  static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  const auto* p = static_cast<const unsigned char*>(data);
  std::string out;
  out.reserve((bytes + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 3 <= bytes; i += 3) {
    const uint32_t v = (uint32_t{p[i]} << 16) | (uint32_t{p[i + 1]} << 8) | p[i + 2];
    out += kAlphabet[v >> 18];
    out += kAlphabet[(v >> 12) & 63];
    out += kAlphabet[(v >> 6) & 63];
    out += kAlphabet[v & 63];
  }
  if (i < bytes) {
    uint32_t v = uint32_t{p[i]} << 16;
    if (i + 1 < bytes) v |= uint32_t{p[i + 1]} << 8;
    out += kAlphabet[v >> 18];
    out += kAlphabet[(v >> 12) & 63];
    out += i + 1 < bytes ? kAlphabet[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

std::string render_view_data(const Trace& trace, const view::ViewModel& vm) {
  std::string out;
  Json j(out);
  const view::Timeline& tl = vm.timeline;
  j.open('{');
  j.field("schema_version", 1);
  j.field("tool", "tracedoc view");
  j.field("input", vm.input);
  j.field("format", vm.format);
  j.field("producer", vm.producer);
  j.field("origin_ns", std::to_string(tl.start));  // absolute, as text: past 2^53 for epoch clocks
  j.field("span_ns", static_cast<double>(sat_sub(tl.end, tl.start)));
  j.field("events", tl.events);
  j.field("clipped_depth", tl.clipped_depth);
  j.field("colors", vm.colors.name());
  j.key("view");
  j.open('{');
  j.field("start", rel(vm.view_start, tl.start));
  j.field("end", rel(vm.view_end, tl.start));
  j.close('}');
  j.key("raw");
  j.open('{');
  j.field("start", rel(vm.lod.raw.start, tl.start));
  j.field("end", rel(vm.lod.raw.end, tl.start));
  j.field("events", vm.lod.raw.events);
  j.flag("complete", vm.lod.raw.complete);
  j.close('}');
  j.key("categories");
  j.open('[');
  for (size_t c = 0; c < view::kCategoryCount; ++c) j.str(view::category_label(static_cast<view::Category>(c)));
  j.close(']');
  j.key("palette");
  j.open('[');
  std::vector<int64_t> used(vm.colors.palette().size(), 0);
  for (const Track& t : tl.tracks) {
    for (const TrackItem& item : t.items) {
      if (item.color < used.size()) used[item.color] += 1;
    }
  }
  for (size_t i = 0; i < vm.colors.palette().size(); ++i) {
    const view::Swatch& s = vm.colors.palette()[i];
    j.open('{');
    j.field("color", view::rgb_hex(s.rgb));
    j.field("label", s.label);
    j.field("events", used[i]);
    j.close('}');
  }
  j.close(']');
  j.key("names");
  j.open('[');
  for (const std::string& n : tl.names) j.str(n);
  j.close(']');
  j.key("groups");
  j.open('[');
  for (const view::TrackGroup& g : tl.groups) j.str(g.label);
  j.close(']');
  DetailTable details;
  write_tracks(j, trace, vm, details);
  j.key("details");
  j.open('[');
  for (const std::string& d : details.texts()) j.str(d);
  j.close(']');
  write_lod(j, vm);
  write_samples(j, vm);
  write_panels(j, vm);
  j.close('}');
  return out;
}

std::string render_view_html(const Trace& trace, const view::ViewModel& vm) {
  return fill_template(view_assets::viewer_html, {
                                                     {"TITLE", escape_markup("tracedoc view: " + vm.input)},
                                                     {"NONCE", script_nonce()},
                                                     {"CSS", view_assets::viewer_css},
                                                     {"JS", view_assets::viewer_js},
                                                     {"DATA", escape_for_script(render_view_data(trace, vm))},
                                                 });
}

}  // namespace tracedoc
