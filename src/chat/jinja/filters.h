// The filters templates apply with `|`, looked up by name: text filters
// (filters_text.cc: trim, lower, upper, title, capitalize, replace, indent,
// center, wordcount, escape, safe, string), sequence filters
// (filters_sequence.cc: length, count, first, last, join, list, reverse, sort,
// unique, dictsort, items, batch, sum, min, max, map, select, reject,
// selectattr, rejectattr) and conversions (filters_convert.cc: tojson as
// Hugging Face defines it, int, float, abs, round, default, d, attr).
// Threading: the tables are immutable; filters use the caller's Runtime.
// Tested by tests/chat/filters_text_test.cc, filters_sequence_test.cc and
// filters_convert_test.cc.
#pragma once

#include <string_view>

#include "chat/jinja/callable.h"
#include "chat/jinja/runtime.h"
#include "chat/jinja/value.h"

namespace met::jinja {

using FilterFn = Result<Value> (*)(Runtime& rt, const Value& input, const CallArgs& args);

// The filter `name`, or null.
FilterFn find_filter(std::string_view name);

FilterFn find_text_filter(std::string_view name);
FilterFn find_sequence_filter(std::string_view name);
FilterFn find_convert_filter(std::string_view name);

// str(v) as a heap string (v itself when it is one).
Result<Value> to_string_value(Runtime& rt, const Value& v);
// Markup(escape(s)): & < > " ' as HTML entities, marked safe.
Result<Value> escape_markup(Runtime& rt, std::string_view s);

}  // namespace met::jinja
