// Internal to the Kineto reader: the traceEvents array read on every core.
//
// Nearly all of a PyTorch trace is its event array, and nearly all of reading it is tokenizing the
// events; building the model from them (interning names, numbering threads, the era clues) must see
// them in document order. So the array is read in windows of several megabytes, and each window in
// runs that the task pool (common/task_pool.h) tokenizes at once, while one job builds the model
// from the window before and another reads the window after:
//
//   round r:   build window r-1  |  tokenize the runs of window r  |  read window r+1
//
// A run starts at a guessed event boundary (a '{' after "},", which a string may also hold), so the
// guess is checked before its events are used: the build takes a run only when the run before it,
// read from a known unit boundary, stopped exactly where the run starts; otherwise it parses the
// run again from where the run before it stopped. A window starts with the unfinished event at the
// end of the one before (its tail, as the tokenizer saw it); a tail that the build does not confirm,
// the end of the array, or an event larger than a window hands the rest back to the sequential
// reader, which takes it from there. The events the builder sees, and every error and its byte
// offset, are the sequential reader's on any number of threads.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "common/status.h"
#include "ingest/byte_stream.h"
#include "ingest/kineto_event_parser.h"

namespace tracedoc::kineto {

// The most data a window holds; with the tail before it, no unit the pipeline parses itself is
// larger than twice this (a larger one goes back to the sequential reader).
inline constexpr size_t kMaxWindowBytes = 32u << 20;

// The sequential reader's window: buffer[0, filled) holds document bytes from `offset`, the next
// unit starts at `pos`, and `eof` says nothing follows them in the stream. The pipeline starts at
// `pos` and leaves the window holding the document from where it stopped (pos 0).
struct SequentialWindow {
  std::vector<char>& buffer;
  size_t& filled;
  size_t& pos;
  uint64_t& offset;
  bool& eof;
};

// Takes the events of one run, in document order (the caller adds them to its TraceBuilder).
using RunConsumer = std::function<Status(EventRun&)>;

// Reads units of the event array from the window's `pos` on, in runs of about `run_bytes`, until
// the array's ']' (left unread) or an input better read sequentially. Returns an error of the
// stream or of the consumer; throws json::SyntaxError for the first syntax error of the document.
// `path` names the input in --max-memory errors.
Status read_event_array(ByteStream& in, const std::string& path, SequentialWindow window, size_t run_bytes,
                        const RunConsumer& consume);

// The first '{' in [from, to) of a window that follows "}," (whitespace between): where an event
// of the array most likely starts. `to` when there is none.
const char* guess_event_start(const char* from, const char* to);

}  // namespace tracedoc::kineto
