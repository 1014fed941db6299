#include "ingest/ncu_report_reader.h"

#include <fmt/format.h>
#include <zstd.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "common/input_file.h"
#include "common/memory_budget.h"
#include "ingest/protobuf_wire.h"

namespace tracedoc {

namespace {

// The wire format's names, qualified: a `using` here would reach every file of a unity build.
namespace pb = protobuf;

constexpr std::string_view kMagic{"NVR\0", 4};
constexpr std::string_view kZstdMagic{"\x28\xB5\x2F\xFD", 4};
constexpr uint32_t kKnownVersion = 7;                 // every public report: ncu 2020.3 to 2025.1
constexpr uint64_t kMaxInflated = uint64_t{1} << 36;  // 64 GiB: a zstd bomb, not a report

// Walks a message's fields, handing each to `on` (false: a known field of the wrong shape). False
// when the message is corrupt or `on` refused a field.
template <typename OnField>
bool walk(std::string_view bytes, OnField&& on) {
  pb::Message m(bytes);
  pb::Field f;
  while (m.next(f)) {
    if (!on(f)) return false;
  }
  return !m.failed();
}

bool is_bytes(const pb::Field& f) { return f.type == pb::WireType::kBytes; }
bool is_varint(const pb::Field& f) { return f.type == pb::WireType::kVarint; }

// MetricValue: one of 1 string, 2 float, 3 double, 4 uint32, 5 uint64.
bool read_value(std::string_view bytes, NcuValue& v) {
  return walk(bytes, [&](const pb::Field& f) {
    switch (f.number) {
      case 1:
        if (!is_bytes(f)) return false;
        v.kind = NcuValue::Kind::kString, v.text.assign(f.bytes);
        return true;
      case 2:
        if (f.type != pb::WireType::kFixed32) return false;
        v.kind = NcuValue::Kind::kFloat, v.real = f.as_float();
        return true;
      case 3:
        if (f.type != pb::WireType::kFixed64) return false;
        v.kind = NcuValue::Kind::kDouble, v.real = f.as_double();
        return true;
      case 4:
        if (!is_varint(f)) return false;
        v.kind = NcuValue::Kind::kUint32, v.integer = static_cast<uint32_t>(f.value);
        return true;
      case 5:
        if (!is_varint(f)) return false;
        v.kind = NcuValue::Kind::kUint64, v.integer = f.value;
        return true;
      default: return true;
    }
  });
}

class ResultReader {
 public:
  explicit ResultReader(int64_t& skipped) : skipped_(skipped) {}

  // ProfileMetricResult: 1 NameId, 2 MetricValue, 3 repeated {1 CorrelationId, 2 ElementValue}.
  bool metric(std::string_view bytes, NcuMetric& m) {
    return walk(bytes, [&](const pb::Field& f) {
      switch (f.number) {
        case 1:
          if (!is_varint(f)) return false;
          m.name = static_cast<uint32_t>(f.value);
          return true;
        case 2: return is_bytes(f) && read_value(f.bytes, m.value);
        case 3: {
          if (!is_bytes(f)) return false;
          // Named references, not a structured binding: clang before 16 cannot capture one in a lambda.
          auto& instance = m.instances.emplace_back();
          NcuValue &id = instance.first, &value = instance.second;
          return walk(f.bytes, [&](const pb::Field& g) {
            if (g.number == 1) return is_bytes(g) && read_value(g.bytes, id);
            if (g.number == 2) return is_bytes(g) && read_value(g.bytes, value);
            return true;
          });
        }
        default: ++skipped_; return true;
      }
    });
  }

  // RuleResult: 1 Identifier, 2 DisplayName, 3 Body {1 repeated Items {1 Message {1 text, 2 type}}},
  // 4 SectionIdentifier.
  bool rule(std::string_view bytes, NcuRuleResult& r) {
    return walk(bytes, [&](const pb::Field& f) {
      switch (f.number) {
        case 1: return is_bytes(f) && (r.identifier.assign(f.bytes), true);
        case 2: return is_bytes(f) && (r.display_name.assign(f.bytes), true);
        case 4: return is_bytes(f) && (r.section.assign(f.bytes), true);
        case 3:
          return is_bytes(f) && walk(f.bytes, [&](const pb::Field& item) {
                   if (item.number != 1) return true;
                   return is_bytes(item) && walk(item.bytes, [&](const pb::Field& part) {
                            if (part.number != 1) return true;  // tables, charts, proposals
                            if (!is_bytes(part)) return false;
                            NcuRuleMessage& msg = r.messages.emplace_back();
                            return walk(part.bytes, [&](const pb::Field& x) {
                              if (x.number == 1) return is_bytes(x) && (msg.text.assign(x.bytes), true);
                              if (x.number == 2)
                                return is_varint(x) && (msg.type = static_cast<uint32_t>(x.value), true);
                              return true;
                            });
                          });
                 });
        default: ++skipped_; return true;
      }
    });
  }

