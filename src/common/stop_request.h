// A request to stop long engine work early, made from outside it: Python's Ctrl-C (the extension
// turns SIGINT into a request while the engine runs without the GIL; python/module.cpp). Long work
// polls it where it already stops to check the memory limit (MemoryBudget::check, which then
// returns ErrorCode::kInterrupted) and in SQLite's progress handler (`sql`). The command-line tool
// never requests a stop: SIGINT ends it (common/pending_files.h). A signal is the process's, so the
// request is too: every piece of work running when it comes stops.
#pragma once

namespace tracedoc {

class StopRequest {
 public:
  static bool requested();
  static void request();  // async-signal-safe
  static void clear();
};

}  // namespace tracedoc
