#include "analysis/nsys_stats/um_openmp_reports.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <numeric>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "analysis/checked_math.h"
#include "analysis/grouped_values.h"
#include "analysis/statistics.h"

namespace tracedoc::nsys_stats {

namespace {

// ---------------------------------------------------------------------------------------------
// um_sum
//
// nsys's query (um_sum.py) aggregates per address: CPU faults (count of rows), GPU faults (sum of
// numberOfPageFaults), Unified DtoH and HtoD migrations (sum of bytes and of durations). It pairs
// the fault summaries into PageFaults (CPU addresses, then GPU-only ones) and the migration
// summaries into Migrations (DtoH addresses, then HtoD-only ones), each in address order as GROUP BY
// leaves them, joins the two, and sorts by throughput. Addresses are SQL values: NULL (kNoValue
// here) forms a group of its own but never matches in a join.

constexpr int64_t kNullAddress = kNoValue;
constexpr int64_t kDefaultRowLimit = 10;

// A number as SQLite computes it: NULL, an integer, or a real (integer arithmetic that overflows
// continues in floating point).
struct SqlNumber {
  enum class Kind : uint8_t { kNull, kInt, kReal };
  Kind kind = Kind::kNull;
  int64_t i = 0;
  double d = 0;

  static SqlNumber integer(int64_t v) { return {Kind::kInt, v, 0}; }
  static SqlNumber real(double v) { return {Kind::kReal, 0, v}; }
  bool is_null() const { return kind == Kind::kNull; }
  long double value() const { return kind == Kind::kInt ? static_cast<long double>(i) : d; }
  Cell cell() const {
    switch (kind) {
      case Kind::kNull: return Cell::null();
      case Kind::kInt: return Cell::integer(i);
      case Kind::kReal: return Cell::real(d);
    }
    return Cell::null();
  }
};

SqlNumber sql_add(int64_t a, int64_t b) {
  int64_t sum = 0;
  if (__builtin_add_overflow(a, b, &sum)) return SqlNumber::real(static_cast<double>(a) + static_cast<double>(b));
  return SqlNumber::integer(sum);
}

// (bytes) * (1000000000 / (duration)) as the query writes it: integer division (truncating, so
// migrations that took more than a second in all give 0), NULL for a zero duration, and a real when
// the product leaves the 64-bit range.
SqlNumber migration_throughput(const SqlNumber& bytes, const SqlNumber& duration) {
  if (bytes.is_null() || duration.is_null()) return {};
  if (duration.kind == SqlNumber::Kind::kReal) {
    if (duration.d == 0) return {};
    return SqlNumber::real(static_cast<double>(bytes.value() * (1000000000.0L / duration.d)));
  }
  if (duration.i == 0) return {};
  const int64_t per_second = 1000000000 / duration.i;
  if (bytes.kind == SqlNumber::Kind::kReal) return SqlNumber::real(bytes.d * static_cast<double>(per_second));
  int64_t product = 0;
  if (__builtin_mul_overflow(bytes.i, per_second, &product)) {
    return SqlNumber::real(static_cast<double>(bytes.i) * static_cast<double>(per_second));
  }
  return SqlNumber::integer(product);
}

// ORDER BY ... DESC: larger first, NULL last.
bool sorts_before_desc(const SqlNumber& a, const SqlNumber& b) {
  if (a.is_null() || b.is_null()) return !a.is_null() && b.is_null();
  if (a.kind == SqlNumber::Kind::kInt && b.kind == SqlNumber::Kind::kInt) return a.i > b.i;
  return a.value() > b.value();  // long double holds every int64 exactly
}

// One GROUP BY address group: a count or sum of faults, or transferred bytes and their duration.
struct AddressGroup {
  int64_t address = kNullAddress;
  int64_t value = 0;       // faults, or bytes
  int64_t duration = 0;    // migrations only
  bool has_value = false;  // false: every summed value was NULL (sum() is NULL then)
};

// Groups (address, value, duration) rows by address, in ascending address order (NULL first), as
// GROUP BY returns them.
template <typename AddRows>
std::vector<AddressGroup> group_by_address(AddRows&& add_rows) {
  std::vector<AddressGroup> rows;
  add_rows(rows);
  std::sort(rows.begin(), rows.end(),
            [](const AddressGroup& a, const AddressGroup& b) { return a.address < b.address; });
  std::vector<AddressGroup> groups;
  for (const AddressGroup& r : rows) {
    if (groups.empty() || groups.back().address != r.address) {
      groups.push_back({r.address, 0, 0, false});
    }
    AddressGroup& g = groups.back();
    // sat_add: SQLite's sum() fails past int64, which only damaged files reach (checked_math.h).
    if (r.has_value) {
      g.value = sat_add(g.value, r.value);
      g.has_value = true;
    }
    g.duration = sat_add(g.duration, r.duration);
  }
  return groups;
}

// Equality lookup of a joined address in one summary (NULL matches nothing).
class AddressIndex {
 public:
  explicit AddressIndex(const std::vector<AddressGroup>& groups) {
    for (size_t i = 0; i < groups.size(); ++i) {
      if (groups[i].address != kNullAddress) index_.emplace(groups[i].address, &groups[i]);
    }
  }
  const AddressGroup* find(int64_t address) const {
    if (address == kNullAddress) return nullptr;
    auto it = index_.find(address);
    return it == index_.end() ? nullptr : it->second;
  }

