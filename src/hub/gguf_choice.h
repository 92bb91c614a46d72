// choose_gguf: which file of a repo's listing a hub ref names, as llama.cpp's
// `-hf ORG/REPO[:QUANT]` chooses: a named .gguf file exactly; else the GGUFs
// (multimodal projectors, "mmproj", left out) whose name holds the quant tag
// (case-insensitive, as a whole word: Q4_K matches "x-Q4_K.gguf", not
// "x-Q4_K_M.gguf"); with no tag, Q4_K_M's, else the first GGUF listed.
// Split GGUFs ("-00001-of-00003.gguf") are refused with a message saying so;
// a single file that matches wins over a split one.
// Invariants: a pure decision over the listing; every refusal lists the
// repo's GGUFs so the user can name one.
// Threading: pure functions. Tested by tests/hub/gguf_choice_test.cc.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "hub/hub_listing.h"
#include "hub/hub_ref.h"

namespace met {

inline constexpr std::string_view kDefaultQuantTag = "Q4_K_M";

Result<HubFile> choose_gguf(const std::vector<HubFile>& files, const HubRef& ref);

// True for "...-00001-of-00003.gguf" (any part of a split GGUF).
bool is_split_gguf(std::string_view path);

// True when `path`'s file name ends in ".gguf" (any case).
bool is_gguf_path(std::string_view path);

// True when `tag` occurs in `path`'s file name (any case) as a whole word:
// not after a letter or digit, not before a letter, digit or '_'.
bool name_has_quant_tag(std::string_view path, std::string_view tag);

}  // namespace met