  // NvtxState: 1 Domains {1 Id, 2 Name}, 2 Threads {1 thread id, 2 per-domain state {1 domain id,
  // then the open ranges}}, 3 StartEndDomains {1 domain id, then the open ranges}, 4 DefaultDomain.
  // The range entries are counted (nvtx_open_entries), not decoded: no report seen holds one.
  bool nvtx(std::string_view bytes, NcuResult& r) {
    auto ranges_after_domain_id = [&](const pb::Field& state) {
      return is_bytes(state) && walk(state.bytes, [&](const pb::Field& x) {
               if (x.number != 1) ++r.nvtx_open_entries;
               return true;
             });
    };
    return walk(bytes, [&](const pb::Field& f) {
      switch (f.number) {
        case 1: {
          if (!is_bytes(f)) return false;
          auto& domain = r.nvtx_domains.emplace_back();
          return walk(f.bytes, [&](const pb::Field& x) {
            if (x.number == 1) return is_varint(x) && (domain.first = x.value, true);
            if (x.number == 2) return is_bytes(x) && (domain.second.assign(x.bytes), true);
            return true;  // registered strings, name tables
          });
        }
        case 2:
          return is_bytes(f) && walk(f.bytes, [&](const pb::Field& x) {
                   if (x.number == 1) return is_varint(x) && (r.nvtx_thread = x.value, true);
                   if (x.number == 2) return ranges_after_domain_id(x);
                   return true;
                 });
        case 3: return ranges_after_domain_id(f);
        case 4: return true;
        default: ++skipped_; return true;
      }
    });
  }

  // ProfileResult: one profiled launch.
  bool result(std::string_view bytes, NcuResult& r) {
    auto uint3 = [](const pb::Field& f, std::array<uint64_t, 3>& xyz) {
      return is_bytes(f) && walk(f.bytes, [&](const pb::Field& g) {
               if (g.number < 1 || g.number > 3) return true;
               if (!is_varint(g)) return false;
               xyz[g.number - 1] = g.value;
               return true;
             });
    };
    const bool ok = walk(bytes, [&](const pb::Field& f) {
      switch (f.number) {
        case 1: return is_varint(f) && (r.thread_id = static_cast<uint32_t>(f.value), true);
        case 2: return is_varint(f) && (r.api_call_id = f.value, true);
        case 4: return is_varint(f) && (r.kernel_id = f.value, true);
        case 5: return is_bytes(f) && (r.mangled_name.assign(f.bytes), true);
        case 6: return is_bytes(f) && (r.function_name.assign(f.bytes), true);
        case 7: return is_bytes(f) && (r.demangled_name.assign(f.bytes), true);
        case 10: return uint3(f, r.grid);
        case 11: return uint3(f, r.block);
        case 13: return is_bytes(f) && metric(f.bytes, r.metrics.emplace_back());
        case 14: return is_varint(f) && (r.creation_time = f.value, true);
        case 19: return is_bytes(f) && rule(f.bytes, r.rules.emplace_back());
        case 22: return is_varint(f) && (r.context = static_cast<uint32_t>(f.value), true);
        case 23: return is_varint(f) && (r.stream = static_cast<uint32_t>(f.value), true);
        case 21: return is_bytes(f) && nvtx(f.bytes, r);
        // Known, not read: program handle, work dimensions and offset, comments, source, API,
        // sections (ncu's layout of the metrics), section comments, unsupported device, series.
        case 3:
        case 8:
        case 9:
        case 12:
        case 15:
        case 16:
        case 17:
        case 18:
        case 20:
        case 24: return true;
        default: ++skipped_; return true;
      }
    });
    std::stable_sort(r.metrics.begin(), r.metrics.end(),
                     [](const NcuMetric& a, const NcuMetric& b) { return a.name < b.name; });
    return ok;
  }