 private:
  std::unordered_map<int64_t, const AddressGroup*> index_;
};

struct FaultRow {
  int64_t address;
  const AddressGroup* cpu;  // nullptr: NULL
  const AddressGroup* gpu;
};

struct MigrationRow {
  int64_t address;
  const AddressGroup* dtoh;  // nullptr: NULL
  const AddressGroup* htod;
  SqlNumber throughput;
};

struct UmRow {
  int64_t address;
  const FaultRow* faults;          // nullptr: no fault on the address
  const MigrationRow* migrations;  // nullptr: no migration of the address
  SqlNumber throughput() const { return migrations ? migrations->throughput : SqlNumber{}; }
};

// FULL OUTER JOIN of two address summaries, spelled as nsys spells it: every row of `first` with its
// match in `second`, then the rows of `second` that match nothing in `first`.
template <typename Make>
void outer_join(const std::vector<AddressGroup>& first, const std::vector<AddressGroup>& second, Make&& make) {
  const AddressIndex second_index(second), first_index(first);
  for (const AddressGroup& a : first) make(a.address, &a, second_index.find(a.address));
  for (const AddressGroup& b : second) {
    if (!first_index.find(b.address)) make(b.address, nullptr, &b);
  }
}

Result<int64_t> row_limit(const ReportArgs& args) {
  int64_t limit = kDefaultRowLimit;
  for (const std::string& arg : args.args) {
    if (!arg.starts_with("rows=")) continue;
    std::string_view text = std::string_view(arg).substr(5);
    if (!text.empty() && text.front() == '+') text.remove_prefix(1);
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), limit);
    if (ec != std::errc() || end != text.data() + text.size() || text.empty()) {
      return UsageError(fmt::format("um_sum: rows must be an integer, got '{}'", arg.substr(5)));
    }
  }
  return limit;
}

// nsys prints `addr_uint` columns as 0x-prefixed upper-case hex; a value with the top bit set (a
// negative SQLite integer) comes out in decimal (-4096 for 0xFFFFFFFFFFFFF000).
void format_address(int64_t address, std::string& out) {
  out = address < 0 ? fmt::format("{}", address) : fmt::format("0x{:X}", address);
}

Cell count_or_null(const AddressGroup* g) { return g && g->has_value ? Cell::integer(g->value) : Cell::null(); }

}  // namespace

