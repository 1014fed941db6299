#include "test_support.h"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <sstream>
#include <type_traits>

#include "analysis/nsys_analyze/rules.h"
#include "ingest/kineto_reader.h"
#include "ingest/nsys_sqlite_reader.h"
#include "report/kineto_json_writer.h"
#include "report/writers.h"
#include "synth/synth_spec.h"
#include "synth/training_loop.h"

namespace tracedoc::testing {

namespace fs = std::filesystem;

fs::path shared_dir() {
  // Set, it decides: TRACEDOC_SHARED=/nonexistent runs the suite as a machine without ../shared does.
  if (const char* env = std::getenv("TRACEDOC_SHARED"))
    return fs::is_directory(fs::path(env) / "traces") ? env : fs::path();
  fs::path p = fs::path(TRACEDOC_SOURCE_DIR).parent_path() / "shared";
  return fs::is_directory(p / "traces") ? p : fs::path();
}

fs::path nsys_traces_dir() {
  fs::path s = shared_dir();
  return s.empty() ? s : s / "traces" / "nsys";
}

namespace {
template <typename Reader>
const Trace& load_cached(const std::string& path, Reader read) {
  static std::mutex mu;
  static std::map<std::string, std::unique_ptr<Trace>> cache;
  std::lock_guard<std::mutex> lock(mu);
  auto& slot = cache[path];
  if (!slot) {
    auto t = read(path);
    if (!t.ok()) throw std::runtime_error(t.status().message());
    slot = std::make_unique<Trace>(std::move(t).value());
  }
  return *slot;
}
}  // namespace

std::string trace_test_name(std::string f) {
  if (f.rfind("kineto/", 0) == 0) f = f.substr(7);
  for (const std::string e : {".pt.trace.json.gz", ".json.gz", ".json"}) {
    if (f.size() > e.size() && f.compare(f.size() - e.size(), e.size(), e) == 0) {
      f.resize(f.size() - e.size());
      break;
    }
  }
  std::string n;
  for (char c : f) n += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return n;
}

std::map<std::string, std::string> shared_nsys_exports() {
  std::map<std::string, std::string> exports;
  const fs::path root = nsys_traces_dir();
  if (root.empty()) return exports;
  for (const auto& d : fs::directory_iterator(root)) {
    if (!d.is_directory() || d.path().filename() == "oracles") continue;
    for (const auto& f : fs::directory_iterator(d.path())) {
      if (f.path().extension() == ".sqlite") {
        exports[d.path().filename().string() + "_" + f.path().stem().string()] = f.path().string();
      }
    }
  }
  return exports;
}

const Trace& load_nsys(const std::string& path) {
  return load_cached(path, [](const std::string& p) { return read_nsys_sqlite(p); });
}

const Trace& load_kineto(const std::string& path) {
  return load_cached(path, [](const std::string& p) { return read_kineto_trace(p); });
}

namespace {

std::vector<std::string> split_args(const std::string& text) {
  std::vector<std::string> parts;
  std::stringstream ss(text);
  for (std::string p; std::getline(ss, p, ':');) parts.push_back(p);
  return parts;
}

// A collected report as `-f csv` prints it; empty when it has no rows (nsys prints nothing).
std::string table_csv(const TableSink& table) {
  if (table.row_count() == 0) return std::string();
  return render_rows(WriterOptions{}, [&](RowSink& w) {
    w.begin(table.columns());
    for (const auto& r : table.rows()) w.row(r);
    w.end();
  });
}

}  // namespace

std::optional<std::string> report_csv(const Trace& trace, const std::string& report_with_args) {
  const auto parts = split_args(report_with_args);
  const auto* def = find_report(parts.at(0));
  if (!def) throw std::runtime_error("unknown report " + parts.at(0));
  ReportArgs args;
  args.args.assign(parts.begin() + 1, parts.end());
  TableSink table;
  Status st = def->run(trace, args, table);
  if (st.code() == ErrorCode::kNoData) return std::nullopt;
  if (!st.ok()) throw std::runtime_error(st.message());
  return table_csv(table);
}

std::optional<std::string> rule_csv(const Trace& trace, const std::string& rule_with_args) {
  const auto parts = split_args(rule_with_args);
  const auto* def = nsys_analyze::find_rule(parts.at(0));
  if (!def) throw std::runtime_error("unknown rule " + parts.at(0));
  auto args = nsys_analyze::parse_rule_args(def->name, {parts.begin() + 1, parts.end()});
  if (!args.ok()) throw std::runtime_error(args.status().message());
  TableSink table;
  Status st = def->run(trace, *args, table);
  if (st.code() == ErrorCode::kNoData) return std::nullopt;
  if (!st.ok()) throw std::runtime_error(st.message());
  return table_csv(table);
}

namespace {

// Equal values, NaN (the absent double) equal to NaN.
template <typename T>
bool same_values(const std::vector<T>& a, const std::vector<T>& b) {
  if constexpr (std::is_floating_point_v<T>) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end(),
                      [](T x, T y) { return x == y || (std::isnan(x) && std::isnan(y)); });
  } else {
    return a == b;
  }
}

}  // namespace

