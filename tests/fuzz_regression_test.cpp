// Replays every input of fuzz/regressions/<target>/ through the same function the libFuzzer target
// <target> runs (fuzz/fuzz_targets.h), so that each crash, hang or sanitizer report the fuzzers
// ever found stays fixed. In the normal build this checks for crashes, exceptions and slowness; in
// the sanitizer build (TRACEDOC_SANITIZE=ON, scripts/test-sanitized.sh) the same inputs run under
// ASan + UBSan, which is where most of them failed originally.
//
// Adding a regression: copy the (minimized) input into fuzz/regressions/<target>/ (fuzz/README.md).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "../fuzz/fuzz_targets.h"
#include "test_support.h"

namespace fs = std::filesystem;

namespace {

fs::path regressions_dir() { return fs::path(TRACEDOC_SOURCE_DIR) / "fuzz" / "regressions"; }

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::vector<fs::path> sorted_entries(const fs::path& dir) {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(dir)) out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

// A regression that was a hang or super-linear slowdown must now be quick. The bound is generous
// (sanitized builds on a loaded two-core CI machine are 10-20x slower than Release) yet far below
// what the inputs took before their fix (minutes, or never finishing).
constexpr double kMaxSecondsPerInput = 30;

}  // namespace

TRACEDOC_TEST_LABELS(FuzzRegression, unit sanitize);

// Every folder is a target the fuzz harness knows: a new target must be registered in
// fuzz::kTargets (or its regressions would silently never run).
TEST(FuzzRegression, EveryFolderIsAKnownTarget) {
  if (!fs::exists(regressions_dir())) GTEST_SKIP() << "no " << regressions_dir();
  for (const auto& dir : sorted_entries(regressions_dir())) {
    if (!fs::is_directory(dir)) continue;
    EXPECT_NE(tracedoc::fuzz::find_target(dir.filename().string()), nullptr)
        << dir.filename() << " has no entry in fuzz::kTargets (fuzz/fuzz_targets.h)";
  }
}

TEST(FuzzRegression, EveryInputRunsCleanly) {
  if (!fs::exists(regressions_dir())) GTEST_SKIP() << "no " << regressions_dir();
  size_t inputs = 0;
  for (const auto& dir : sorted_entries(regressions_dir())) {
    if (!fs::is_directory(dir)) continue;
    const auto* target = tracedoc::fuzz::find_target(dir.filename().string());
    if (!target) continue;  // reported by EveryFolderIsAKnownTarget
    for (const auto& file : sorted_entries(dir)) {
      if (!fs::is_regular_file(file) || file.filename().string().front() == '.') continue;
      SCOPED_TRACE(file.string());
      const std::string bytes = slurp(file);
      const auto t0 = std::chrono::steady_clock::now();
      int rc = -1;
      EXPECT_NO_THROW(rc = target->run(bytes));
      const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      EXPECT_EQ(rc, 0);
      EXPECT_LT(seconds, kMaxSecondsPerInput) << "took " << seconds << " s";
      ++inputs;
    }
  }
  EXPECT_GT(inputs, 0u) << "no regression inputs found under " << regressions_dir();
}

// Every nsys regression also through the SQLite-library path (the page scanner off), whatever byte
// 72 of the file says: both readers of a table must survive the same damage.
TEST(FuzzRegression, NsysInputsThroughBothTableReaders) {
  const fs::path dir = regressions_dir() / "fuzz_nsys_sqlite";
  if (!fs::exists(dir)) GTEST_SKIP() << "no " << dir;
  for (const auto& file : sorted_entries(dir)) {
    if (!fs::is_regular_file(file)) continue;
    SCOPED_TRACE(file.string());
    std::string bytes = slurp(file);
    if (bytes.size() <= 72) continue;
    bytes[72] = static_cast<char>(bytes[72] ^ 1);  // the other reader than the file itself selects
    EXPECT_NO_THROW(tracedoc::fuzz::fuzz_nsys_sqlite(bytes));
  }
}