 private:
  int64_t& skipped_;
};

// ReportSessionDetails: the tool's version (8 VersionInfo) and the devices (6 DeviceAttributes
// {1 ID, 2 Name, 3 repeated {1 Name, 2 Value}}). Several blocks carry details; a device is taken once.
bool read_session(std::string_view bytes, NcuReport& report) {
  return walk(bytes, [&](const pb::Field& f) {
    if (f.number == 8) {
      if (!is_bytes(f)) return false;
      std::string provider, version;
      const bool ok = walk(f.bytes, [&](const pb::Field& g) {
        if (g.number == 1) return is_bytes(g) && (provider.assign(g.bytes), true);
        if (g.number == 2) return is_bytes(g) && (version.assign(g.bytes), true);
        return true;
      });
      if (provider == "Nsight Compute Target" && report.tool_version.empty()) report.tool_version = version;
      return ok;
    }
    if (f.number == 6) {
      if (!is_bytes(f)) return false;
      NcuDevice d;
      const bool ok = walk(f.bytes, [&](const pb::Field& g) {
        if (g.number == 1) return is_varint(g) && (d.id = static_cast<uint32_t>(g.value), true);
        if (g.number == 2) return is_bytes(g) && (d.name.assign(g.bytes), true);
        if (g.number != 3) return true;
        if (!is_bytes(g)) return false;
        auto& attribute = d.attributes.emplace_back();
        std::string& name = attribute.first;
        NcuValue& value = attribute.second;
        return walk(g.bytes, [&](const pb::Field& x) {
          if (x.number == 1) return is_bytes(x) && (name.assign(x.bytes), true);
          if (x.number == 2) return is_bytes(x) && read_value(x.bytes, value);
          return true;
        });
      });
      if (ok && report.device(d.id) == nullptr) report.devices.push_back(std::move(d));
      return ok;
    }
    return true;
  });
}

struct ReportHeader {
  uint32_t version = 0;
  size_t size = 0;  // the magic and the FileHeader message: where the first block starts
};

// The magic and the FileHeader {1 version}, checked: another format or version is refused before
// the body is read. `more_to_come`: the bytes are a start of the file, and a header cut short by
// their end is not yet an error (the result is then a header of size 0).
Result<ReportHeader> read_header(std::string_view bytes, const std::string& name, bool more_to_come = false) {
  if (bytes.size() < kMagic.size() && more_to_come && kMagic.starts_with(bytes)) return ReportHeader{};
  if (bytes.substr(0, kMagic.size()) != kMagic)
    return BadInput(fmt::format("{}: not an Nsight Compute report (no NVR header)", name));
  auto cut = [&](std::string_view what) -> Result<ReportHeader> {
    if (more_to_come) return ReportHeader{};
    return BadInput(
        fmt::format("{}: {} at byte {} (a cut or corrupt Nsight Compute report)", name, what, kMagic.size()));
  };
  if (bytes.size() < kMagic.size() + 4) return cut("file header cut short");
  uint32_t n = 0;
  std::memcpy(&n, bytes.data() + kMagic.size(), 4);
  constexpr uint32_t kMaxHeader = 1 << 20;  // a version and a few flags: a larger one is not a header
  if (n > kMaxHeader) {
    return BadInput(fmt::format("{}: a file header of {} bytes at byte {} (a corrupt Nsight Compute report)", name, n,
                                kMagic.size()));
  }
  if (bytes.size() - kMagic.size() - 4 < n) return cut("file header cut short");
  ReportHeader h;
  h.size = kMagic.size() + 4 + n;
  const bool ok = walk(bytes.substr(kMagic.size() + 4, n), [&](const pb::Field& f) {
    if (f.number == 1) return is_varint(f) && (h.version = static_cast<uint32_t>(f.value), true);
    return true;
  });
  if (!ok) {
    return BadInput(
        fmt::format("{}: corrupt file header at byte {} (a cut or corrupt Nsight Compute report)", name, h.size));
  }
  if (h.version != kKnownVersion) {
    return BadInput(fmt::format("{}: Nsight Compute report format version {} (this tracedoc reads version {})", name,
                                h.version, kKnownVersion));
  }
  return h;
}

struct BlockHeader {
  uint64_t sources = 0, results = 0, range_results = 0, payload = 0;
  uint32_t process_id = 0;
};

class ContainerReader {
 public:
  ContainerReader(std::string_view bytes, const std::string& name, NcuReport& report)
      : bytes_(bytes), name_(name), report_(report) {}

