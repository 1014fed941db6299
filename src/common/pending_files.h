// The temporary files of outputs being written (report/output_file.h), so that a
// run stopped before it finishes leaves none behind: the memory watchdog (common/memory_budget.h)
// and SIGINT / SIGTERM / SIGHUP remove them before the process ends. Files are registered when
// created and forgotten when renamed into place or discarded.
#pragma once

#include <string>

namespace tracedoc {

class PendingFiles {
 public:
  // Registers `temp_path`. Returns false when every slot is taken (the file is then not removed on
  // a stop, but the run goes on: a command writes a handful of files at a time, never 64).
  static bool add(const std::string& temp_path);
  static void forget(const std::string& temp_path);
  // Removes every registered file; async-signal-safe (unlink only), so signal handlers call it.
  static void remove_all() noexcept;
  // Installs handlers for SIGINT, SIGTERM and SIGHUP that remove the files and then end the
  // process as the signal would have. Called once by the CLI.
  static void remove_on_termination_signals();
};

}  // namespace tracedoc
