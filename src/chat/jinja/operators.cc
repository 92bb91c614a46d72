// Python operators. Tested by tests/chat/operators_test.cc.
#include "chat/jinja/operators.h"

#include <cmath>
#include <limits>

#include "chat/jinja/errors.h"
#include "chat/jinja/filters.h"
#include "chat/jinja/value_format.h"

namespace met::jinja {
namespace {

Result<bool> equal_at(Runtime& rt, const Value& a, const Value& b, int depth);

Result<bool> sequences_equal(Runtime& rt, const ListObj& x, const ListObj& y, int depth) {
  if (x.items.size() != y.items.size()) return false;
  for (size_t i = 0; i < x.items.size(); ++i) {
    MET_ASSIGN_OR_RETURN(bool eq, equal_at(rt, x.items[i], y.items[i], depth + 1));
    if (!eq) return false;
  }
  return true;
}

Result<bool> dicts_equal(Runtime& rt, const DictObj& x, const DictObj& y, int depth) {
  if (x.entries.size() != y.entries.size()) return false;
  for (const auto& [key, value] : x.entries) {
    const Value* other = y.find(key);
    if (other == nullptr) return false;
    MET_ASSIGN_OR_RETURN(bool eq, equal_at(rt, value, *other, depth + 1));
    if (!eq) return false;
  }
  return true;
}

Result<bool> equal_at(Runtime& rt, const Value& a, const Value& b, int depth) {
  MET_RETURN_IF_ERROR(rt.spend());
  if (depth > kMaxValueDepth) {
    return limit_error("comparing values nested deeper than {} levels", kMaxValueDepth);
  }
  if (a.is_number() && b.is_number()) {
    if (a.is_integral() && b.is_integral()) return a.as_int() == b.as_int();
    return a.as_float() == b.as_float();
  }
  if (a.kind() != b.kind()) return false;
  if (a.object_identity() != nullptr && a.object_identity() == b.object_identity()) return true;
  switch (a.kind()) {
    case ValueKind::kUndefined:
    case ValueKind::kNone:
      return true;
    case ValueKind::kString:
      return a.as_string() == b.as_string();
    case ValueKind::kList:
    case ValueKind::kTuple:
      return sequences_equal(rt, a.as_list(), b.as_list(), depth);
    case ValueKind::kDict:
      return dicts_equal(rt, a.as_dict(), b.as_dict(), depth);
    case ValueKind::kBool:
    case ValueKind::kInt:
    case ValueKind::kFloat:
    case ValueKind::kNamespace:
    case ValueKind::kFunction:
    case ValueKind::kLoop:
      return false;  // numbers were handled above; the rest compare by identity
  }
  return false;
}

template <typename T>
bool apply_order(CompareOp op, const T& a, const T& b) {
  switch (op) {
    case CompareOp::kEq: return a == b;
    case CompareOp::kNe: return a != b;
    case CompareOp::kLt: return a < b;
    case CompareOp::kLe: return a <= b;
    case CompareOp::kGt: return a > b;
    case CompareOp::kGe: return a >= b;
  }
  return false;
}

Result<bool> order_sequences(Runtime& rt, CompareOp op, const ListObj& x, const ListObj& y) {
  const size_t n = std::min(x.items.size(), y.items.size());
  for (size_t i = 0; i < n; ++i) {
    MET_ASSIGN_OR_RETURN(bool eq, values_equal(rt, x.items[i], y.items[i]));
    if (!eq) return compare(rt, op, x.items[i], y.items[i]);
  }
  return apply_order(op, x.items.size(), y.items.size());
}

Status unsupported(std::string_view symbol, const Value& a, const Value& b) {
  if (a.is_undefined()) return undefined_error(a);
  if (b.is_undefined()) return undefined_error(b);
  return type_error("unsupported operand type(s) for {}: '{}' and '{}'", symbol, type_name(a),
                    type_name(b));
}

Result<Value> add_int(int64_t a, int64_t b, ArithOp op) {
  int64_t r = 0;
  bool overflow = false;
  switch (op) {
    case ArithOp::kAdd: overflow = __builtin_add_overflow(a, b, &r); break;
    case ArithOp::kSub: overflow = __builtin_sub_overflow(a, b, &r); break;
    case ArithOp::kMul: overflow = __builtin_mul_overflow(a, b, &r); break;
    case ArithOp::kDiv:
    case ArithOp::kFloorDiv:
    case ArithOp::kMod:
    case ArithOp::kPow:
      MET_CHECK(false, "add_int handles +, - and * only");
  }
  if (overflow) return invalid_argument("OverflowError: integer result does not fit 64 bits");
  return Value::integer(r);
}

Result<Value> int_pow(int64_t base, int64_t exp) {
  if (exp < 0) return Value::floating(std::pow(static_cast<double>(base), static_cast<double>(exp)));
  int64_t result = 1;
  while (exp > 0) {
    if ((exp & 1) != 0 && __builtin_mul_overflow(result, base, &result)) {
      return invalid_argument("OverflowError: integer result does not fit 64 bits");
    }
    exp >>= 1;
    if (exp > 0 && __builtin_mul_overflow(base, base, &base)) {
      return invalid_argument("OverflowError: integer result does not fit 64 bits");
    }
  }
  return Value::integer(result);
}

Result<Value> int_division(ArithOp op, int64_t a, int64_t b) {
  if (b == 0) {
    return invalid_argument("ZeroDivisionError: integer division or modulo by zero");
  }
  if (a == std::numeric_limits<int64_t>::min() && b == -1) {
    if (op == ArithOp::kMod) return Value::integer(0);
    return invalid_argument("OverflowError: integer result does not fit 64 bits");
  }
  int64_t q = a / b;
  int64_t r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) {
    --q;
    r += b;
  }
  return Value::integer(op == ArithOp::kMod ? r : q);
}

Result<Value> float_arith(ArithOp op, double a, double b) {
  switch (op) {
    case ArithOp::kAdd: return Value::floating(a + b);
    case ArithOp::kSub: return Value::floating(a - b);
    case ArithOp::kMul: return Value::floating(a * b);
    case ArithOp::kPow: return Value::floating(std::pow(a, b));
    case ArithOp::kDiv:
    case ArithOp::kFloorDiv:
    case ArithOp::kMod:
      break;
  }
  if (b == 0.0) return invalid_argument("ZeroDivisionError: float division by zero");
  if (op == ArithOp::kDiv) return Value::floating(a / b);
  // CPython's float divmod.
  double mod = std::fmod(a, b);
  double div = (a - mod) / b;
  if (mod != 0.0) {
    if ((b < 0) != (mod < 0)) {
      mod += b;
      div -= 1.0;
    }
  } else {
    mod = std::copysign(0.0, b);
  }
  if (op == ArithOp::kMod) return Value::floating(mod);
  double floordiv = std::copysign(0.0, a / b);
  if (div != 0.0) {
    floordiv = std::floor(div);
    if (div - floordiv > 0.5) floordiv += 1.0;
  }
  return Value::floating(floordiv);
}

Result<Value> number_arith(ArithOp op, const Value& a, const Value& b) {
  if (a.is_integral() && b.is_integral()) {
    switch (op) {
      case ArithOp::kAdd:
      case ArithOp::kSub:
      case ArithOp::kMul:
        return add_int(a.as_int(), b.as_int(), op);
      case ArithOp::kFloorDiv:
      case ArithOp::kMod:
        return int_division(op, a.as_int(), b.as_int());
      case ArithOp::kPow:
        return int_pow(a.as_int(), b.as_int());
      case ArithOp::kDiv:
        break;
    }
  }
  return float_arith(op, a.as_float(), b.as_float());
}

Result<Value> repeat(Runtime& rt, const Value& seq, int64_t times) {
  const int64_t n = std::max<int64_t>(times, 0);
  if (seq.is_string()) {
    const std::string& s = seq.as_string();
    if (!s.empty() && static_cast<uint64_t>(n) > rt.string_room() / s.size()) {
      return limit_error("'…' * {} needs more than {} bytes", n, rt.string_room());
    }
    std::string out;
    out.reserve(s.size() * static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) out += s;
    return rt.heap().string(std::move(out));
  }
  const auto& items = seq.as_list().items;
  if (!items.empty() && static_cast<uint64_t>(n) > rt.string_room() / (items.size() * sizeof(Value))) {
    return limit_error("[…] * {} needs more than {} bytes", n, rt.string_room());
  }
  MET_RETURN_IF_ERROR(rt.spend(items.size() * static_cast<size_t>(n)));
  std::vector<Value> out;
  for (int64_t i = 0; i < n; ++i) out.insert(out.end(), items.begin(), items.end());
  return seq.kind() == ValueKind::kTuple ? rt.heap().tuple(std::move(out)) : rt.heap().list(std::move(out));
}

Result<Value> join_sequences(Runtime& rt, const Value& a, const Value& b) {
  std::vector<Value> out = a.as_list().items;
  MET_RETURN_IF_ERROR(rt.spend(out.size() + b.as_list().items.size()));
  out.insert(out.end(), b.as_list().items.begin(), b.as_list().items.end());
  return a.kind() == ValueKind::kTuple ? rt.heap().tuple(std::move(out)) : rt.heap().list(std::move(out));
}

// Markup + str escapes the str, as markupsafe does.
Result<Value> add_markup(Runtime& rt, const Value& a, const Value& b) {
  MET_ASSIGN_OR_RETURN(Value x, a.is_markup() ? a : escape_markup(rt, a.as_string()));
  MET_ASSIGN_OR_RETURN(Value y, b.is_markup() ? b : escape_markup(rt, b.as_string()));
  if (x.as_string().size() + y.as_string().size() > rt.string_room()) {
    return limit_error("a string needs more than {} bytes", rt.string_room());
  }
  MET_ASSIGN_OR_RETURN(Value sum, rt.heap().string(x.as_string() + y.as_string()));
  return Value::markup(&sum.as_string());
}

Result<Value> add(Runtime& rt, const Value& a, const Value& b) {
  if (a.is_string() && b.is_string()) {
    if (a.is_markup() || b.is_markup()) return add_markup(rt, a, b);
    if (a.as_string().size() + b.as_string().size() > rt.string_room()) {
      return limit_error("a string needs more than {} bytes", rt.string_room());
    }
    return rt.heap().string(a.as_string() + b.as_string());
  }
  if (a.is_sequence_object() && a.kind() == b.kind()) return join_sequences(rt, a, b);
  if (a.is_string() && !b.is_undefined()) {
    return type_error("can only concatenate str (not \"{}\") to str", type_name(b));
  }
  if (a.kind() == ValueKind::kList && !b.is_undefined()) {
    return type_error("can only concatenate list (not \"{}\") to list", type_name(b));
  }
  return unsupported("+", a, b);
}

}  // namespace