Status um_sum(const Trace& trace, const ReportArgs& args, RowSink& sink) {
  // nsys checks the tables in this order and reports the first one missing.
  if (!trace.source.has_table("CUPTI_ACTIVITY_KIND_MEMCPY")) {
    return no_data(trace, "does not contain CUDA memory transfers data.");
  }
  if (!trace.source.has_table("CUDA_UM_CPU_PAGE_FAULT_EVENTS")) {
    return no_data(trace, "does not contain CUDA Unified Memory CPU page faults data.");
  }
  if (!trace.source.has_table("CUDA_UM_GPU_PAGE_FAULT_EVENTS")) {
    return no_data(trace, "does not contain CUDA Unified Memory GPU page faults data.");
  }
  TRACEDOC_ASSIGN_OR_RETURN(auto limit, row_limit(args));

  const UnifiedMemoryTable& um = trace.unified_memory;
  const auto cpu = group_by_address([&](std::vector<AddressGroup>& rows) {
    for (int64_t address : um.cpu_faults.address) rows.push_back({address, 1, 0, true});
  });
  const auto gpu = group_by_address([&](std::vector<AddressGroup>& rows) {
    const auto& g = um.gpu_faults;
    for (size_t i = 0; i < g.size(); ++i) {
      rows.push_back(
          {g.address[i], g.fault_count[i] == kNoValue ? 0 : g.fault_count[i], 0, g.fault_count[i] != kNoValue});
    }
  });
  auto migrations_of = [&](CopyKind kind) {
    return group_by_address([&](std::vector<AddressGroup>& rows) {
      const auto& m = um.migrations;
      for (size_t i = 0; i < m.size(); ++i) {
        if (m.copy_kind[i] == static_cast<uint8_t>(kind)) {
          // sat_sub: no overflow on damaged times (checked_math.h).
          rows.push_back({m.virtual_address[i], m.bytes[i], sat_sub(m.end[i], m.start[i]), true});
        }
      }
    });
  };
  const auto dtoh = migrations_of(CopyKind::kUvmDtoH);
  const auto htod = migrations_of(CopyKind::kUvmHtoD);

  std::vector<FaultRow> faults;
  outer_join(cpu, gpu, [&](int64_t address, const AddressGroup* c, const AddressGroup* g) {
    faults.push_back({address, c, g});
  });
  std::vector<MigrationRow> migrations;
  outer_join(dtoh, htod, [&](int64_t address, const AddressGroup* d, const AddressGroup* h) {
    // IFNULL(D2H, 0) + IFNULL(H2D, 0), and the same for the durations.
    const SqlNumber bytes = sql_add(d ? d->value : 0, h ? h->value : 0);
    const SqlNumber duration = sql_add(d ? d->duration : 0, h ? h->duration : 0);
    migrations.push_back({address, d, h, migration_throughput(bytes, duration)});
  });

  // PageFaults LEFT JOIN Migrations, then the migrated addresses without faults.
  std::vector<UmRow> rows;
  {
    std::unordered_map<int64_t, const MigrationRow*> migration_of;
    for (const MigrationRow& m : migrations) {
      if (m.address != kNullAddress) migration_of.emplace(m.address, &m);
    }
    std::unordered_set<int64_t> faulted;
    for (const FaultRow& f : faults) {
      const MigrationRow* m = nullptr;
      if (f.address != kNullAddress) {
        faulted.insert(f.address);
        auto it = migration_of.find(f.address);
        if (it != migration_of.end()) m = it->second;
      }
      rows.push_back({f.address, &f, m});
    }
    for (const MigrationRow& m : migrations) {
      if (m.address == kNullAddress || !faulted.count(m.address)) rows.push_back({m.address, nullptr, &m});
    }
  }
  // ORDER BY throughput DESC: SQLite sorts each half of the UNION ALL with ties in row order and
  // merges them taking the first half's row on ties, i.e. a stable sort of the whole.
  std::stable_sort(rows.begin(), rows.end(),
                   [](const UmRow& a, const UmRow& b) { return sorts_before_desc(a.throughput(), b.throughput()); });
  if (limit >= 0 && rows.size() > static_cast<size_t>(limit)) rows.resize(static_cast<size_t>(limit));

  sink.begin({{"Virtual Address", Unit::kNone},
              {"HtoD Migration size", Unit::kMemB},
              {"DtoH Migration size", Unit::kMemB},
              {"CPU Page Faults", Unit::kNone},
              {" GPU Page Faults", Unit::kNone},  // sic: nsys's column name starts with a space
              {"Migration Throughput", Unit::kThruB}});
  std::string address_text;
  std::vector<Cell> cells;
  for (const UmRow& r : rows) {
    cells.clear();
    if (r.address == kNullAddress) {
      cells.push_back(Cell::null());
    } else {
      format_address(r.address, address_text);
      cells.push_back(Cell::text(address_text));
    }
    cells.push_back(count_or_null(r.migrations ? r.migrations->htod : nullptr));
    cells.push_back(count_or_null(r.migrations ? r.migrations->dtoh : nullptr));
    cells.push_back(count_or_null(r.faults ? r.faults->cpu : nullptr));
    cells.push_back(count_or_null(r.faults ? r.faults->gpu : nullptr));
    cells.push_back(r.throughput().cell());
    sink.row(cells);
  }
  sink.end();
  return Status::Ok();
}

