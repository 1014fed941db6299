// Where `-o` writes (report/output_file.h), through the `tracedoc` binary: a path that exists and
// is not a regular file is written in place and stays what it was (renaming over /dev/null as root
// once turned the machine's /dev/null into a regular file), a symlink is followed and kept,
// /dev/stdout is this process's standard output, a directory is an error before anything is read,
// and a write past a file-size limit is an error that leaves nothing behind.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <sstream>

#include "report/output_file.h"
#include "test_support.h"

namespace tracedoc::testing {
namespace {

namespace fs = std::filesystem;

const fs::path kExample = fs::path(TRACEDOC_SOURCE_DIR) / "examples" / "toy_training.sqlite";

// What `tracedoc summary EXAMPLE` prints: the content every target below must receive.
const std::string& summary_text() {
  static const std::string text = [] {
    const CliRun r = tracedoc({"summary", kExample.string()});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.out;
  }();
  return text;
}

bool is_char_device(const fs::path& p) {
  struct stat st {};
  return ::lstat(p.c_str(), &st) == 0 && S_ISCHR(st.st_mode);
}

TRACEDOC_TEST_LABELS(OutputFile, unit sanitize);

TEST(OutputFile, ACharacterDeviceIsWrittenInPlaceNotReplaced) {
  ScratchDir dir;
  // A private null device (root, as in containers and CI, where the old rename replaced /dev/null);
  // without the right to make one, the machine's own, which no rename could replace then.
  fs::path device = dir.path() / "null";
  if (::mknod(device.c_str(), S_IFCHR | 0666, makedev(1, 3)) != 0) device = "/dev/null";
  ASSERT_TRUE(is_char_device(device));
  const CliRun r = tracedoc({"summary", "-o", device.string(), kExample.string()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_TRUE(is_char_device(device)) << device << " was replaced";
  // Nothing else was created beside it (no temporary file).
  if (device.parent_path() == dir.path()) EXPECT_EQ(std::distance(fs::directory_iterator(dir.path()), {}), 1);
}

TEST(OutputFile, AFifoIsWrittenInPlaceForItsReader) {
  ScratchDir dir;
  const fs::path fifo = dir.path() / "pipe";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  // The reader opens the FIFO as `cat fifo` would; tracedoc's open blocks until it does.
  auto received = std::async(std::launch::async, [&] {
    std::ifstream in(fifo);
    std::stringstream all;
    all << in.rdbuf();
    return all.str();
  });
  const CliRun r = tracedoc({"summary", "-o", fifo.string(), kExample.string()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(received.get(), summary_text());
  EXPECT_TRUE(fs::is_fifo(fs::symlink_status(fifo))) << "the FIFO was replaced";
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.path()), {}), 1);
}

TEST(OutputFile, ASymlinkIsFollowedAndKept) {
  ScratchDir dir;
  // A link to a file that does not exist yet: the file is made where the link points, as `>` does.
  fs::create_symlink("made.txt", dir.path() / "new_link");
  CliRun r = tracedoc({"summary", "-o", (dir.path() / "new_link").string(), kExample.string()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(fs::is_symlink(dir.path() / "new_link"));
  EXPECT_EQ(read_file(dir.path() / "made.txt"), summary_text());
  // A link to a regular file: the file is replaced whole, keeping its mode, and the link stays.
  const fs::path target = dir.write("old.txt", "old content\n");
  fs::permissions(target, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
  fs::create_symlink(target.filename(), dir.path() / "link");
  r = tracedoc({"summary", "-o", (dir.path() / "link").string(), kExample.string()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(fs::is_symlink(dir.path() / "link"));
  EXPECT_EQ(read_file(target), summary_text());
  EXPECT_EQ(fs::status(target).permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.path()), {}), 4);  // no temporary left
}

TEST(OutputFile, StandardOutputByNameIsThisProcesssOwn) {
  CliRun r = tracedoc({"summary", "-o", "/dev/stdout", kExample.string()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, summary_text());
  // Appended where the shell opened standard output with >>, never truncating or replacing it.
  ScratchDir dir;
  const fs::path log = dir.write("log", "before\n");
  const std::string command = std::string(TRACEDOC_BINARY_DIR) + "/tracedoc summary -o /dev/stdout " +
                              kExample.string() + " >> " + log.string() + " 2>&1";
  ASSERT_EQ(std::system(command.c_str()), 0);
  EXPECT_EQ(read_file(log), "before\n" + summary_text());
}

TEST(OutputFile, ADirectoryOrAMissingFolderIsAUsageError) {
  ScratchDir dir;
  CliRun r = tracedoc({"summary", "-o", dir.path().string(), kExample.string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "tracedoc: --output: " + dir.path().string() + ": is a directory; give a file name (see --help)\n");
  EXPECT_TRUE(fs::is_empty(dir.path()));
  const fs::path missing = dir.path() / "no_such_folder" / "out.json";
  for (const char* command : {"summary", "diagnose", "diff", "export"}) {
    std::vector<std::string> args = {command, "-o", missing.string(), kExample.string()};
    if (std::string(command) == "diff") args.push_back(kExample.string());
    if (std::string(command) == "export") args.insert(args.begin() + 1, {"--to", "sqlite"});
    r = tracedoc(args);
    EXPECT_EQ(r.exit_code, 2) << command;
    EXPECT_NE(r.err.find(missing.string() + ": cannot create: " + (dir.path() / "no_such_folder").string() +
                         " is not a folder that exists"),
              std::string::npos)
        << r.err;
  }
  EXPECT_TRUE(fs::is_empty(dir.path()));
}

// A SQLite export written to a device: staged in the temporary directory, then copied in place.
TEST(OutputFile, AnExportToADeviceOrFifoIsCopiedInPlace) {
  ScratchDir dir;
  const fs::path fifo = dir.path() / "export.pipe";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  auto received = std::async(std::launch::async, [&] { return read_file(fifo); });
  const CliRun r = tracedoc({"export", "--to", "sqlite", "-o", fifo.string(), kExample.string()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const std::string bytes = received.get();
  EXPECT_EQ(bytes.substr(0, 16), std::string("SQLite format 3\0", 16));
  EXPECT_TRUE(fs::is_fifo(fs::symlink_status(fifo)));
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.path()), {}), 1);
}

// Past `ulimit -f` a write fails with EFBIG: reported, exit 2, the temporary file removed (SIGXFSZ
// ended the process mid-write and left `v.html.tmp-*`).
TEST(OutputFile, AFileSizeLimitIsAnErrorNotASignal) {
  ScratchDir dir;
  const fs::path out = dir.path() / "v.html";
  struct rlimit saved {};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &saved), 0);
  struct rlimit small = saved;
  small.rlim_cur = 64 * 1024;  // the page is megabytes; the runner's captured output is a few bytes
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
  const CliRun r = tracedoc({"view", "-o", out.string(), kExample.string()});
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &saved), 0);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(r.err, "tracedoc: " + out.string() + ": write failed: File too large\n");
  EXPECT_TRUE(fs::is_empty(dir.path())) << "a partial or temporary file was left";
}

TEST(OutputFile, ResolveSaysHowEachPathIsWritten) {
  ScratchDir dir;
  auto kind = [](const std::string& path) {
    const auto t = resolve_output(path);
    return t.ok() ? static_cast<int>(t->kind) : -1;
  };
  EXPECT_EQ(kind((dir.path() / "new.csv").string()), static_cast<int>(OutputTarget::Kind::kReplace));
  EXPECT_EQ(kind(dir.write("old.csv", "x").string()), static_cast<int>(OutputTarget::Kind::kReplace));
  EXPECT_EQ(kind("/dev/null"), static_cast<int>(OutputTarget::Kind::kInPlace));
  EXPECT_EQ(kind("/dev/stderr"), static_cast<int>(OutputTarget::Kind::kDescriptor));
  EXPECT_EQ(kind("/proc/self/fd/2"), static_cast<int>(OutputTarget::Kind::kDescriptor));
  EXPECT_EQ(kind(dir.path().string()), -1);
  EXPECT_EQ(kind("/dev/fd/999"), -1);  // not open
  fs::create_symlink("loop", dir.path() / "loop");
  EXPECT_EQ(resolve_output((dir.path() / "loop").string()).status().message(),
            (dir.path() / "loop").string() + ": too many levels of symbolic links");
  // A link into another folder resolves to the file it names there.
  fs::create_directory(dir.path() / "sub");
  fs::create_symlink("sub/target.csv", dir.path() / "into_sub");
  const auto into = resolve_output((dir.path() / "into_sub").string());
  ASSERT_TRUE(into.ok());
  EXPECT_EQ(fs::path(into->path), dir.path() / "sub/target.csv");
}

}  // namespace
}  // namespace tracedoc::testing