std::string_view arith_symbol(ArithOp op) {
  switch (op) {
    case ArithOp::kAdd: return "+";
    case ArithOp::kSub: return "-";
    case ArithOp::kMul: return "*";
    case ArithOp::kDiv: return "/";
    case ArithOp::kFloorDiv: return "//";
    case ArithOp::kMod: return "%";
    case ArithOp::kPow: return "**";
  }
  return "?";
}

std::string_view compare_symbol(CompareOp op) {
  switch (op) {
    case CompareOp::kEq: return "==";
    case CompareOp::kNe: return "!=";
    case CompareOp::kLt: return "<";
    case CompareOp::kLe: return "<=";
    case CompareOp::kGt: return ">";
    case CompareOp::kGe: return ">=";
  }
  return "?";
}

Result<bool> values_equal(Runtime& rt, const Value& a, const Value& b) {
  return equal_at(rt, a, b, 0);
}

Result<bool> compare(Runtime& rt, CompareOp op, const Value& a, const Value& b) {
  if (op == CompareOp::kEq || op == CompareOp::kNe) {
    MET_ASSIGN_OR_RETURN(bool eq, values_equal(rt, a, b));
    return op == CompareOp::kEq ? eq : !eq;
  }
  MET_RETURN_IF_ERROR(rt.spend());
  if (a.is_number() && b.is_number()) {
    if (a.is_integral() && b.is_integral()) return apply_order(op, a.as_int(), b.as_int());
    return apply_order(op, a.as_float(), b.as_float());
  }
  if (a.is_string() && b.is_string()) return apply_order(op, a.as_string(), b.as_string());
  if (a.is_sequence_object() && a.kind() == b.kind()) return order_sequences(rt, op, a.as_list(), b.as_list());
  if (a.is_undefined()) return undefined_error(a);
  if (b.is_undefined()) return undefined_error(b);
  return type_error("'{}' not supported between instances of '{}' and '{}'", compare_symbol(op),
                    type_name(a), type_name(b));
}