  Status read() {
    TRACEDOC_ASSIGN_OR_RETURN(const ReportHeader header, read_header(bytes_, name_));
    report_.version = header.version;
    pos_ = header.size;
    while (pos_ < bytes_.size()) TRACEDOC_RETURN_IF_ERROR(block());
    return check_names();
  }

 private:
  Status corrupt(std::string_view what) const {
    return BadInput(fmt::format("{}: {} at byte {} (a cut or corrupt Nsight Compute report)", name_, what, pos_));
  }

  // A u32 length and that many bytes, within `end`.
  bool message(std::string_view& out, size_t end = std::string_view::npos) {
    end = std::min(end, bytes_.size());
    if (pos_ + 4 > end) return false;
    uint32_t n = 0;
    std::memcpy(&n, bytes_.data() + pos_, 4);  // little-endian, as every machine tracedoc runs on
    if (n > end - pos_ - 4) return false;
    out = bytes_.substr(pos_ + 4, n);
    pos_ += 4 + n;
    return true;
  }

  Status block() {
    std::string_view header_bytes;
    if (!message(header_bytes)) return corrupt("block header cut short");
    BlockHeader h;
    const bool ok = walk(header_bytes, [&](const pb::Field& f) {
      switch (f.number) {
        case 1: return is_varint(f) && (h.sources = f.value, true);
        case 2: return is_varint(f) && (h.results = f.value, true);
        case 3: return is_bytes(f) && read_session(f.bytes, report_);
        case 4:
          return is_bytes(f) && walk(f.bytes, [&](const pb::Field& g) {
                   if (g.number == 1) return is_bytes(g) && (report_.metric_names.emplace_back(g.bytes), true);
                   return true;
                 });
        case 5: return is_varint(f) && (h.payload = f.value, true);
        case 6:
          return is_bytes(f) && walk(f.bytes, [&](const pb::Field& g) {
                   if (g.number == 1) return is_varint(g) && (h.process_id = static_cast<uint32_t>(g.value), true);
                   return true;
                 });
        case 7: return is_varint(f) && (h.range_results = f.value, true);
        default: ++report_.skipped_fields; return true;
      }
    });
    if (!ok) return corrupt("corrupt block header");
    if (h.payload > bytes_.size() - pos_) return corrupt("block payload cut short");
    const size_t end = pos_ + h.payload;
    std::string_view item;
    for (uint64_t i = 0; i < h.sources; ++i) {
      if (!message(item, end)) return corrupt("kernel source cut short");
    }
    for (uint64_t i = 0; i < h.results; ++i) {
      if (!message(item, end)) return corrupt("profile result cut short");
      NcuResult& r = report_.results.emplace_back();
      r.process_id = h.process_id;
      if (!ResultReader(report_.skipped_fields).result(item, r)) return corrupt("corrupt profile result");
    }
    for (uint64_t i = 0; i < h.range_results; ++i) {
      if (!message(item, end)) return corrupt("range result cut short");
      ++report_.skipped_fields;  // range results (ncu --replay-mode range) are not read yet
    }
    if (pos_ != end) return corrupt("block payload of the wrong size");
    return Status::Ok();
  }

  // Every metric's name is in the string table (read whole by now: it may come in any block).
  Status check_names() {
    for (size_t i = 0; i < report_.metric_names.size(); ++i)
      report_.name_index.emplace(report_.metric_names[i], static_cast<uint32_t>(i));
    for (const NcuResult& r : report_.results) {
      for (const NcuMetric& m : r.metrics) {
        if (m.name >= report_.metric_names.size()) {
          return BadInput(fmt::format("{}: a metric of {} names string {} of a table of {} (a corrupt report)", name_,
                                      r.name(), m.name, report_.metric_names.size()));
        }
      }
    }
    drop_unusable_values(report_);
    return Status::Ok();
  }

  std::string_view bytes_;
  const std::string& name_;
  NcuReport& report_;
  size_t pos_ = 0;
};

// A report's bytes as they arrive, inflated when they are zstd's. The header is checked as soon as
// it has arrived, so a file of another format or version is refused before the rest is read or
// inflated, and the memory limit is checked as the bytes grow: a small .ncu-repz can inflate to
// gigabytes.
class ReportBytes {
 public:
  explicit ReportBytes(const std::string& name) : name_(name) {}

