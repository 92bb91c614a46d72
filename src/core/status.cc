// Status formatting. Tested by tests/core/status_test.cc.
#include "core/status.h"

namespace met {

std::string_view status_code_name(StatusCode code) {
  switch (code) {
    case StatusCode::kOk: return "ok";
    case StatusCode::kInvalidArgument: return "invalid argument";
    case StatusCode::kNotFound: return "not found";
    case StatusCode::kDataLoss: return "data loss";
    case StatusCode::kUnimplemented: return "unimplemented";
    case StatusCode::kOutOfRange: return "out of range";
    case StatusCode::kIo: return "i/o error";
    case StatusCode::kInternal: return "internal error";
  }
  return "unknown";
}

std::string Status::to_string() const {
  if (ok()) return "ok";
  return fmt::format("{}: {}", status_code_name(code_), message_);
}

Status Status::with_prefix(std::string_view prefix) const {
  if (ok()) return *this;
  return Status(code_, fmt::format("{}: {}", prefix, message_));
}

}  // namespace met
