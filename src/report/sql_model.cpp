#include "report/sql_model.h"

#include <fmt/format.h>

#include <string>
#include <string_view>

#include "analysis/checked_math.h"
#include "analysis/gpu_memory.h"
#include "analysis/steps.h"
#include "report/sqlite_insert.h"

namespace tracedoc {

namespace {

constexpr const char* kSchema = R"SQL(
CREATE TABLE kernels (start_ns INTEGER, end_ns INTEGER, duration_ns INTEGER, rank INTEGER, pid INTEGER,
  device INTEGER, stream INTEGER, correlation INTEGER, name TEXT, short_name TEXT, grid_x INTEGER,
  grid_y INTEGER, grid_z INTEGER, block_x INTEGER, block_y INTEGER, block_z INTEGER, registers INTEGER,
  static_smem INTEGER, dynamic_smem INTEGER);
CREATE TABLE memcpy (start_ns INTEGER, end_ns INTEGER, duration_ns INTEGER, rank INTEGER, pid INTEGER,
  device INTEGER, stream INTEGER, correlation INTEGER, bytes INTEGER, kind TEXT, src_kind TEXT, dst_kind TEXT);
CREATE TABLE memset (start_ns INTEGER, end_ns INTEGER, duration_ns INTEGER, rank INTEGER, pid INTEGER,
  device INTEGER, stream INTEGER, correlation INTEGER, bytes INTEGER, value INTEGER);
CREATE TABLE api (start_ns INTEGER, end_ns INTEGER, duration_ns INTEGER, rank INTEGER, pid INTEGER,
  tid INTEGER, correlation INTEGER, name TEXT, return_value INTEGER);
CREATE TABLE ranges (start_ns INTEGER, end_ns INTEGER, duration_ns INTEGER, rank INTEGER, pid INTEGER,
  tid INTEGER, name TEXT);
CREATE TABLE ops (start_ns INTEGER, end_ns INTEGER, duration_ns INTEGER, rank INTEGER, pid INTEGER,
  tid INTEGER, name TEXT, input_dims TEXT, external_id INTEGER);
CREATE TABLE steps (step INTEGER, rank INTEGER, pid INTEGER, start_ns INTEGER, end_ns INTEGER,
  duration_ns INTEGER, name TEXT, source TEXT);
CREATE TABLE memory (time_ns INTEGER, rank INTEGER, pid INTEGER, device INTEGER, delta_bytes INTEGER,
  allocated_bytes INTEGER);
CREATE TABLE findings (id TEXT, severity TEXT, confidence REAL, scope TEXT, title TEXT, savings_ns INTEGER,
  savings_share REAL);
)SQL";

// INSERT INTO table VALUES (?, ...).
std::string insert_into(const char* table, int columns) {
  return fmt::format("INSERT INTO {} VALUES ({})", table, placeholders(columns));
}

}  // namespace

