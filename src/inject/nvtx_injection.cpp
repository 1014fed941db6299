// NVTX capture: the NVTX library inside the application (header-only NVTX 3, or NVTX 2's
// libnvToolsExt) loads $NVTX_INJECTION64_PATH on its first call and calls InitializeInjectionNvtx2,
// which fills NVTX's function tables with the handlers below: push/pop and start/end ranges,
// marks, domains, registered strings and thread names become capture records. NVTX needs no GPU,
// so this half of `tracedoc capture` runs (and is tested) on any machine.
//
// Wide-character (W) variants and UNICODE messages are converted to UTF-8.
#define NVTX_NO_IMPL
#include <nvtx3/nvToolsExt.h>

#include <atomic>
#include <cstdint>
#include <initializer_list>
#include <utility>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "inject/capture_writer.h"

namespace tracedoc::inject {

namespace {

using capture::BodyWriter;
using capture::RecordType;

// Domain and registered-string handles handed to NVTX are our own ids, cast to its pointer types.
struct Names {
  std::vector<std::string> domains{""};  // id 0: the default domain
  struct Registered {
    uint32_t id;       // kString id
    std::string text;  // for matching the capture range
  };
  std::vector<Registered> strings{{0, ""}};  // by registered-string handle
};
Names& names() {
  static Names* n = new Names();
  return *n;
}
std::mutex& names_mutex() {
  static std::mutex* m = new std::mutex();
  return *m;
}

uint32_t domain_id(nvtxDomainHandle_t domain) { return static_cast<uint32_t>(reinterpret_cast<uintptr_t>(domain)); }

std::string domain_name(uint32_t id) {
  std::lock_guard<std::mutex> lock(names_mutex());
  return id < names().domains.size() ? names().domains[id] : std::string();
}

struct Message {
  uint32_t text = 0;       // kString id
  std::string_view ascii;  // the application's text, valid during the NVTX call
  std::string registered;  // a registered string's text (a copy: the table may grow), or a wide text in UTF-8
  uint32_t argb = 0, category = 0;
  std::string_view name() const { return registered.empty() ? ascii : std::string_view(registered); }
};

// A wide-character NVTX text in UTF-8 (wchar_t holds UTF-32 on Linux; invalid code points become U+FFFD).
std::string utf8_of(const wchar_t* w) {
  std::string out;
  if (w == nullptr) return out;
  for (size_t n = 0; w[n] != 0 && out.size() < 0xFFF0; ++n) {
    uint32_t c = static_cast<uint32_t>(w[n]);
    if (c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) c = 0xFFFD;
    if (c < 0x80) {
      out += static_cast<char>(c);
    } else if (c < 0x800) {
      out += static_cast<char>(0xC0 | (c >> 6)), out += static_cast<char>(0x80 | (c & 0x3F));
    } else if (c < 0x10000) {
      out += static_cast<char>(0xE0 | (c >> 12)), out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (c & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (c >> 18)), out += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((c >> 6) & 0x3F)), out += static_cast<char>(0x80 | (c & 0x3F));
    }
  }
  return out;
}

Message message_of_wide(const wchar_t* text) {
  Message m;
  if (text != nullptr) {
    m.registered = utf8_of(text);
    m.text = CaptureWriter::get().string_id(m.registered);
  }
  return m;
}

Message message_of(const nvtxEventAttributes_t* a) {
  Message m;
  if (a == nullptr) return m;
  CaptureWriter& w = CaptureWriter::get();
  if (a->colorType == NVTX_COLOR_ARGB) m.argb = a->color;
  m.category = a->category;
  if (a->messageType == NVTX_MESSAGE_TYPE_ASCII && a->message.ascii != nullptr) {
    m.ascii = a->message.ascii;
    m.text = w.string_id(m.ascii);
  } else if (a->messageType == NVTX_MESSAGE_TYPE_UNICODE && a->message.unicode != nullptr) {
    m.registered = utf8_of(a->message.unicode);
    m.text = w.string_id(m.registered);
  } else if (a->messageType == NVTX_MESSAGE_TYPE_REGISTERED) {
    const uintptr_t handle = reinterpret_cast<uintptr_t>(a->message.registered);
    std::lock_guard<std::mutex> lock(names_mutex());
    if (handle < names().strings.size()) {
      m.text = names().strings[handle].id;
      m.registered = names().strings[handle].text;
    }
  }
  return m;
}

Message message_of(const char* text) {
  Message m;
  if (text != nullptr) {
    m.ascii = text;
    m.text = CaptureWriter::get().string_id(m.ascii);
  }
  return m;
}

// A record's body, built in a buffer each thread keeps (no allocation per event).
std::string& body_buffer() {
  __attribute__((tls_model("initial-exec"))) thread_local std::string body;
  body.clear();
  return body;
}

// Push/pop ranges nest per thread: the capture range needs to know which range a pop closes.
__attribute__((tls_model("initial-exec"))) thread_local std::vector<std::string> t_stack;

int push(uint32_t domain, const Message& m) {
  CaptureWriter& w = CaptureWriter::get();
  const int64_t t = now_ns();
  if (w.uses_nvtx_range()) {
    w.nvtx_range_begins(m.name(), domain_name(domain), t);
    try {
      t_stack.emplace_back(m.name());
    } catch (...) {
    }
  }
  if (w.recording(t)) {
    std::string& body = body_buffer();
    BodyWriter(body).put<int64_t>(current_tid()).put(t).put(domain).put(m.text).put(m.argb).put(m.category);
    w.record(RecordType::kNvtxPush, body);
  }
  return 0;
}

int pop(uint32_t domain) {
  CaptureWriter& w = CaptureWriter::get();
  const int64_t t = now_ns();
  // Recorded before the capture range may close, so the range's own pop is kept.
  if (w.recording(t)) {
    std::string& body = body_buffer();
    BodyWriter(body).put<int64_t>(current_tid()).put(t).put(domain);
    w.record(RecordType::kNvtxPop, body);
  }
  if (!t_stack.empty()) {
    w.nvtx_range_ends(t_stack.back(), domain_name(domain), t);
    t_stack.pop_back();
  }
  return 0;
}

void mark(uint32_t domain, const Message& m) {
  CaptureWriter& w = CaptureWriter::get();
  const int64_t t = now_ns();
  if (!w.recording(t)) return;
  std::string& body = body_buffer();
  BodyWriter(body).put<int64_t>(current_tid()).put(t).put(domain).put(m.text).put(m.argb).put(m.category);
  w.record(RecordType::kNvtxMark, body);
}

// Start/end ranges may end on another thread; their ids are ours (a counter), unique per process.
std::atomic<uint64_t> g_next_range{1};
struct OpenRange {
  uint64_t id;
  std::string text;
  uint32_t domain;
};
std::vector<OpenRange>& open_ranges() {
  static auto* v = new std::vector<OpenRange>();
  return *v;
}

nvtxRangeId_t start(uint32_t domain, const Message& m) {
  CaptureWriter& w = CaptureWriter::get();
  const int64_t t = now_ns();
  const uint64_t id = g_next_range.fetch_add(1);
  if (w.nvtx_range_begins(m.name(), domain_name(domain), t)) {
    std::lock_guard<std::mutex> lock(names_mutex());
    try {
      open_ranges().push_back({id, std::string(m.name()), domain});
    } catch (...) {
    }
  }
  if (w.recording(t)) {
    std::string body;
    BodyWriter(body).put(id).put<int64_t>(current_tid()).put(t).put(domain).put(m.text).put(m.argb).put(m.category);
    w.record(RecordType::kNvtxStart, body);
  }
  return id;
}

void end(nvtxRangeId_t id) {
  CaptureWriter& w = CaptureWriter::get();
  const int64_t t = now_ns();
  if (w.recording(t)) {
    std::string body;
    BodyWriter(body).put<uint64_t>(id).put<int64_t>(current_tid()).put(t);
    w.record(RecordType::kNvtxEnd, body);
  }
  std::lock_guard<std::mutex> lock(names_mutex());
  auto& open = open_ranges();
  for (size_t i = 0; i < open.size(); ++i) {
    if (open[i].id == id) {
      w.nvtx_range_ends(open[i].text, names().domains[open[i].domain], t);
      open.erase(open.begin() + static_cast<std::ptrdiff_t>(i));
      break;
    }
  }
}

// ---- the NVTX entry points ---------------------------------------------------------------------

void NVTX_API MarkEx(const nvtxEventAttributes_t* a) { mark(0, message_of(a)); }
void NVTX_API MarkA(const char* text) { mark(0, message_of(text)); }
void NVTX_API MarkW(const wchar_t* text) { mark(0, message_of_wide(text)); }
nvtxRangeId_t NVTX_API RangeStartW(const wchar_t* text) { return start(0, message_of_wide(text)); }
int NVTX_API RangePushW(const wchar_t* text) { return push(0, message_of_wide(text)); }
nvtxRangeId_t NVTX_API RangeStartEx(const nvtxEventAttributes_t* a) { return start(0, message_of(a)); }
nvtxRangeId_t NVTX_API RangeStartA(const char* text) { return start(0, message_of(text)); }
void NVTX_API RangeEnd(nvtxRangeId_t id) { end(id); }
int NVTX_API RangePushEx(const nvtxEventAttributes_t* a) { return push(0, message_of(a)); }
int NVTX_API RangePushA(const char* text) { return push(0, message_of(text)); }
int NVTX_API RangePop() { return pop(0); }

void NVTX_API NameOsThreadA(uint32_t tid, const char* name) {
  if (name == nullptr) return;
  std::string body;
  BodyWriter(body).put<int64_t>(tid).bytes(std::string_view(name).substr(0, 4000));
  CaptureWriter::get().record(RecordType::kThreadName, body);
}
void NVTX_API NameOsThreadW(uint32_t tid, const wchar_t* name) {
  if (name != nullptr) NameOsThreadA(tid, utf8_of(name).c_str());
}

void NVTX_API DomainMarkEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a) { mark(domain_id(d), message_of(a)); }
nvtxRangeId_t NVTX_API DomainRangeStartEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a) {
  return start(domain_id(d), message_of(a));
}
void NVTX_API DomainRangeEnd(nvtxDomainHandle_t, nvtxRangeId_t id) { end(id); }
int NVTX_API DomainRangePushEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a) {
  return push(domain_id(d), message_of(a));
}
int NVTX_API DomainRangePop(nvtxDomainHandle_t d) { return pop(domain_id(d)); }

