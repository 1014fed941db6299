// CUPTI activity records -> capture records: the real record layouts of the CUPTI headers this is
// built with (CUpti_ActivityKernel10, CUpti_ActivityMemcpy6, ...) turned into the bodies of
// ingest/capture_format.h. Kept apart from the CUPTI session (cupti_injection.cpp) so that tests
// feed it records laid out by the real headers without a GPU.
#pragma once

#include <cupti.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

#include "ingest/capture_format.h"

namespace tracedoc::inject {

// Where converted records go: the process's CaptureWriter in the injection library, a vector in
// the tests.
class RecordSink {
 public:
  virtual ~RecordSink() = default;
  virtual void emit(capture::RecordType type, std::string_view body) = 0;
  virtual uint32_t intern(std::string_view text) = 0;
  // Whether an activity that started at t falls in the capture (delay, duration, range).
  virtual bool keep(int64_t t) { return t >= 0; }
};

// The name of a runtime or driver API callback id ("cudaLaunchKernel_v7000"); cuptiGetCallbackName
// in the injection library.
using ApiNameLookup = const char* (*)(bool driver, uint32_t cbid);

class ActivityConverter {
 public:
  ActivityConverter(RecordSink& sink, ApiNameLookup api_name) : sink_(sink), api_name_(api_name) {}
  // Converts one record; false for a kind tracedoc does not keep (counted in skipped()).
  bool convert(const CUpti_Activity* record);
  int64_t converted() const { return converted_; }
  int64_t skipped() const { return skipped_; }

 private:
  int32_t device_of_context(uint32_t context, int32_t fallback);
  void learn_context(uint32_t context, uint32_t device);
  uint32_t api_name_id(bool driver, uint32_t cbid);

  RecordSink& sink_;
  ApiNameLookup api_name_;
  std::mutex mutex_;                                  // CUPTI may complete buffers on several threads
  std::atomic<uint64_t> last_learned_{~uint64_t{0}};  // (context << 32 | device) last put in context_device_
  std::unordered_map<uint32_t, int32_t> context_device_;
  std::unordered_map<uint64_t, uint32_t> api_names_;  // (driver << 32 | cbid) -> string id
  int64_t converted_ = 0, skipped_ = 0;
};

// CUPTI's memory kind (0 unknown, 1 pageable, ...) as nsys numbers it (0 pageable, ..., 7 unknown).
inline uint8_t nsys_mem_kind(uint32_t cupti_kind) {
  return cupti_kind == 0 || cupti_kind > 7 ? 7 : static_cast<uint8_t>(cupti_kind - 1);
}

}  // namespace tracedoc::inject
