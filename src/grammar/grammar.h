// Grammar: the compiled, immutable form of a GBNF grammar or JSON Schema that
// GrammarMatcher runs. A grammar is a list of rules; a rule is a list of
// alternatives; an alternative is a sequence of elements, each a set of code
// points (CharSet) or a reference to a rule, ended by kEnd. All alternatives
// live in one flat element array, so a parse position is one uint32 index.
//
// Build one with compile_gbnf() (gbnf_parser.h), compile_json_schema()
// (json_schema.h) or json_object_grammar(); to_gbnf() prints it back.
//
// Invariants (established by GrammarBuilder::build, checked there):
//   - every alternative ends with kEnd; every rule has >= 1 alternative;
//   - every rule reference names a defined rule; root() is a rule;
//   - no rule is left-recursive (expanding references never loops without
//     consuming a code point), and the root can complete;
//   - CharSet ranges are sorted, disjoint, non-adjacent, within U+0..U+10FFFF.
// Threading: immutable after construction; share one Grammar between any
// number of matchers on any threads (it must outlive them).
// Tested by tests/grammar/gbnf_parser_test.cc and grammar_matcher_test.cc.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace met {

struct CharRange {
  char32_t lo = 0;  // inclusive
  char32_t hi = 0;  // inclusive
  bool operator==(const CharRange&) const = default;
};

// A set of code points: `ranges`, or its complement when `negated`.
// `.` is the negated empty set.
class CharSet {
 public:
  CharSet(std::vector<CharRange> ranges, bool negated);

  bool negated() const { return negated_; }
  std::span<const CharRange> ranges() const { return ranges_; }
  bool contains(char32_t cp) const;
  // Whether some code point in [lo, hi] is in the set.
  bool intersects(char32_t lo, char32_t hi) const;
  bool operator==(const CharSet& o) const { return negated_ == o.negated_ && ranges_ == o.ranges_; }

 private:
  bool in_ranges(char32_t cp) const;

  std::vector<CharRange> ranges_;  // normalized: sorted, merged
  bool negated_ = false;
  std::array<uint64_t, 2> ascii_ = {0, 0};  // contains() for cp < 128
};

enum class ElementKind : uint8_t { kChars, kRuleRef, kEnd };

struct GrammarElement {
  ElementKind kind = ElementKind::kEnd;
  uint32_t value = 0;  // kChars: char set index; kRuleRef: rule index
};

struct GrammarRule {
  std::string name;
  std::vector<uint32_t> alternatives;  // element index where each alternative starts
};

class Grammar {
 public:
  Grammar(std::vector<GrammarRule> rules, std::vector<GrammarElement> elements,
          std::vector<CharSet> char_sets, uint32_t root);

  uint32_t root() const { return root_; }
  std::span<const GrammarRule> rules() const { return rules_; }
  const GrammarRule& rule(uint32_t id) const { return rules_[id]; }
  const GrammarElement& element(uint32_t pos) const { return elements_[pos]; }
  size_t num_elements() const { return elements_.size(); }
  const CharSet& char_set(uint32_t id) const { return char_sets_[id]; }
  size_t num_char_sets() const { return char_sets_.size(); }

  // GBNF text of the grammar, one rule per line, root first, then by name.
  // Compiling it gives a grammar with the same language that prints the same.
  std::string to_gbnf() const;

 private:
  std::vector<GrammarRule> rules_;
  std::vector<GrammarElement> elements_;
  std::vector<CharSet> char_sets_;
  uint32_t root_ = 0;
};

// `cp` written for a GBNF literal or class ("a", "\n", "\x7F", "\u00E9").
std::string gbnf_escape(char32_t cp, bool in_class);

}  // namespace met