Result<Value> arithmetic(Runtime& rt, ArithOp op, const Value& a, const Value& b) {
  if (a.is_number() && b.is_number()) return number_arith(op, a, b);
  if (op == ArithOp::kAdd) return add(rt, a, b);
  if (op == ArithOp::kMul) {
    const bool a_seq = a.is_string() || a.is_sequence_object();
    const bool b_seq = b.is_string() || b.is_sequence_object();
    if (a_seq && b.is_integral()) return repeat(rt, a, b.as_int());
    if (b_seq && a.is_integral()) return repeat(rt, b, a.as_int());
  }
  if (op == ArithOp::kMod && a.is_string()) {
    return unimplemented("printf-style formatting ('...' % value) is not supported");
  }
  return unsupported(arith_symbol(op), a, b);
}

Result<Value> negate(const Value& v) {
  if (v.is_integral()) {
    if (v.as_int() == std::numeric_limits<int64_t>::min()) {
      return invalid_argument("OverflowError: integer result does not fit 64 bits");
    }
    return Value::integer(-v.as_int());
  }
  if (v.kind() == ValueKind::kFloat) return Value::floating(-v.as_float());
  if (v.is_undefined()) return undefined_error(v);
  return type_error("bad operand type for unary -: '{}'", type_name(v));
}

