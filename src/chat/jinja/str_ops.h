// Python's str algorithms over UTF-8 text, shared by the str methods and the
// filters: strip with Python's whitespace or a set of characters, split and
// rsplit (whitespace runs or a separator, with maxsplit), splitlines (every
// Python line boundary), replace (with count; an empty pattern inserts
// between characters), find by code point, title (str.title and Jinja's
// |title differ), capitalize. Callers bound the size of what they build.
// Threading: pure functions. Tested by tests/chat/str_ops_test.cc.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace met::jinja {

enum class StripSide : uint8_t { kBoth, kLeft, kRight };

// `chars` nullopt strips whitespace.
std::string_view py_strip(std::string_view s, std::optional<std::string_view> chars, StripSide side);
// `sep` nullopt splits on whitespace runs; max_split < 0 means no limit.
// REQUIRES: sep, when given, is not empty.
std::vector<std::string_view> py_split(std::string_view s, std::optional<std::string_view> sep,
                                       int64_t max_split);
std::vector<std::string_view> py_rsplit(std::string_view s, std::optional<std::string_view> sep,
                                        int64_t max_split);
std::vector<std::string_view> py_splitlines(std::string_view s, bool keep_ends);
// count < 0 replaces all. The result may be large: callers check
// replaced_size() first.
std::string py_replace(std::string_view s, std::string_view old, std::string_view replacement,
                       int64_t count);
size_t replaced_size(std::string_view s, std::string_view old, std::string_view replacement, int64_t count);
// Index in code points of the first (or last) occurrence, or -1.
int64_t py_find(std::string_view s, std::string_view sub, bool from_right);
// Non-overlapping occurrences (len + 1 for an empty pattern).
int64_t py_count(std::string_view s, std::string_view sub);
std::string py_title(std::string_view s);
std::string py_capitalize(std::string_view s);
// Jinja's |title: each word after a run of spaces, '-', '(', '{', '[' or '<'
// gets an upper-case first letter and lower-case rest.
std::string jinja_title(std::string_view s);
// Number of \w+ runs (Jinja's |wordcount).
int64_t word_count(std::string_view s);

}  // namespace met::jinja