nvtxStringHandle_t NVTX_API DomainRegisterStringA(nvtxDomainHandle_t, const char* text) {
  const uint32_t id = CaptureWriter::get().string_id(text != nullptr ? text : "");
  std::lock_guard<std::mutex> lock(names_mutex());
  try {
    names().strings.push_back({id, text != nullptr ? text : ""});
  } catch (...) {
    return nullptr;
  }
  return reinterpret_cast<nvtxStringHandle_t>(static_cast<uintptr_t>(names().strings.size() - 1));
}

nvtxStringHandle_t NVTX_API DomainRegisterStringA(nvtxDomainHandle_t, const char* text);
nvtxDomainHandle_t NVTX_API DomainCreateA(const char* name);
nvtxStringHandle_t NVTX_API DomainRegisterStringW(nvtxDomainHandle_t d, const wchar_t* text) {
  return DomainRegisterStringA(d, utf8_of(text).c_str());
}
nvtxDomainHandle_t NVTX_API DomainCreateW(const wchar_t* name) { return DomainCreateA(utf8_of(name).c_str()); }

nvtxDomainHandle_t NVTX_API DomainCreateA(const char* name) {
  const std::string text = name != nullptr ? name : "";
  uint32_t id = 0;
  {
    std::lock_guard<std::mutex> lock(names_mutex());
    try {
      names().domains.push_back(text);
    } catch (...) {
      return nullptr;
    }
    id = static_cast<uint32_t>(names().domains.size() - 1);
  }
  std::string body;
  BodyWriter(body).put(id).bytes(std::string_view(text).substr(0, 4000));
  CaptureWriter::get().record(RecordType::kDomain, body);
  return reinterpret_cast<nvtxDomainHandle_t>(static_cast<uintptr_t>(id));
}