Result<Value> unary_plus(const Value& v) {
  if (v.is_integral()) return Value::integer(v.as_int());
  if (v.kind() == ValueKind::kFloat) return v;
  if (v.is_undefined()) return undefined_error(v);
  return type_error("bad operand type for unary +: '{}'", type_name(v));
}

Result<Value> concat(Runtime& rt, const Value& a, const Value& b) {
  std::string out;
  MET_RETURN_IF_ERROR(append_str(a, out, rt.string_room()));
  MET_RETURN_IF_ERROR(append_str(b, out, rt.string_room()));
  if (out.size() > rt.string_room()) return limit_error("a string needs more than {} bytes", rt.string_room());
  return rt.heap().string(std::move(out));
}

Result<bool> contains(Runtime& rt, const Value& container, const Value& item) {
  switch (container.kind()) {
    case ValueKind::kString:
      if (!item.is_string()) {
        return type_error("'in <string>' requires string as left operand, not {}", type_name(item));
      }
      return container.as_string().find(item.as_string()) != std::string::npos;
    case ValueKind::kList:
    case ValueKind::kTuple:
      for (const Value& x : container.as_list().items) {
        MET_ASSIGN_OR_RETURN(bool eq, values_equal(rt, x, item));
        if (eq) return true;
      }
      return false;
    case ValueKind::kDict:
    case ValueKind::kNamespace:
      if (!is_hashable(item)) return type_error("unhashable type: '{}'", type_name(item));
      return container.as_dict().find(item) != nullptr;
    case ValueKind::kUndefined:
      return false;
    case ValueKind::kNone:
    case ValueKind::kBool:
    case ValueKind::kInt:
    case ValueKind::kFloat:
    case ValueKind::kFunction:
    case ValueKind::kLoop:
      break;
  }
  return type_error("argument of type '{}' is not iterable", type_name(container));
}

}  // namespace met::jinja
