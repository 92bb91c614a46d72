// The `loop` variable. Tested by tests/chat/loop_test.cc.
#include "chat/jinja/loop_object.h"

#include "chat/jinja/access.h"
#include "chat/jinja/errors.h"
#include "chat/jinja/operators.h"
#include "chat/jinja/runtime.h"

namespace met::jinja {
namespace {

Result<Value> loop_cycle(Runtime&, const Value& self, const CallArgs& args) {
  if (args.positional.empty()) return type_error("no items for cycling given");
  const LoopObj& loop = self.as_loop();
  return args.positional[loop.index0 % args.positional.size()];
}

Result<Value> loop_changed(Runtime& rt, const Value& self, const CallArgs& args) {
  LoopObj& loop = self.as_loop();
  if (loop.last_changed && loop.last_changed->size() == args.positional.size()) {
    bool same = true;
    for (size_t i = 0; i < args.positional.size() && same; ++i) {
      MET_ASSIGN_OR_RETURN(same, values_equal(rt, (*loop.last_changed)[i], args.positional[i]));
    }
    if (same) return Value::boolean(false);
  }
  loop.last_changed = args.positional;
  return Value::boolean(true);
}

Value undefined_item(std::string_view which) {
  static const std::string kPrev = "there is no previous item";
  static const std::string kNext = "there is no next item";
  return Value::undefined(UndefinedReason::kEmpty, which == "previtem" ? &kPrev : &kNext, ValueKind::kLoop);
}

}  // namespace

Result<std::optional<Value>> loop_attribute(Runtime& rt, const Value& self, std::string_view name) {
  const LoopObj& loop = self.as_loop();
  const auto i = static_cast<int64_t>(loop.index0);
  const auto n = static_cast<int64_t>(loop.items.size());
  if (name == "index") return std::optional(Value::integer(i + 1));
  if (name == "index0") return std::optional(Value::integer(i));
  if (name == "revindex") return std::optional(Value::integer(n - i));
  if (name == "revindex0") return std::optional(Value::integer(n - i - 1));
  if (name == "first") return std::optional(Value::boolean(i == 0));
  if (name == "last") return std::optional(Value::boolean(i == n - 1));
  if (name == "length") return std::optional(Value::integer(n));
  if (name == "depth") return std::optional(Value::integer(1));
  if (name == "depth0") return std::optional(Value::integer(0));
  if (name == "previtem") {
    return std::optional(i > 0 ? loop.items[loop.index0 - 1] : undefined_item(name));
  }
  if (name == "nextitem") {
    return std::optional(i + 1 < n ? loop.items[loop.index0 + 1] : undefined_item(name));
  }
  if (name == "cycle" || name == "changed") {
    MET_ASSIGN_OR_RETURN(Value fn, bind_method(rt, self, name == "cycle" ? "cycle" : "changed",
                                               name == "cycle" ? loop_cycle : loop_changed));
    return std::optional(fn);
  }
  return std::optional<Value>();
}

}  // namespace met::jinja
