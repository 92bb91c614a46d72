// `met tokenize MODEL.gguf (--text T | --text-file F | --ids "1 2 3") [--special]
// [--bos] [--json]`: runs the model's tokenizer from its GGUF metadata.
// Output: ids as one line of space-separated integers and a newline, or with
// --json one JSON array of integers (and a newline); text from --ids exactly,
// with no newline added. Tested by tests/cli/tokenize_command_test.cc.
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "gguf/gguf_file.h"
#include "hf/hf_model.h"
#include "tokenizer/tokenizer.h"

namespace met {
namespace {

struct TokenizeOptions {
  std::string model_path;
  std::optional<std::string> text;
  std::optional<std::string> text_file;
  std::optional<std::string> ids;
  bool special = false;
  bool bos = false;
  bool json = false;
};

Result<std::string> read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return io_error("cannot read '{}'", path);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Result<std::vector<TokenId>> parse_ids(const std::string& list, const Vocab& vocab) {
  std::vector<TokenId> ids;
  std::istringstream in(list);
  for (std::string word; in >> word;) {
    size_t used = 0;
    long long value = -1;
    try {
      value = std::stoll(word, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != word.size()) return invalid_argument("--ids: '{}' is not a token id", word);
    if (value < 0 || static_cast<unsigned long long>(value) >= vocab.size()) {
      return out_of_range("--ids: token id {} is outside the vocabulary ({} tokens)", value, vocab.size());
    }
    ids.push_back(static_cast<TokenId>(value));
  }
  return ids;
}

void print_ids(const std::vector<TokenId>& ids, bool json) {
  if (json) {
    std::cout << nlohmann::json(ids).dump() << "\n";
    return;
  }
  for (size_t i = 0; i < ids.size(); ++i) std::cout << (i ? " " : "") << ids[i];
  std::cout << "\n";
}

Status run_tokenize(const TokenizeOptions& opt) {
  const int sources = opt.text.has_value() + opt.text_file.has_value() + opt.ids.has_value();
  if (sources != 1) return invalid_argument("give exactly one of --text, --text-file or --ids");
  MET_ASSIGN_OR_RETURN(GgufFile file, open_model_file(opt.model_path));
  Result<Tokenizer> tokenizer = Tokenizer::from_gguf(file.metadata());
  if (!tokenizer.ok()) return tokenizer.status().with_prefix(opt.model_path);
  if (opt.ids) {
    MET_ASSIGN_OR_RETURN(std::vector<TokenId> ids, parse_ids(*opt.ids, tokenizer->vocab()));
    std::cout << tokenizer->decode(ids, /*skip_special=*/!opt.special) << std::flush;
    return ok_status();
  }
  std::string text;
  if (opt.text) {
    text = *opt.text;
  } else {
    MET_ASSIGN_OR_RETURN(text, read_text_file(*opt.text_file));
  }
  const EncodeOptions encode{.add_special = opt.bos, .parse_special = opt.special};
  print_ids(tokenizer->encode(text, encode), opt.json);
  return ok_status();
}

}  // namespace

void add_tokenize_command(CLI::App& app) {
  auto opt = std::make_shared<TokenizeOptions>();
  CLI::App* cmd = app.add_subcommand(
      "tokenize",
      "Text to token ids with a model's tokenizer, or ids back to text.\n"
      "Prints ids as one line of space-separated integers (--json: one JSON array);\n"
      "with --ids prints the decoded text exactly, without an added newline.");
  cmd->add_option("model", opt->model_path, "GGUF file (a vocab-only file is enough) or Hugging Face model folder")
      ->required();
  cmd->add_option("--text", opt->text, "Text to tokenize");
  cmd->add_option("--text-file", opt->text_file, "File whose bytes are the text to tokenize");
  cmd->add_option("--ids", opt->ids, "Space-separated token ids to decode");
  cmd->add_flag("--special", opt->special,
                "Match special tokens written in the text (chat prompts); with --ids, render them");
  cmd->add_flag("--bos", opt->bos, "Add the BOS (and EOS/SEP) tokens the vocabulary asks for");
  cmd->add_flag("--json", opt->json, "Print the ids as one JSON array");
  cmd->callback([opt] { exit_on_error("tokenize", run_tokenize(*opt)); });
}

}  // namespace met
