// Jinja tests. Tested by tests/chat/jinja_tests_test.cc.
#include "chat/jinja/jinja_tests.h"

#include <array>

#include "chat/jinja/errors.h"
#include "chat/jinja/filters.h"
#include "chat/jinja/operators.h"
#include "chat/jinja/utf8.h"
#include "chat/jinja/named_table.h"

namespace met::jinja {
namespace {

Result<bool> is_defined(Runtime&, const Value& v, const CallArgs&) { return !v.is_undefined(); }
Result<bool> is_undefined(Runtime&, const Value& v, const CallArgs&) { return v.is_undefined(); }
Result<bool> is_none(Runtime&, const Value& v, const CallArgs&) { return v.is_none(); }
Result<bool> is_string(Runtime&, const Value& v, const CallArgs&) { return v.is_string(); }
Result<bool> is_number(Runtime&, const Value& v, const CallArgs&) { return v.is_number(); }
Result<bool> is_integer(Runtime&, const Value& v, const CallArgs&) { return v.kind() == ValueKind::kInt; }
Result<bool> is_float(Runtime&, const Value& v, const CallArgs&) { return v.kind() == ValueKind::kFloat; }
Result<bool> is_boolean(Runtime&, const Value& v, const CallArgs&) { return v.kind() == ValueKind::kBool; }
Result<bool> is_true(Runtime&, const Value& v, const CallArgs&) {
  return v.kind() == ValueKind::kBool && v.as_bool();
}
Result<bool> is_false(Runtime&, const Value& v, const CallArgs&) {
  return v.kind() == ValueKind::kBool && !v.as_bool();
}
Result<bool> is_mapping(Runtime&, const Value& v, const CallArgs&) { return v.kind() == ValueKind::kDict; }
Result<bool> is_callable(Runtime&, const Value& v, const CallArgs&) {
  return v.kind() == ValueKind::kFunction;
}
Result<bool> is_escaped(Runtime&, const Value&, const CallArgs&) { return false; }

Result<bool> is_iterable(Runtime&, const Value& v, const CallArgs&) {
  return v.is_undefined() || v.is_string() || v.is_sequence_object() || v.kind() == ValueKind::kDict;
}
Result<bool> is_sequence(Runtime&, const Value& v, const CallArgs&) {
  return v.is_undefined() || v.is_string() || v.is_sequence_object() || v.kind() == ValueKind::kDict;
}

Result<bool> is_lower_text(Runtime& rt, const Value& v, const CallArgs&) {
  MET_ASSIGN_OR_RETURN(Value s, to_string_value(rt, v));
  return to_lower(s.as_string()) == s.as_string();
}
Result<bool> is_upper_text(Runtime& rt, const Value& v, const CallArgs&) {
  MET_ASSIGN_OR_RETURN(Value s, to_string_value(rt, v));
  return to_upper(s.as_string()) == s.as_string();
}

Result<Value> one_arg(std::string_view test, const CallArgs& args) {
  MET_ASSIGN_OR_RETURN(BoundArgs a, BoundArgs::bind(test, args, {"other"}));
  if (!a.has(0)) return type_error("the '{}' test needs an argument", test);
  return a.get(0);
}

Result<bool> remainder_is(Runtime& rt, const Value& v, int64_t divisor, int64_t want) {
  if (!v.is_number()) return type_error("the value must be a number, not {}", type_name(v));
  MET_ASSIGN_OR_RETURN(Value r, arithmetic(rt, ArithOp::kMod, v, Value::integer(divisor)));
  return r.as_float() == static_cast<double>(want);
}
Result<bool> is_odd(Runtime& rt, const Value& v, const CallArgs&) { return remainder_is(rt, v, 2, 1); }
Result<bool> is_even(Runtime& rt, const Value& v, const CallArgs&) { return remainder_is(rt, v, 2, 0); }
Result<bool> is_divisibleby(Runtime& rt, const Value& v, const CallArgs& args) {
  MET_ASSIGN_OR_RETURN(Value n, one_arg("divisibleby", args));
  if (!v.is_number() || !n.is_number()) return type_error("divisibleby needs numbers");
  MET_ASSIGN_OR_RETURN(Value r, arithmetic(rt, ArithOp::kMod, v, n));
  return r.as_float() == 0.0;
}

template <CompareOp kOp>
Result<bool> is_compared(Runtime& rt, const Value& v, const CallArgs& args) {
  MET_ASSIGN_OR_RETURN(Value other, one_arg(compare_symbol(kOp), args));
  return compare(rt, kOp, v, other);
}

Result<bool> is_in(Runtime& rt, const Value& v, const CallArgs& args) {
  MET_ASSIGN_OR_RETURN(Value seq, one_arg("in", args));
  return contains(rt, seq, v);
}

Result<bool> is_sameas(Runtime& rt, const Value& v, const CallArgs& args) {
  MET_ASSIGN_OR_RETURN(Value other, one_arg("sameas", args));
  if (v.object_identity() != nullptr || other.object_identity() != nullptr) {
    return v.object_identity() == other.object_identity();
  }
  if (v.kind() != other.kind()) return false;
  return values_equal(rt, v, other);
}

Result<bool> is_filter(Runtime&, const Value& v, const CallArgs&) {
  return v.is_string() && find_filter(v.as_string()) != nullptr;
}
Result<bool> is_test(Runtime&, const Value& v, const CallArgs&) {
  return v.is_string() && find_test(v.as_string()) != nullptr;
}

constexpr NamedFn<TestFn> kTests[] = {
    {"defined", is_defined}, {"undefined", is_undefined}, {"none", is_none},
    {"string", is_string}, {"number", is_number}, {"integer", is_integer},
    {"float", is_float}, {"boolean", is_boolean}, {"true", is_true},
    {"false", is_false}, {"mapping", is_mapping}, {"iterable", is_iterable},
    {"sequence", is_sequence}, {"callable", is_callable}, {"escaped", is_escaped},
    {"lower", is_lower_text}, {"upper", is_upper_text}, {"odd", is_odd},
    {"even", is_even}, {"divisibleby", is_divisibleby},
    {"eq", is_compared<CompareOp::kEq>}, {"equalto", is_compared<CompareOp::kEq>},
    {"==", is_compared<CompareOp::kEq>}, {"ne", is_compared<CompareOp::kNe>},
    {"!=", is_compared<CompareOp::kNe>}, {"lt", is_compared<CompareOp::kLt>},
    {"lessthan", is_compared<CompareOp::kLt>}, {"<", is_compared<CompareOp::kLt>},
    {"le", is_compared<CompareOp::kLe>}, {"<=", is_compared<CompareOp::kLe>},
    {"gt", is_compared<CompareOp::kGt>}, {"greaterthan", is_compared<CompareOp::kGt>},
    {">", is_compared<CompareOp::kGt>}, {"ge", is_compared<CompareOp::kGe>},
    {">=", is_compared<CompareOp::kGe>}, {"in", is_in}, {"sameas", is_sameas},
    {"filter", is_filter}, {"test", is_test},
};

}  // namespace

TestFn find_test(std::string_view name) {
  return find_named(kTests, name);
}

}  // namespace met::jinja