void expect_same_trace(const Trace& a, const Trace& b, const std::string& what) {
  SCOPED_TRACE(what);
  for_each_trace_table([&](const TableInfo& info, auto get) {
    const auto& ta = get(a);
    const auto& tb = get(b);
    for_each_column_of<std::remove_cvref_t<decltype(ta)>>([&](const auto& column) {
      EXPECT_TRUE(same_values(column.of(ta), column.of(tb))) << info.name << "." << column.name << " differs";
    });
  });
  ASSERT_EQ(a.strings.size(), b.strings.size());
  for (StrId id = 0; id < a.strings.size(); ++id) ASSERT_EQ(a.strings.get(id), b.strings.get(id)) << id;
  EXPECT_TRUE(a.warnings == b.warnings);
  EXPECT_TRUE(a.threads == b.threads);
  EXPECT_TRUE(a.processes == b.processes);
  EXPECT_TRUE(a.devices == b.devices);
  EXPECT_EQ(a.pytorch.era, b.pytorch.era);
  EXPECT_EQ(a.pytorch.rank, b.pytorch.rank);
  EXPECT_EQ(a.pytorch.world_size, b.pytorch.world_size);
  EXPECT_TRUE(a.source.tables == b.source.tables);
  EXPECT_EQ(a.pytorch.event_count, b.pytorch.event_count);
  EXPECT_EQ(a.pytorch.python_function_count, b.pytorch.python_function_count);
  EXPECT_EQ(a.pytorch.flow_count, b.pytorch.flow_count);
  EXPECT_EQ(a.pytorch.base_time_ns, b.pytorch.base_time_ns);
  EXPECT_EQ(a.source.session_start_utc_ns, b.source.session_start_utc_ns);
}

std::vector<std::vector<std::string>> parse_csv(const std::string& text) {
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> row;
  std::string cell;
  bool quoted = false, any = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        cell += '"';
        ++i;
      } else if (c == '"')
        quoted = false;
      else
        cell += c;
      continue;
    }
    if (c == '"' && cell.empty()) {
      quoted = true;
      any = true;
    }  // quotes open only at a field's start
    else if (c == ',') {
      row.push_back(cell);
      cell.clear();
      any = true;
    } else if (c == '\n') {
      row.push_back(cell);
      rows.push_back(row);
      row.clear();
      cell.clear();
      any = false;
    } else if (c != '\r') {
      cell += c;
      any = true;
    }
  }
  if (any || !cell.empty()) {
    row.push_back(cell);
    rows.push_back(row);
  }
  return rows;
}

namespace {
bool parse_number(const std::string& s, double* out) {
  if (s.empty()) return false;
  char* end = nullptr;
  *out = std::strtod(s.c_str(), &end);
  return end == s.c_str() + s.size();
}
}  // namespace

bool cell_equal(const std::string& expected, const std::string& actual) {
  double x, y;
  return expected == actual || (parse_number(expected, &x) && parse_number(actual, &y) && x == y);
}