// ---------------------------------------------------------------------------------------------
// openmp_sum
//
// nsys (openmp_sum.py) runs one GROUP BY nameId per OPENMP_EVENT_KIND_* table and unites them, so
// an event name found in two tables (a sync region and its wait) gives two rows. Rows are sorted by
// total time; ties keep the union's order: the tables in nsys's (Python set, i.e. arbitrary) order,
// here their name order, then the name's StringIds id.

namespace {

bool has_openmp_tables(const TraceSource& source) {
  static constexpr std::string_view kPrefix = "OPENMP_EVENT_KIND_";
  for (auto it = source.tables.lower_bound(std::string(kPrefix)); it != source.tables.end(); ++it) {
    if (it->compare(0, kPrefix.size(), kPrefix) != 0) break;
    if (it->size() > kPrefix.size()) return true;
  }
  return false;
}

}  // namespace

Status openmp_sum(const Trace& trace, const ReportArgs& args, RowSink& sink) {
  if (!trace.source.has_table("StringIds")) return no_data(trace, "file does not contain StringIds table.");
  if (!has_openmp_tables(trace.source)) return no_data(trace, "does not contain OpenMP event data.");

  const OpenMpEventTable& o = trace.openmp;
  GroupedValues groups;
  std::vector<int8_t> name_ok(trace.strings.size() + 1, -1);  // cached --filter-name verdict per name
  for (size_t i = 0; i < o.size(); ++i) {
    const StrId name = o.name[i];
    int8_t& ok = name_ok[name == kNoStr ? trace.strings.size() : name];
    if (ok < 0) ok = args.name_ok(name == kNoStr ? std::string_view() : trace.str(name)) ? 1 : 0;
    if (!ok) continue;
    const uint64_t key = (static_cast<uint64_t>(o.source[i]) << 32) | name;
    groups.add(groups.group_of(key), sat_sub(o.end[i], o.start[i]));  // no overflow on damaged times
  }
  const auto stats = groups.summarize_all();
  std::vector<uint32_t> order(stats.size());
  std::iota(order.begin(), order.end(), 0u);
  // Key order is (source table, name id); names without a string (kNoStr) sort last in their table.
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    if (stats[a].total != stats[b].total) return stats[a].total > stats[b].total;
    return groups.key(a) < groups.key(b);
  });
  int64_t grand_total = 0;
  for (const auto& s : stats) grand_total = sat_add(grand_total, s.total);  // no overflow on damaged files

  std::vector<ColumnSpec> columns = time_summary_columns("Count");
  columns.push_back({"Name", Unit::kNone});
  sink.begin(columns);
  std::vector<Cell> row;
  for (uint32_t g : order) {
    const SummaryStats& s = stats[g];
    const auto name = static_cast<StrId>(groups.key(g) & 0xFFFFFFFFu);
    row.clear();
    push_time_summary_cells(row, s, grand_total);
    row.push_back(name == kNoStr ? Cell::null() : Cell::text(trace.str(name)));
    sink.row(row);
  }
  sink.end();
  return Status::Ok();
}

}  // namespace tracedoc::nsys_stats
