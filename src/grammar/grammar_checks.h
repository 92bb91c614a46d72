// check_grammar: the static checks that make a Grammar safe to run: no left
// recursion (the matcher's expansion would loop), and every rule reachable
// from the root can complete (a model is never trapped in a rule that can
// only go on forever).
// Threading: pure function. Tested by tests/grammar/gbnf_parser_test.cc.
#pragma once

#include "core/status.h"
#include "grammar/grammar.h"

namespace met {

Status check_grammar(const Grammar& grammar);

}  // namespace met
