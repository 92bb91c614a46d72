// check_grammar: nullable and completable fixpoints, then a cycle search over
// "may start with" edges. Tested by tests/grammar/gbnf_parser_test.cc.
#include "grammar/grammar_checks.h"

#include <string>
#include <vector>

namespace met {
namespace {

// Fixpoint: rule r is marked when some alternative has every element marked,
// where a char element counts as `chars_count` and a reference as its rule.
std::vector<bool> fixpoint(const Grammar& g, bool chars_count) {
  std::vector<bool> marked(g.rules().size(), false);
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t r = 0; r < g.rules().size(); ++r) {
      if (marked[r]) continue;
      for (uint32_t pos : g.rule(static_cast<uint32_t>(r)).alternatives) {
        bool all = true;
        for (; g.element(pos).kind != ElementKind::kEnd && all; ++pos) {
          const GrammarElement& e = g.element(pos);
          all = e.kind == ElementKind::kChars ? chars_count : marked[e.value];
        }
        if (all) {
          marked[r] = changed = true;
          break;
        }
      }
    }
  }
  return marked;
}

// Rules that rule r may expand to before consuming anything.
std::vector<uint32_t> leading_refs(const Grammar& g, uint32_t r, const std::vector<bool>& nullable) {
  std::vector<uint32_t> out;
  for (uint32_t pos : g.rule(r).alternatives) {
    for (; g.element(pos).kind == ElementKind::kRuleRef; ++pos) {
      out.push_back(g.element(pos).value);
      if (!nullable[g.element(pos).value]) break;
    }
  }
  return out;
}

Status find_left_recursion(const Grammar& g, const std::vector<bool>& nullable) {
  enum Color : uint8_t { kWhite, kGrey, kBlack };
  std::vector<Color> color(g.rules().size(), kWhite);
  std::vector<std::vector<uint32_t>> edges(g.rules().size());
  for (uint32_t r = 0; r < g.rules().size(); ++r) edges[r] = leading_refs(g, r, nullable);
  for (uint32_t start = 0; start < g.rules().size(); ++start) {
    if (color[start] != kWhite) continue;
    std::vector<std::pair<uint32_t, size_t>> stack = {{start, 0}};  // iterative DFS
    color[start] = kGrey;
    while (!stack.empty()) {
      auto& [r, next] = stack.back();
      if (next == edges[r].size()) {
        color[r] = kBlack;
        stack.pop_back();
        continue;
      }
      const uint32_t s = edges[r][next++];
      if (color[s] == kGrey) {
        std::string path;
        bool on = false;
        for (const auto& frame : stack) {
          on = on || frame.first == s;
          if (on) path += g.rule(frame.first).name + " -> ";
        }
        return invalid_argument("left recursion: {}{}", path, g.rule(s).name);
      }
      if (color[s] == kWhite) {
        color[s] = kGrey;
        stack.push_back({s, 0});
      }
    }
  }
  return ok_status();
}

std::vector<bool> reachable_from_root(const Grammar& g) {
  std::vector<bool> seen(g.rules().size(), false);
  std::vector<uint32_t> todo = {g.root()};
  seen[g.root()] = true;
  while (!todo.empty()) {
    const uint32_t r = todo.back();
    todo.pop_back();
    for (uint32_t pos : g.rule(r).alternatives) {
      for (; g.element(pos).kind != ElementKind::kEnd; ++pos) {
        const GrammarElement& e = g.element(pos);
        if (e.kind == ElementKind::kRuleRef && !seen[e.value]) {
          seen[e.value] = true;
          todo.push_back(e.value);
        }
      }
    }
  }
  return seen;
}

}  // namespace

Status check_grammar(const Grammar& g) {
  const std::vector<bool> nullable = fixpoint(g, false);
  MET_RETURN_IF_ERROR(find_left_recursion(g, nullable));
  const std::vector<bool> completable = fixpoint(g, true);
  const std::vector<bool> reachable = reachable_from_root(g);
  for (uint32_t r = 0; r < g.rules().size(); ++r) {
    if (reachable[r] && !completable[r]) {
      return invalid_argument("rule '{}' can never complete (every alternative recurses forever)",
                              g.rule(r).name);
    }
  }
  return ok_status();
}

}  // namespace met