bool csv_equal(const std::string& expected, const std::string& actual, std::string* why) {
  auto e = parse_csv(expected), a = parse_csv(actual);
  if (e.size() != a.size()) {
    *why = "row count: expected " + std::to_string(e.size()) + ", got " + std::to_string(a.size());
    return false;
  }
  for (size_t r = 0; r < e.size(); ++r) {
    if (e[r].size() != a[r].size()) {
      *why = "column count on line " + std::to_string(r + 1);
      return false;
    }
    for (size_t c = 0; c < e[r].size(); ++c) {
      if (cell_equal(e[r][c], a[r][c])) continue;
      *why = "line " + std::to_string(r + 1) + " column " + std::to_string(c + 1) + ": expected '" + e[r][c] +
             "', got '" + a[r][c] + "'";
      return false;
    }
  }
  return true;
}

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> parts;
  std::stringstream ss(text);
  for (std::string p; std::getline(ss, p, sep);) parts.push_back(p);
  return parts;
}

ReferenceTable read_reference_tsv(const fs::path& file) {
  ReferenceTable out;
  std::vector<std::string> header;
  for (const std::string& line : split(read_file(file), '\n')) {
    if (line.empty()) continue;
    if (line[0] == '#') {
      const size_t eq = line.find(" = ");
      if (eq != std::string::npos && line.size() > 2) out.traces[line.substr(2, eq - 2)] = line.substr(eq + 3);
      continue;
    }
    const std::vector<std::string> cells = split(line, '\t');
    if (header.empty()) {
      header = cells;
      continue;
    }
    ReferenceRow r;
    for (size_t i = 0; i < cells.size() && i < header.size(); ++i) r.cols[header[i]] = cells[i];
    out.rows.push_back(std::move(r));
  }
  return out;
}

std::vector<std::vector<std::string>> read_case_lines(const fs::path& cases_txt) {
  std::vector<std::vector<std::string>> out;
  std::ifstream in(cases_txt);
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    std::vector<std::string> f;
    for (std::string x; fields >> x;) f.push_back(x);
    if (!f.empty()) out.push_back(std::move(f));
  }
  return out;
}

RecordedRule recorded_rule(const fs::path& golden_dir, const std::string& name, const std::string& rule) {
  std::string stem = "analyze_" + rule;
  std::replace(stem.begin(), stem.end(), ':', '_');
  const fs::path csv = golden_dir / "expected" / name / (stem + ".csv");
  if (fs::exists(csv)) return {csv.string(), false};
  return {(golden_dir / "expected" / name / (stem + ".skipped")).string(), true};
}

const diagnose::Finding* finding(const diagnose::Diagnosis& d, const std::string& id) {
  for (const diagnose::Finding& f : d.findings) {
    if (f.id == id) return &f;
  }
  return nullptr;
}

double figure(const diagnose::Finding& f, const std::string& key) {
  for (const diagnose::Figure& g : f.figures) {
    if (g.key == key) return g.value;
  }
  ADD_FAILURE() << f.id << " has no figure " << key;
  return -1;
}

Result<std::string> write_sql_export(const std::vector<fs::path>& scripts, const std::string& name) {
  const fs::path path = fs::temp_directory_path() / ("tracedoc_" + name + "_" + std::to_string(::getpid()) + ".sqlite");
  fs::remove(path);
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) != SQLITE_OK) {
    sqlite3_close(db);
    return IoError("cannot create " + path.string());
  }
  for (const auto& script : scripts) {
    const std::string sql = read_file(script);
    char* error = nullptr;
    const int rc = sql.empty() ? SQLITE_ERROR : sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error);
    const std::string message = sql.empty() ? "empty or missing script" : error ? error : "";
    sqlite3_free(error);
    if (rc != SQLITE_OK) {
      sqlite3_close(db);
      return BadInput(script.string() + ": " + message);
    }
  }
  sqlite3_close(db);
  return path.string();
}