void NVTX_API DomainDestroy(nvtxDomainHandle_t) {}

}  // namespace

}  // namespace tracedoc::inject

extern "C" __attribute__((visibility("default"))) int InitializeInjectionNvtx2(
    NvtxGetExportTableFunc_t get_export_table) {
  using namespace tracedoc::inject;
  if (get_export_table == nullptr) return 0;
  const auto* callbacks = static_cast<const NvtxExportTableCallbacks*>(get_export_table(NVTX_ETID_CALLBACKS));
  if (callbacks == nullptr || callbacks->GetModuleFunctionTable == nullptr) return 0;
  if (!CaptureWriter::get().enabled()) return 0;  // 0: NVTX goes back to its no-op functions
  using Entry = std::pair<unsigned int, NvtxFunctionPointer>;
  const auto fill = [&](NvtxCallbackModule module, std::initializer_list<Entry> entries) {
    NvtxFunctionTable table = nullptr;
    unsigned int size = 0;
    if (!callbacks->GetModuleFunctionTable(module, &table, &size) || table == nullptr) return;
    for (const auto& [id, fn] : entries) {
      if (id < size && table[id] != nullptr) *table[id] = fn;
    }
  };
  const auto fn = [](auto f) { return reinterpret_cast<NvtxFunctionPointer>(f); };
  fill(NVTX_CB_MODULE_CORE, {{NVTX_CBID_CORE_MarkEx, fn(MarkEx)},
                             {NVTX_CBID_CORE_MarkA, fn(MarkA)},
                             {NVTX_CBID_CORE_MarkW, fn(MarkW)},
                             {NVTX_CBID_CORE_RangeStartEx, fn(RangeStartEx)},
                             {NVTX_CBID_CORE_RangeStartA, fn(RangeStartA)},
                             {NVTX_CBID_CORE_RangeStartW, fn(RangeStartW)},
                             {NVTX_CBID_CORE_RangePushW, fn(RangePushW)},
                             {NVTX_CBID_CORE_NameOsThreadW, fn(NameOsThreadW)},
                             {NVTX_CBID_CORE_RangeEnd, fn(RangeEnd)},
                             {NVTX_CBID_CORE_RangePushEx, fn(RangePushEx)},
                             {NVTX_CBID_CORE_RangePushA, fn(RangePushA)},
                             {NVTX_CBID_CORE_RangePop, fn(RangePop)},
                             {NVTX_CBID_CORE_NameOsThreadA, fn(NameOsThreadA)}});
  fill(NVTX_CB_MODULE_CORE2, {{NVTX_CBID_CORE2_DomainMarkEx, fn(DomainMarkEx)},
                              {NVTX_CBID_CORE2_DomainRangeStartEx, fn(DomainRangeStartEx)},
                              {NVTX_CBID_CORE2_DomainRangeEnd, fn(DomainRangeEnd)},
                              {NVTX_CBID_CORE2_DomainRangePushEx, fn(DomainRangePushEx)},
                              {NVTX_CBID_CORE2_DomainRangePop, fn(DomainRangePop)},
                              {NVTX_CBID_CORE2_DomainRegisterStringA, fn(DomainRegisterStringA)},
                              {NVTX_CBID_CORE2_DomainRegisterStringW, fn(DomainRegisterStringW)},
                              {NVTX_CBID_CORE2_DomainCreateW, fn(DomainCreateW)},
                              {NVTX_CBID_CORE2_DomainCreateA, fn(DomainCreateA)},
                              {NVTX_CBID_CORE2_DomainDestroy, fn(DomainDestroy)}});
  return 1;
}
