// Error wording. Tested by tests/chat/errors_test.cc.
#include "chat/jinja/errors.h"

#include "chat/jinja/value_format.h"

namespace met::jinja {
namespace {

std::string owner_repr(ValueKind owner) {
  switch (owner) {
    case ValueKind::kNone: return "None";
    case ValueKind::kUndefined: return "Undefined";
    case ValueKind::kBool: return "'bool object'";
    case ValueKind::kInt: return "'int object'";
    case ValueKind::kFloat: return "'float object'";
    case ValueKind::kString: return "'str object'";
    case ValueKind::kList: return "'list object'";
    case ValueKind::kTuple: return "'tuple object'";
    case ValueKind::kDict: return "'dict object'";
    case ValueKind::kNamespace: return "'jinja2.utils.Namespace object'";
    case ValueKind::kFunction: return "'function object'";
    case ValueKind::kLoop: return "'jinja2.runtime.LoopContext object'";
  }
  return "object";
}

}  // namespace

Status undefined_error(const Value& undefined) {
  const std::string* name = undefined.undefined_name();
  const std::string plain = name != nullptr ? *name : std::string("value");
  std::string quoted;  // repr(name), as Jinja2 prints it: a key may hold any character
  append_string_repr(plain, quoted);
  switch (undefined.undefined_reason()) {
    case UndefinedReason::kName:
      return invalid_argument("UndefinedError: {} is undefined", quoted);
    case UndefinedReason::kAttribute:
      return invalid_argument("UndefinedError: {} has no attribute {}",
                              owner_repr(undefined.undefined_owner()), quoted);
    case UndefinedReason::kItem:
      return invalid_argument("UndefinedError: {} has no element {}",
                              owner_repr(undefined.undefined_owner()), plain);
    case UndefinedReason::kParameter:
      return invalid_argument("UndefinedError: parameter {} was not provided", quoted);
    case UndefinedReason::kEmpty:
      return invalid_argument("UndefinedError: {}", plain);
  }
  return invalid_argument("UndefinedError: value is undefined");
}

Status located(const Status& s, SourceLoc at) {
  if (s.ok() || is_template_error(s)) return s;
  return Status(s.code(), fmt::format("{} (line {}, column {})", s.message(), at.line, at.column));
}

}  // namespace met::jinja
