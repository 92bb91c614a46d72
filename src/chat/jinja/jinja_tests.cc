// Jinja tests. Tested by tests/chat/jinja_tests_test.cc.
#include "chat/jinja/jinja_tests.h"

#include <array>

#include "chat/jinja/errors.h"
#include "chat/jinja/filters.h"
#include "chat/jinja/operators.h"
#include "chat/jinja/utf8.h"

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

struct TestEntry {
  std::string_view name;
  TestFn fn;
};

constexpr std::array kTests = {
    TestEntry{"defined", is_defined}, TestEntry{"undefined", is_undefined}, TestEntry{"none", is_none},
    TestEntry{"string", is_string}, TestEntry{"number", is_number}, TestEntry{"integer", is_integer},
    TestEntry{"float", is_float}, TestEntry{"boolean", is_boolean}, TestEntry{"true", is_true},
    TestEntry{"false", is_false}, TestEntry{"mapping", is_mapping}, TestEntry{"iterable", is_iterable},
    TestEntry{"sequence", is_sequence}, TestEntry{"callable", is_callable}, TestEntry{"escaped", is_escaped},
    TestEntry{"lower", is_lower_text}, TestEntry{"upper", is_upper_text}, TestEntry{"odd", is_odd},
    TestEntry{"even", is_even}, TestEntry{"divisibleby", is_divisibleby},
    TestEntry{"eq", is_compared<CompareOp::kEq>}, TestEntry{"equalto", is_compared<CompareOp::kEq>},
    TestEntry{"==", is_compared<CompareOp::kEq>}, TestEntry{"ne", is_compared<CompareOp::kNe>},
    TestEntry{"!=", is_compared<CompareOp::kNe>}, TestEntry{"lt", is_compared<CompareOp::kLt>},
    TestEntry{"lessthan", is_compared<CompareOp::kLt>}, TestEntry{"<", is_compared<CompareOp::kLt>},
    TestEntry{"le", is_compared<CompareOp::kLe>}, TestEntry{"<=", is_compared<CompareOp::kLe>},
    TestEntry{"gt", is_compared<CompareOp::kGt>}, TestEntry{"greaterthan", is_compared<CompareOp::kGt>},
    TestEntry{">", is_compared<CompareOp::kGt>}, TestEntry{"ge", is_compared<CompareOp::kGe>},
    TestEntry{">=", is_compared<CompareOp::kGe>}, TestEntry{"in", is_in}, TestEntry{"sameas", is_sameas},
    TestEntry{"filter", is_filter}, TestEntry{"test", is_test},
};

}  // namespace

TestFn find_test(std::string_view name) {
  for (const TestEntry& e : kTests) {
    if (e.name == name) return e.fn;
  }
  return nullptr;
}

}  // namespace met::jinja