Status load_sql_model(const Trace& tr, const diagnose::Diagnosis* diagnosis, sqlite3* db) {
  if (sqlite3_exec(db, kSchema, nullptr, nullptr, nullptr) != SQLITE_OK || sqlite3_exec(db, "BEGIN", nullptr, nullptr, nullptr) != SQLITE_OK) {
    return IoError(fmt::format("cannot create the SQL tables: {}", sqlite3_errmsg(db)));
  }
  bool ok = true;
  std::string why;  // the first failed insert's reason
  const auto failed = [&](const SqlInsert& ins) {
    if (why.empty()) why = ins.error();
    return false;
  };
  const auto rank = [&](SqlInsert& ins, int64_t global_id) -> SqlInsert& {
    const int64_t r = tr.rank_of(global_id);
    return r < 0 ? ins.null() : ins.i(r);
  };
  const auto span = [](SqlInsert& ins, TimeNs start, TimeNs end) -> SqlInsert& {
    ins.maybe(start, kNoTime).maybe(end, kNoTime);
    return start == kNoTime || end == kNoTime ? ins.null() : ins.i(sat_sub(end, start));
  };
  const auto text = [&](SqlInsert& ins, StrId id) -> SqlInsert& { return id == kNoStr ? ins.null() : ins.t(tr.str(id)); };
  {
    const KernelTable& k = tr.kernels;
    SqlInsert ins(db, insert_into("kernels", 19));
    for (size_t r = 0; r < k.size(); ++r) {
      span(ins, k.start[r], k.end[r]);
      rank(ins, k.global_pid[r]).i(pid_of(k.global_pid[r])).i(k.device[r]).i(k.stream[r]).maybe(k.correlation[r], kNoValue);
      text(ins, k.name[r]);
      text(ins, k.short_name[r]);
      ins.i(k.grid_x[r]).i(k.grid_y[r]).i(k.grid_z[r]).i(k.block_x[r]).i(k.block_y[r]).i(k.block_z[r])
          .i(k.registers_per_thread[r]).i(k.static_smem[r]).i(k.dynamic_smem[r]);
      ok &= ins.run() || failed(ins);
    }
  }
  {
    const MemcpyTable& m = tr.memcpys;
    SqlInsert ins(db, insert_into("memcpy", 12));
    for (size_t r = 0; r < m.size(); ++r) {
      span(ins, m.start[r], m.end[r]);
      rank(ins, m.global_pid[r]).i(pid_of(m.global_pid[r])).i(m.device[r]).i(m.stream[r]).maybe(m.correlation[r], kNoValue).i(m.bytes[r]);
      ins.t(tr.copy_label(m.copy_kind[r]));
      if (m.src_kind[r] == kNoKind) ins.null(); else ins.t(tr.mem_label(m.src_kind[r]));
      if (m.dst_kind[r] == kNoKind) ins.null(); else ins.t(tr.mem_label(m.dst_kind[r]));
      ok &= ins.run() || failed(ins);
    }
  }
  {
    const MemsetTable& m = tr.memsets;
    SqlInsert ins(db, insert_into("memset", 10));
    for (size_t r = 0; r < m.size(); ++r) {
      span(ins, m.start[r], m.end[r]);
      rank(ins, m.global_pid[r]).i(pid_of(m.global_pid[r])).i(m.device[r]).i(m.stream[r]).maybe(m.correlation[r], kNoValue)
          .i(m.bytes[r]).i(m.value[r]);
      ok &= ins.run() || failed(ins);
    }
  }
  {
    const ApiTable& a = tr.api;
    SqlInsert ins(db, insert_into("api", 9));
    for (size_t r = 0; r < a.size(); ++r) {
      span(ins, a.start[r], a.end[r]);
      rank(ins, a.global_tid[r]).i(pid_of(a.global_tid[r])).i(tid_of(a.global_tid[r])).maybe(a.correlation[r], kNoValue);
      text(ins, a.name[r]).maybe(a.return_value[r], kNoValue);
      ok &= ins.run() || failed(ins);
    }
  }
  {
    const RangeTable& n = tr.ranges;
    SqlInsert ins(db, insert_into("ranges", 7));
    for (size_t r = 0; r < n.size(); ++r) {
      span(ins, n.start[r], n.end[r]);
      rank(ins, n.global_tid[r]).i(pid_of(n.global_tid[r])).i(tid_of(n.global_tid[r]));
      text(ins, n.text[r]);
      ok &= ins.run() || failed(ins);
    }
  }
  {
    const OpTable& o = tr.pytorch.ops;
    SqlInsert ins(db, insert_into("ops", 9));
    for (size_t r = 0; r < o.size(); ++r) {
      span(ins, o.start[r], o.end[r]);
      rank(ins, o.global_tid[r]).i(pid_of(o.global_tid[r])).i(tid_of(o.global_tid[r]));
      text(ins, o.name[r]);
      text(ins, o.input_dims[r]).maybe(o.external_id[r], kNoValue);
      ok &= ins.run() || failed(ins);
    }
  }
  if (auto steps = find_steps(tr); steps.ok()) {
    SqlInsert ins(db, insert_into("steps", 8));
    for (const StepWindow& w : steps->steps) {
      ins.maybe(w.number, kNoValue);
      rank(ins, w.global_pid).i(pid_of(w.global_pid));
      span(ins, w.start, w.end);
      text(ins, w.name).t(step_source_name(steps->source));
      ok &= ins.run() || failed(ins);
    }
  }
  {
    SqlInsert ins(db, insert_into("memory", 6));
    for (const MemorySeries& s : collect_gpu_memory(tr)) {
      for (size_t e = 0; e < s.size(); ++e) {
        ins.i(s.time[e]);
        rank(ins, s.global_pid).i(pid_of(s.global_pid)).i(s.device).i(s.delta[e]).i(s.allocated[e]);
        ok &= ins.run() || failed(ins);
      }
    }
  }
  if (diagnosis) {
    SqlInsert ins(db, insert_into("findings", 7));
    for (const diagnose::Finding& f : diagnosis->findings) {
      ins.t(f.id).t(diagnose::severity_name(f.severity)).d(f.confidence).t(f.scope).t(f.title).i(f.savings_ns).d(f.savings_share);
      ok &= ins.run() || failed(ins);
    }
  }
  if (!ok || sqlite3_exec(db, "COMMIT", nullptr, nullptr, nullptr) != SQLITE_OK) {
    return IoError(fmt::format("cannot fill the SQL tables: {}", why.empty() ? sqlite3_errmsg(db) : why));
  }
  return Status::Ok();
}

}  // namespace tracedoc
