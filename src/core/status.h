// Status and Result<T>: errors as values (STYLE.md rule 1).
// A Status is ok or carries a code and a one-line message that says what and
// where ("gguf: tensor 'x' data [96, 4192) past end of file (4096 bytes)").
// Invariants: an ok Status has an empty message; Result<T> holds exactly one of
// a value or a non-ok Status. Threading: plain values, any thread.
// Tested by tests/core/status_test.cc.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

#include <fmt/format.h>

#include "core/check.h"

namespace met {

enum class StatusCode : uint8_t {
  kOk,
  kInvalidArgument,  // the caller's input is wrong (bad flag, bad request)
  kNotFound,         // a file, key or tensor that must exist does not
  kDataLoss,         // a file is truncated, corrupt or hostile
  kUnimplemented,    // valid input met does not support (yet)
  kOutOfRange,       // a count or size past what met allows
  kIo,               // the OS refused (open, mmap, write)
  kInternal,         // a fault that is not the caller's
};

std::string_view status_code_name(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {
    MET_DCHECK(code != StatusCode::kOk);
  }
  static Status ok_status() { return Status(); }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // "invalid argument: <message>" or "ok".
  std::string to_string() const;

  // Returns a copy whose message is "<prefix>: <message>" (adds where an error
  // happened as it travels up).
  Status with_prefix(std::string_view prefix) const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

inline Status ok_status() { return Status(); }

template <typename... Args>
Status invalid_argument(fmt::format_string<Args...> f, Args&&... args) {
  return Status(StatusCode::kInvalidArgument, fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args>
Status not_found(fmt::format_string<Args...> f, Args&&... args) {
  return Status(StatusCode::kNotFound, fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args>
Status data_loss(fmt::format_string<Args...> f, Args&&... args) {
  return Status(StatusCode::kDataLoss, fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args>
Status unimplemented(fmt::format_string<Args...> f, Args&&... args) {
  return Status(StatusCode::kUnimplemented, fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args>
Status out_of_range(fmt::format_string<Args...> f, Args&&... args) {
  return Status(StatusCode::kOutOfRange, fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args>
Status io_error(fmt::format_string<Args...> f, Args&&... args) {
  return Status(StatusCode::kIo, fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args>
Status internal_error(fmt::format_string<Args...> f, Args&&... args) {
  return Status(StatusCode::kInternal, fmt::format(f, std::forward<Args>(args)...));
}

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Status status) : v_(std::move(status)) {  // NOLINT: implicit by design
    MET_CHECK(!std::get<Status>(v_).ok(), "Result built from an ok Status");
  }

  bool ok() const { return std::holds_alternative<T>(v_); }
  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<Status>(v_);
  }
  T& value() & {
    MET_CHECK(ok(), "Result::value() on error: {}", std::get<Status>(v_).to_string());
    return std::get<T>(v_);
  }
  const T& value() const& {
    MET_CHECK(ok(), "Result::value() on error: {}", std::get<Status>(v_).to_string());
    return std::get<T>(v_);
  }
  T&& value() && {
    MET_CHECK(ok(), "Result::value() on error: {}", std::get<Status>(v_).to_string());
    return std::get<T>(std::move(v_));
  }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*this).value(); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace met

#define MET_STATUS_CONCAT_INNER(a, b) a##b
#define MET_STATUS_CONCAT(a, b) MET_STATUS_CONCAT_INNER(a, b)

// Returns from the enclosing function when `expr` (a Status) is not ok.
#define MET_RETURN_IF_ERROR(expr)               \
  do {                                          \
    ::met::Status met_status_ = (expr);         \
    if (!met_status_.ok()) return met_status_;  \
  } while (0)

// `MET_ASSIGN_OR_RETURN(auto x, f());` binds the value or returns the error.
#define MET_ASSIGN_OR_RETURN(lhs, expr) \
  MET_ASSIGN_OR_RETURN_IMPL(MET_STATUS_CONCAT(met_result_, __LINE__), lhs, expr)
#define MET_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                              \
  if (!tmp.ok()) return tmp.status();             \
  lhs = std::move(tmp).value()
