// Errors as values. Nothing in the engine throws across a module boundary: functions that can fail
// return Status (no value) or Result<T> (a value or an error), in the spirit of std::expected.
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace tracedoc {

enum class ErrorCode {
  kOk = 0,
  kUsage,     // bad command line
  kBadInput,  // the input file is not what we can read (structural corruption, wrong format)
  kIo,        // cannot open, read or write a file
  kNoData,    // the input lacks the data a report needs (not an error for the CLI)
  kInternal,
  kInterrupted,  // stopped on request (common/stop_request.h): Python's Ctrl-C
};

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(ErrorCode code, std::string message) : code_(code), message_(std::move(message)) {}
  static Status Ok() { return {}; }

  bool ok() const { return code_ == ErrorCode::kOk; }
  ErrorCode code() const { return code_; }
  const std::string& message() const { return message_; }

 private:
  ErrorCode code_ = ErrorCode::kOk;
  std::string message_;
};

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : data_(std::move(value)) {}       // NOLINT: implicit by design
  Result(Status error) : data_(std::move(error)) {}  // NOLINT: implicit by design

  bool ok() const { return std::holds_alternative<T>(data_); }
  explicit operator bool() const { return ok(); }
  T& value() & { return std::get<T>(data_); }
  const T& value() const& { return std::get<T>(data_); }
  T&& value() && { return std::get<T>(std::move(data_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  const Status& status() const {
    static const Status kOkStatus;
    return ok() ? kOkStatus : std::get<Status>(data_);
  }

 private:
  std::variant<T, Status> data_;
};

inline Status BadInput(std::string message) { return {ErrorCode::kBadInput, std::move(message)}; }
inline Status IoError(std::string message) { return {ErrorCode::kIo, std::move(message)}; }
inline Status UsageError(std::string message) { return {ErrorCode::kUsage, std::move(message)}; }
inline Status NoData(std::string message) { return {ErrorCode::kNoData, std::move(message)}; }

#define TRACEDOC_RETURN_IF_ERROR(expr) \
  do {                                 \
    ::tracedoc::Status _st = (expr);   \
    if (!_st.ok()) return _st;         \
  } while (0)

// TRACEDOC_ASSIGN_OR_RETURN(auto trace, read_trace(path)); declares `trace` as the value of a
// Result, or returns its error from the enclosing function (which returns Status or any Result).
#define TRACEDOC_ASSIGN_OR_RETURN(lhs, expr) \
  TRACEDOC_ASSIGN_OR_RETURN_IMPL_(TRACEDOC_STATUS_CONCAT_(tracedoc_result_, __LINE__), lhs, expr)
#define TRACEDOC_ASSIGN_OR_RETURN_IMPL_(result, lhs, expr) \
  auto result = (expr);                                    \
  if (!result.ok()) return result.status();                \
  lhs = std::move(result).value()
#define TRACEDOC_STATUS_CONCAT_(a, b) TRACEDOC_STATUS_CONCAT_INNER_(a, b)
#define TRACEDOC_STATUS_CONCAT_INNER_(a, b) a##b

}  // namespace tracedoc
