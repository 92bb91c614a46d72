// Grammar and CharSet: normalization, membership and printing back to GBNF.
// Tested by tests/grammar/gbnf_parser_test.cc and grammar_matcher_test.cc.
#include "grammar/grammar.h"

#include <algorithm>
#include <utility>

#include <fmt/format.h>

#include "core/check.h"

namespace met {
namespace {

std::vector<CharRange> normalized(std::vector<CharRange> ranges) {
  std::sort(ranges.begin(), ranges.end(),
            [](const CharRange& a, const CharRange& b) { return a.lo < b.lo; });
  std::vector<CharRange> out;
  for (const CharRange& r : ranges) {
    MET_CHECK(r.lo <= r.hi && r.hi <= 0x10FFFF, "bad char range [{}, {}]", uint32_t{r.lo},
              uint32_t{r.hi});
    if (!out.empty() && r.lo <= out.back().hi + 1) {
      out.back().hi = std::max(out.back().hi, r.hi);
    } else {
      out.push_back(r);
    }
  }
  return out;
}

}  // namespace

CharSet::CharSet(std::vector<CharRange> ranges, bool negated)
    : ranges_(normalized(std::move(ranges))), negated_(negated) {
  for (char32_t cp = 0; cp < 128; ++cp) {
    if (in_ranges(cp) != negated_) ascii_[cp / 64] |= uint64_t{1} << (cp % 64);
  }
}

bool CharSet::in_ranges(char32_t cp) const {
  auto it = std::upper_bound(ranges_.begin(), ranges_.end(), cp,
                             [](char32_t c, const CharRange& r) { return c < r.lo; });
  return it != ranges_.begin() && cp <= std::prev(it)->hi;
}

bool CharSet::contains(char32_t cp) const {
  if (cp < 128) return (ascii_[cp / 64] >> (cp % 64)) & 1;
  return in_ranges(cp) != negated_;
}

bool CharSet::intersects(char32_t lo, char32_t hi) const {
  if (!negated_) {
    for (const CharRange& r : ranges_) {
      if (r.lo <= hi && lo <= r.hi) return true;
    }
    return false;
  }
  // Negated: [lo, hi] must not be covered entirely by the (merged) ranges.
  for (const CharRange& r : ranges_) {
    if (r.lo <= lo && hi <= r.hi) return false;
  }
  return true;
}

Grammar::Grammar(std::vector<GrammarRule> rules, std::vector<GrammarElement> elements,
                 std::vector<CharSet> char_sets, uint32_t root)
    : rules_(std::move(rules)),
      elements_(std::move(elements)),
      char_sets_(std::move(char_sets)),
      root_(root) {
  MET_CHECK(root_ < rules_.size(), "root rule {} of {}", root_, rules_.size());
}

std::string gbnf_escape(char32_t cp, bool in_class) {
  switch (cp) {
    case '\n': return "\\n";
    case '\r': return "\\r";
    case '\t': return "\\t";
    case '\\': return "\\\\";
    case '"': return in_class ? "\"" : "\\\"";
    case '[': return in_class ? "\\[" : "[";
    case ']': return in_class ? "\\]" : "]";
    case '-': return in_class ? "\\-" : "-";
    case '^': return in_class ? "\\^" : "^";
    default: break;
  }
  if (cp < 0x20 || cp == 0x7F) return fmt::format("\\x{:02X}", uint32_t{cp});
  if (cp < 0x80) return std::string(1, static_cast<char>(cp));
  if (cp <= 0xFFFF) return fmt::format("\\u{:04X}", uint32_t{cp});
  return fmt::format("\\U{:08X}", uint32_t{cp});
}

namespace {

std::string class_text(const CharSet& set) {
  if (set.negated() && set.ranges().empty()) return ".";
  std::string out = set.negated() ? "[^" : "[";
  for (const CharRange& r : set.ranges()) {
    out += gbnf_escape(r.lo, true);
    if (r.hi != r.lo) out += "-" + gbnf_escape(r.hi, true);
  }
  return out + "]";
}

bool is_single(const CharSet& set) {
  return !set.negated() && set.ranges().size() == 1 && set.ranges()[0].lo == set.ranges()[0].hi;
}

}  // namespace

std::string Grammar::to_gbnf() const {
  std::string out;
  auto print_rule = [&](const GrammarRule& rule) {
    out += rule.name + " ::=";
    for (size_t a = 0; a < rule.alternatives.size(); ++a) {
      if (a > 0) out += " |";
      uint32_t pos = rule.alternatives[a];
      if (elements_[pos].kind == ElementKind::kEnd) out += " \"\"";
      bool in_literal = false;
      for (; elements_[pos].kind != ElementKind::kEnd; ++pos) {
        const GrammarElement& e = elements_[pos];
        const bool single = e.kind == ElementKind::kChars && is_single(char_sets_[e.value]);
        if (in_literal && !single) out += "\"";
        if (single) {
          if (!in_literal) out += " \"";
          out += gbnf_escape(char_sets_[e.value].ranges()[0].lo, false);
        } else if (e.kind == ElementKind::kChars) {
          out += " " + class_text(char_sets_[e.value]);
        } else {
          out += " " + rules_[e.value].name;
        }
        in_literal = single;
      }
      if (in_literal) out += "\"";
    }
    out += "\n";
  };
  std::vector<const GrammarRule*> others;
  for (size_t i = 0; i < rules_.size(); ++i) {
    if (i != root_) others.push_back(&rules_[i]);
  }
  std::sort(others.begin(), others.end(), [](const GrammarRule* a, const GrammarRule* b) { return a->name < b->name; });
  print_rule(rules_[root_]);
  for (const GrammarRule* r : others) print_rule(*r);
  return out;
}

}  // namespace met
