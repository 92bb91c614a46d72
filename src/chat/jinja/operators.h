// Python's operators over Values: == and the orderings (lexicographic for
// lists and tuples, code-point order for strings), arithmetic with Python's
// int/float rules (3/2 is 1.5, // and % floor, ** of ints stays an int, str
// and list repetition and concatenation), unary minus, `~` and `in`.
// An undefined operand is an UndefinedError where Jinja2's Undefined raises
// (arithmetic, ordering) and harmless where it does not (==, ~, in).
// Invariants: int results that overflow 64 bits are an OverflowError, not UB;
// every element compared costs a Runtime step.
// Threading: pure functions over the caller's Runtime. Tested by
// tests/chat/operators_test.cc.
#pragma once

#include "chat/jinja/runtime.h"
#include "chat/jinja/value.h"
#include "core/status.h"

namespace met::jinja {

enum class ArithOp : uint8_t { kAdd, kSub, kMul, kDiv, kFloorDiv, kMod, kPow };
enum class CompareOp : uint8_t { kEq, kNe, kLt, kLe, kGt, kGe };

std::string_view arith_symbol(ArithOp op);
std::string_view compare_symbol(CompareOp op);

Result<bool> values_equal(Runtime& rt, const Value& a, const Value& b);
Result<bool> compare(Runtime& rt, CompareOp op, const Value& a, const Value& b);
Result<Value> arithmetic(Runtime& rt, ArithOp op, const Value& a, const Value& b);
Result<Value> negate(const Value& v);
// +v: numbers only.
Result<Value> unary_plus(const Value& v);
// a ~ b: str(a) + str(b).
Result<Value> concat(Runtime& rt, const Value& a, const Value& b);
// item in container.
Result<bool> contains(Runtime& rt, const Value& container, const Value& item);

}  // namespace met::jinja