  // False once the bytes are refused; status() says why.
  bool add(std::string_view chunk) {
    if (!status_.ok()) return false;
    if (first_) {
      first_ = false;
      zstd_ = chunk.substr(0, kZstdMagic.size()) == kZstdMagic;
      if (zstd_) {
        ctx_.reset(ZSTD_createDCtx());
        if (!ctx_) return fail(Status(ErrorCode::kInternal, "zstd: out of memory"));
      }
    }
    if (!zstd_) return append(chunk);
    ZSTD_inBuffer input{chunk.data(), chunk.size(), 0};
    while (input.pos < input.size) {
      ZSTD_outBuffer output{buffer_.data(), buffer_.size(), 0};
      pending_ = ZSTD_decompressStream(ctx_.get(), &output, &input);
      if (ZSTD_isError(pending_))
        return fail(BadInput(fmt::format("{}: zstd: {}", name_, ZSTD_getErrorName(pending_))));
      if (!append(std::string_view(buffer_.data(), output.pos))) return false;
    }
    return true;
  }

  // The whole report, once every chunk is in.
  Result<std::string> finish() {
    if (!status_.ok()) return status_;
    if (zstd_) {
      // Output zstd still holds once the input has all been given (0: the frame is complete
      // and flushed; asked again then, zstd would wait for another frame).
      while (pending_ != 0) {
        ZSTD_inBuffer input{nullptr, 0, 0};
        ZSTD_outBuffer output{buffer_.data(), buffer_.size(), 0};
        pending_ = ZSTD_decompressStream(ctx_.get(), &output, &input);
        if (ZSTD_isError(pending_)) return BadInput(fmt::format("{}: zstd: {}", name_, ZSTD_getErrorName(pending_)));
        if (!append(std::string_view(buffer_.data(), output.pos))) return status_;
        if (output.pos == 0) break;  // nothing more without more input: the stream was cut
      }
      if (pending_ != 0) return BadInput(fmt::format("{}: zstd stream cut short", name_));
    }
    TRACEDOC_RETURN_IF_ERROR(read_header(bytes_, name_).status());  // a file shorter than a header
    return std::move(bytes_);
  }

 private:
  bool fail(Status st) {
    status_ = std::move(st);
    return false;
  }

  bool append(std::string_view more) {
    if (more.empty()) return true;
    if (bytes_.size() + more.size() > kMaxInflated)
      return fail(BadInput(fmt::format("{}: inflates past 64 GiB", name_)));
    if (bytes_.size() + more.size() > bytes_.capacity()) {
      const size_t grown = std::max(bytes_.capacity() * 2, bytes_.size() + more.size() + (size_t{1} << 20));
      if (Status st = MemoryBudget::check(name_, grown); !st.ok()) return fail(std::move(st));
      bytes_.reserve(grown);
    }
    bytes_.append(more);
    if (!header_checked_) {
      auto header = read_header(bytes_, name_, true);
      if (!header.ok()) return fail(header.status());
      header_checked_ = header->size > 0;
    }
    return true;
  }

  const std::string& name_;
  std::string bytes_;
  Status status_;
  bool first_ = true, zstd_ = false, header_checked_ = false;
  std::unique_ptr<ZSTD_DCtx, size_t (*)(ZSTD_DCtx*)> ctx_{nullptr, ZSTD_freeDCtx};
  std::vector<char> buffer_ = std::vector<char>(ZSTD_DStreamOutSize());
  size_t pending_ = 0;
};

Result<NcuReport> parse_report(std::string_view bytes, const std::string& name) {
  NcuReport report;
  report.path = name;
  TRACEDOC_RETURN_IF_ERROR(ContainerReader(bytes, name, report).read());
  return report;
}

}  // namespace

bool is_ncu_report_bytes(std::string_view bytes) {
  const std::string_view magic = bytes.substr(0, 4);
  return magic == kMagic || magic == kZstdMagic;
}

Result<NcuReport> read_ncu_report_bytes(std::string_view bytes, const std::string& name) {
  ReportBytes report(name);
  report.add(bytes);
  TRACEDOC_ASSIGN_OR_RETURN(const std::string whole, report.finish());
  return parse_report(whole, name);
}

Result<NcuReport> read_ncu_report(const std::string& path) {
  MemoryBudget::set_subject(path);
  ReportBytes report(path);
  TRACEDOC_RETURN_IF_ERROR(read_file_chunks(path, [&](std::string_view chunk) { return report.add(chunk); }));
  TRACEDOC_ASSIGN_OR_RETURN(const std::string whole, report.finish());
  return parse_report(whole, path);
}

}  // namespace tracedoc
