// HubRef: what `met pull ORG/REPO[:FILE]` and `--hf` name on a Hugging
// Face-style hub: a repo, a revision, and either a .gguf file in it, a quant
// tag such as Q4_K_M, or nothing (the default choice, gguf_choice.h).
// Invariants: a parsed ref's repo is "ORG/REPO" with names the hub allows
// (letters, digits, '-', '_', '.'; no "--" or ".." that would break the
// cache's ORG--REPO folder); a file is a relative path without "..", ending
// in .gguf; a tag is letters, digits, '_' and '-'.
// Threading: plain values, any thread. Tested by tests/hub/hub_ref_test.cc.
#pragma once

#include <string>
#include <string_view>

#include "core/status.h"

namespace met {

inline constexpr std::string_view kDefaultRevision = "main";

struct HubRef {
  std::string repo;  // "ORG/REPO"
  std::string file;  // a .gguf path in the repo; empty when `tag` or nothing was given
  std::string tag;   // a quant tag (matched case-insensitively); empty when `file` or nothing was given
  std::string revision = std::string(kDefaultRevision);  // a branch, tag or commit of the repo
};

// "ORG/REPO", "ORG/REPO:FILE.gguf" (FILE may name a sub-folder) or
// "ORG/REPO:TAG". The message names the text and what is wrong with it.
Result<HubRef> parse_hub_ref(std::string_view text);

// Checks a revision name (a branch, tag or commit: letters, digits and
// "-_./", no ".."); the message names `text`.
Status validate_revision(std::string_view text);

// "ORG/REPO[:FILE|:TAG]" back as text, for messages.
std::string to_string(const HubRef& ref);

}  // namespace met
