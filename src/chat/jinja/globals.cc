// Global functions. Tested by tests/chat/globals_test.cc.
#include "chat/jinja/globals.h"

#include <array>
#include <ctime>

#include "chat/jinja/access.h"
#include "chat/jinja/errors.h"
#include "chat/jinja/filters.h"
#include "chat/jinja/named_table.h"

namespace met::jinja {
namespace {

Result<Value> global_range(Runtime& rt, const Value&, const CallArgs& args) {
  if (!args.named.empty() || args.positional.empty() || args.positional.size() > 3) {
    return type_error("range expected 1 to 3 integer arguments");
  }
  for (const Value& v : args.positional) {
    if (!v.is_integral()) return type_error("'{}' object cannot be interpreted as an integer", type_name(v));
  }
  const bool one = args.positional.size() == 1;
  const int64_t start = one ? 0 : args.positional[0].as_int();
  const int64_t stop = one ? args.positional[0].as_int() : args.positional[1].as_int();
  const int64_t step = args.positional.size() == 3 ? args.positional[2].as_int() : 1;
  if (step == 0) return value_error("range() arg 3 must not be zero");
  const __int128 span = step > 0 ? static_cast<__int128>(stop) - start : static_cast<__int128>(start) - stop;
  const __int128 abs_step = step > 0 ? step : -static_cast<__int128>(step);
  const __int128 count = span <= 0 ? 0 : (span + abs_step - 1) / abs_step;
  if (count > static_cast<__int128>(rt.string_room() / sizeof(Value))) {
    return limit_error("range() of {} items is too large", static_cast<int64_t>(std::min<__int128>(count, INT64_MAX)));
  }
  MET_RETURN_IF_ERROR(rt.spend(static_cast<uint64_t>(count)));
  std::vector<Value> items;
  items.reserve(static_cast<size_t>(count));
  for (__int128 i = 0; i < count; ++i) items.push_back(Value::integer(static_cast<int64_t>(start + i * step)));
  return rt.heap().list(std::move(items));
}

// dict(mapping_or_pairs, **kwargs) into `d`.
Status fill_dict(Runtime& rt, DictObj& d, const CallArgs& args, std::string_view fn) {
  if (args.positional.size() > 1) return type_error("{} expected at most 1 positional argument", fn);
  if (!args.positional.empty()) {
    const Value& src = args.positional[0];
    if (src.is_mapping_object()) {
      for (const auto& [k, v] : src.as_dict().entries) MET_RETURN_IF_ERROR(rt.heap().set_item(d, k, v));
    } else {
      MET_ASSIGN_OR_RETURN(std::vector<Value> pairs, iterate(rt, src));
      for (const Value& p : pairs) {
        if (!p.is_sequence_object() || p.as_list().items.size() != 2 || !is_hashable(p.as_list().items[0])) {
          return type_error("{} needs a mapping or pairs of a hashable key and a value", fn);
        }
        MET_RETURN_IF_ERROR(rt.heap().set_item(d, p.as_list().items[0], p.as_list().items[1]));
      }
    }
  }
  for (const NamedArg& n : args.named) {
    MET_ASSIGN_OR_RETURN(Value key, rt.heap().string(n.name));
    MET_RETURN_IF_ERROR(rt.heap().set_item(d, key, n.value));
  }
  return ok_status();
}

Result<Value> global_namespace(Runtime& rt, const Value&, const CallArgs& args) {
  MET_ASSIGN_OR_RETURN(DictObj * d, rt.heap().dict());
  MET_RETURN_IF_ERROR(fill_dict(rt, *d, args, "namespace"));
  return Value::name_space(d);
}

Result<Value> global_dict(Runtime& rt, const Value&, const CallArgs& args) {
  MET_ASSIGN_OR_RETURN(DictObj * d, rt.heap().dict());
  MET_RETURN_IF_ERROR(fill_dict(rt, *d, args, "dict"));
  return Value::dict(d);
}

Result<Value> global_raise_exception(Runtime& rt, const Value&, const CallArgs& args) {
  MET_ASSIGN_OR_RETURN(BoundArgs a, BoundArgs::bind("raise_exception", args, {"message"}));
  MET_ASSIGN_OR_RETURN(Value message, to_string_value(rt, a.get(0)));
  return template_error(message.as_string());
}

Result<Value> global_strftime_now(Runtime& rt, const Value&, const CallArgs& args) {
  MET_ASSIGN_OR_RETURN(BoundArgs a, BoundArgs::bind("strftime_now", args, {"format"}));
  if (!a.get(0).is_string()) return type_error("strftime_now() needs a format string");
  const std::string& format = a.get(0).as_string();
  if (format.empty()) return rt.heap().empty_string();
  if (format.size() > 4096) return value_error("strftime_now() format is too long");
  std::string buf(format.size() * 64 + 256, '\0');
  const size_t n = std::strftime(buf.data(), buf.size(), format.c_str(), &rt.now());
  buf.resize(n);
  return rt.heap().string(std::move(buf));
}

constexpr NamedFn<BuiltinFn> kGlobals[] = {
    {"range", global_range},
    {"namespace", global_namespace},
    {"dict", global_dict},
    {"raise_exception", global_raise_exception},
    {"strftime_now", global_strftime_now},
};

}  // namespace

Status install_globals(Runtime& rt, Scope& scope) {
  for (const NamedFn<BuiltinFn>& e : kGlobals) {
    FuncObj f;
    f.kind = FuncObj::Kind::kBuiltin;
    f.name = e.name;
    f.builtin = e.fn;
    MET_ASSIGN_OR_RETURN(FuncObj * obj, rt.heap().function(f));
    scope.set(e.name, Value::function(obj));
  }
  return ok_status();
}

}  // namespace met::jinja
