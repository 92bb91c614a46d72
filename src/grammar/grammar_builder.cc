// GrammarBuilder: rule interning, repetition expansion and the final checks.
// Tested by tests/grammar/gbnf_parser_test.cc.
#include "grammar/grammar_builder.h"

#include <utility>

#include <fmt/format.h>

#include "grammar/grammar_checks.h"

namespace met {

uint32_t GrammarBuilder::rule_id(std::string_view name, std::string_view where) {
  auto it = rule_ids_.find(std::string(name));
  if (it != rule_ids_.end()) return it->second;
  const auto id = static_cast<uint32_t>(rules_.size());
  rules_.push_back({std::string(name), {}});
  defined_.push_back(false);
  first_use_.emplace_back(where);
  rule_ids_.emplace(std::string(name), id);
  return id;
}

uint32_t GrammarBuilder::new_rule(std::string_view base) {
  std::string name;
  do {
    name = fmt::format("{}_{}", base, ++next_helper_);
  } while (rule_ids_.count(name) > 0);
  return rule_id(name);
}

GrammarElement GrammarBuilder::chars(CharSet set) {
  std::string key = set.negated() ? "^" : "";
  for (const CharRange& r : set.ranges()) key += fmt::format("{:x}-{:x},", uint32_t{r.lo}, uint32_t{r.hi});
  auto [it, inserted] = char_set_ids_.emplace(key, static_cast<uint32_t>(char_sets_.size()));
  if (inserted) char_sets_.push_back(std::move(set));
  return {ElementKind::kChars, it->second};
}

void GrammarBuilder::define(uint32_t rule, const std::vector<GrammarSequence>& alternatives) {
  MET_CHECK(!defined_[rule], "rule '{}' defined twice", rules_[rule].name);
  defined_[rule] = true;
  for (const GrammarSequence& alt : alternatives) {
    rules_[rule].alternatives.push_back(static_cast<uint32_t>(elements_.size()));
    elements_.insert(elements_.end(), alt.begin(), alt.end());
    elements_.push_back({ElementKind::kEnd, 0});
  }
}

uint32_t GrammarBuilder::wrap(const GrammarSequence& item, uint32_t owner) {
  const uint32_t rule = new_rule(rules_[owner].name);
  define(rule, {item});
  return rule;
}

Result<GrammarSequence> GrammarBuilder::repeat(const GrammarSequence& item, uint32_t min,
                                               std::optional<uint32_t> max, uint32_t owner) {
  if (min > kMaxRepetition || (max && *max > kMaxRepetition)) {
    return out_of_range("repetition bound over {}", kMaxRepetition);
  }
  if (max && *max < min) return invalid_argument("repetition {{{},{}}} has max < min", min, *max);
  if (elements_.size() + item.size() * (max.value_or(min) + 2) > kMaxElements) {
    return out_of_range("grammar over {} elements", kMaxElements);
  }
  const GrammarElement one = item.size() == 1 ? item[0] : ref(wrap(item, owner));
  GrammarSequence out(min, one);
  if (!max) {  // star ::= one star | ""
    const uint32_t star = new_rule(rules_[owner].name);
    define(star, {{one, ref(star)}, {}});
    out.push_back(ref(star));
    return out;
  }
  // r_1 ::= one r_2 | "" ... r_k ::= one | "": tail references keep stacks flat.
  std::optional<uint32_t> next;
  for (uint32_t i = min; i < *max; ++i) {
    const uint32_t r = new_rule(rules_[owner].name);
    define(r, {next ? GrammarSequence{one, ref(*next)} : GrammarSequence{one}, {}});
    next = r;
  }
  if (next) out.push_back(ref(*next));
  return out;
}

Result<Grammar> GrammarBuilder::build(std::string_view root_name) && {
  for (size_t i = 0; i < rules_.size(); ++i) {
    if (defined_[i]) continue;
    const std::string& where = first_use_[i];
    return invalid_argument("{}{}undefined rule '{}'", where, where.empty() ? "" : ": ",
                            rules_[i].name);
  }
  auto root = rule_ids_.find(std::string(root_name));
  if (root == rule_ids_.end()) return invalid_argument("grammar has no '{}' rule", root_name);
  if (elements_.size() > kMaxElements) return out_of_range("grammar over {} elements", kMaxElements);
  Grammar grammar(std::move(rules_), std::move(elements_), std::move(char_sets_), root->second);
  MET_RETURN_IF_ERROR(check_grammar(grammar));
  return grammar;
}

}  // namespace met