std::string gunzip(const std::filesystem::path& p) {
  gzFile f = gzopen(p.c_str(), "rb");
  if (!f) return {};
  std::string out;
  char buf[1 << 16];
  for (int n; (n = gzread(f, buf, sizeof buf)) > 0;) out.append(buf, static_cast<size_t>(n));
  gzclose(f);
  return out;
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::filesystem::path synth_rank_directory(const std::string& spec_name) {
  namespace fs = std::filesystem;
  // One folder per test process, removed at exit (ctest runs test processes in parallel).
  static const struct Root {
    fs::path path = fs::temp_directory_path() / ("tracedoc-ranks-" + std::to_string(getpid()));
    ~Root() {
      std::error_code ec;
      fs::remove_all(path, ec);
    }
  } root;
  const fs::path dir = root.path / spec_name;
  const fs::path done = dir.string() + ".done";  // beside it: the directory holds rank files only
  if (fs::exists(done)) return dir;
  fs::create_directories(dir);
  auto spec =
      synth::read_synth_spec((fs::path(TRACEDOC_SOURCE_DIR) / "examples/synth" / (spec_name + ".toml")).string());
  if (!spec.ok()) throw std::runtime_error(spec.status().message());
  auto built = synth::build_training_loop(*spec);
  if (!built.ok()) throw std::runtime_error(built.status().message());
  for (size_t r = 0; r < built->ranks.size(); ++r) {
    const Status st = write_kineto_json(built->ranks[r], (dir / ("rank" + std::to_string(r) + ".json")).string());
    if (!st.ok()) throw std::runtime_error(st.message());
  }
  std::ofstream(done) << "";
  return dir;
}

ScratchDir::ScratchDir() {
  static std::atomic<int> counter{0};
  path_ = std::filesystem::temp_directory_path() /
          ("tracedoc-test-" + std::to_string(getpid()) + "-" + std::to_string(counter++));
  std::filesystem::create_directories(path_);
}

ScratchDir::~ScratchDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

std::filesystem::path ScratchDir::write(const std::string& name, const std::string& bytes) const {
  std::ofstream(path_ / name, std::ios::binary) << bytes;
  return path_ / name;
}

CliRun tracedoc(const std::vector<std::string>& args, const std::string& path_env, const std::string& stdout_path) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("tracedoc-cli-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const std::string out = stdout_path.empty() ? (dir / "out").string() : stdout_path, err = (dir / "err").string();
  pid_t pid = fork();
  if (pid == 0) {
    if (!std::freopen(out.c_str(), "w", stdout) || !std::freopen(err.c_str(), "w", stderr)) _exit(126);
    if (!path_env.empty()) setenv("PATH", path_env.c_str(), 1);
    std::vector<std::string> full = {std::string(TRACEDOC_BINARY_DIR) + "/tracedoc"};
    full.insert(full.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& a : full) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  int status = 0;
  struct rusage usage {};
  ::wait4(pid, &status, 0, &usage);
  CliRun r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.peak_rss = static_cast<uint64_t>(usage.ru_maxrss) * 1024;
  if (stdout_path.empty()) r.out = read_file(out);
  r.err = read_file(err);
  std::filesystem::remove_all(dir);
  return r;
}

std::optional<std::string> real_nsys_stats(const std::string& report, const std::filesystem::path& sqlite) {
  namespace fs = std::filesystem;
  std::string path_env = std::getenv("PATH") ? std::getenv("PATH") : "";
  bool have_nsys = std::system("command -v nsys > /dev/null 2>&1") == 0;
  if (const char* home = std::getenv("HOME");
      !have_nsys && home && fs::exists(fs::path(home) / ".cache/nsys-debian/nsys")) {
    path_env = (fs::path(home) / ".cache/nsys-debian").string() + ":" + path_env;
    have_nsys = true;
  }
  if (!have_nsys) return std::nullopt;
  const fs::path out = sqlite.string() + "." + report + ".csv";
  const std::string cmd = "PATH='" + path_env + "' nsys stats -q -r " + report + " -f csv --force-export=false '" +
                          sqlite.string() + "' > '" + out.string() + "' 2> /dev/null";
  if (std::system(cmd.c_str()) != 0) {
    ADD_FAILURE() << "nsys stats -r " << report << " failed on " << sqlite;
    return std::string();
  }
  std::string printed = read_file(out);
  fs::remove(out);
  while (printed.size() >= 2 && printed.ends_with("\n\n")) printed.pop_back();  // nsys ends with a blank line
  return printed;
}

int64_t sql_int(const std::string& path, const std::string& query) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open_v2(("file:" + path + "?mode=ro&immutable=1").c_str(), &db,
                            SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, nullptr),
            SQLITE_OK);
  sqlite3_stmt* stmt = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, query.c_str(), -1, &stmt, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
  const int64_t v = sqlite3_step(stmt) == SQLITE_ROW ? sqlite3_column_int64(stmt, 0) : -1;
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  return v;
}

}  // namespace tracedoc::testing
