// GrammarBuilder: assembles a Grammar rule by rule for the GBNF parser (and
// anything else that builds grammars): interns rule names and char sets,
// expands repetitions into helper rules, and on build() runs the checks that
// make a Grammar's invariants true (grammar_checks.h).
// Invariants: a rule id stays valid once handed out; helper rules get fresh
// names "<base>_<n>" that no GBNF name can collide with once defined.
// Threading: single-threaded use. Tested by tests/grammar/gbnf_parser_test.cc.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/status.h"
#include "grammar/grammar.h"

namespace met {

using GrammarSequence = std::vector<GrammarElement>;  // no kEnd inside

class GrammarBuilder {
 public:
  // Largest repetition bound and grammar size accepted (errors beyond them).
  static constexpr uint32_t kMaxRepetition = 10000;
  static constexpr size_t kMaxElements = size_t{1} << 22;

  // The id of rule `name`, creating it undefined on first use; `where`
  // (e.g. "3:14") is remembered for an "undefined rule" error.
  uint32_t rule_id(std::string_view name, std::string_view where = {});
  // A new helper rule named "<base>_<n>".
  uint32_t new_rule(std::string_view base);
  bool is_defined(uint32_t rule) const { return defined_[rule]; }
  const std::string& rule_name(uint32_t rule) const { return rules_[rule].name; }

  GrammarElement chars(CharSet set);
  static GrammarElement ref(uint32_t rule) { return {ElementKind::kRuleRef, rule}; }

  // Gives `rule` its alternatives. REQUIRES: not defined yet.
  void define(uint32_t rule, const std::vector<GrammarSequence>& alternatives);

  // `item` repeated min..max times (max nullopt: unbounded), as elements to
  // splice into a sequence; helper rules are named after rule `owner`.
  Result<GrammarSequence> repeat(const GrammarSequence& item, uint32_t min,
                                 std::optional<uint32_t> max, uint32_t owner);

  // Checks undefined rules, the root, left recursion and completability.
  Result<Grammar> build(std::string_view root_name) &&;

 private:
  uint32_t wrap(const GrammarSequence& item, uint32_t owner);

  std::vector<GrammarRule> rules_;
  std::vector<bool> defined_;
  std::vector<std::string> first_use_;
  std::unordered_map<std::string, uint32_t> rule_ids_;
  std::vector<GrammarElement> elements_;
  std::vector<CharSet> char_sets_;
  std::unordered_map<std::string, uint32_t> char_set_ids_;  // keyed by class text
  uint32_t next_helper_ = 0;
};

}  // namespace met
