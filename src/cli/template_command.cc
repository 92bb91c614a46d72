// `met template render (--template FILE.jinja | --model MODEL.gguf)
// --context CONTEXT.json [--now ISO-8601]`: renders a chat template as Hugging
// Face would and writes exactly the rendering to stdout. With --model the
// template is the GGUF's tokenizer.chat_template, and bos_token/eos_token
// default to the vocab's BOS and EOS tokens when the context lacks them.
// Tested by tests/cli/template_command_test.cc.
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>

#include <nlohmann/json.hpp>

#include "chat/chat_template.h"
#include "cli/commands.h"
#include "gguf/gguf_file.h"
#include "hf/hf_model.h"

namespace met {
namespace {

struct TemplateOptionsCli {
  std::string template_path;
  std::string model_path;
  std::string context_path;
  std::string now;
};

Result<std::string> read_text(const std::string& path, std::string_view what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return io_error("cannot read {} '{}'", what, path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

Result<nlohmann::ordered_json> read_context(const std::string& path) {
  MET_ASSIGN_OR_RETURN(std::string text, read_text(path, "context"));
  try {
    nlohmann::ordered_json context = nlohmann::ordered_json::parse(text);
    if (!context.is_object()) return invalid_argument("context '{}' is not a JSON object", path);
    return context;
  } catch (const nlohmann::json::exception& e) {
    return invalid_argument("context '{}' is not valid JSON: {}", path, e.what());
  }
}

// The vocab token with the id stored under `id_key`, if the model names one.
std::optional<std::string> special_token(const GgufMetadata& meta, std::string_view id_key) {
  auto id = meta.get_u32(id_key);
  auto tokens = meta.get_array("tokenizer.ggml.tokens");
  if (!id.ok() || !tokens.ok()) return std::nullopt;
  const auto* strings = std::get_if<std::vector<std::string>>(&(*tokens)->items);
  if (strings == nullptr || *id >= strings->size()) return std::nullopt;
  return (*strings)[*id];
}

Result<std::string> template_from_model(const std::string& path, nlohmann::ordered_json& context) {
  MET_ASSIGN_OR_RETURN(GgufFile file, open_model_file(path));
  const GgufMetadata& meta = file.metadata();
  MET_ASSIGN_OR_RETURN(std::string source, meta.get_string("tokenizer.chat_template"));
  static constexpr std::pair<const char*, const char*> kSpecial[] = {
      {"bos_token", "tokenizer.ggml.bos_token_id"}, {"eos_token", "tokenizer.ggml.eos_token_id"}};
  for (const auto& [name, id_key] : kSpecial) {
    if (context.contains(name)) continue;
    if (auto token = special_token(meta, id_key)) context[name] = *token;
  }
  return source;
}

Status run_render(const TemplateOptionsCli& opt) {
  MET_ASSIGN_OR_RETURN(nlohmann::ordered_json context, read_context(opt.context_path));
  std::string source;
  if (!opt.model_path.empty()) {
    MET_ASSIGN_OR_RETURN(source, template_from_model(opt.model_path, context));
  } else {
    MET_ASSIGN_OR_RETURN(source, read_text(opt.template_path, "template"));
  }
  MET_ASSIGN_OR_RETURN(ChatTemplate tmpl, ChatTemplate::parse(source));
  TemplateOptions options;
  if (!opt.now.empty()) options.now_iso8601 = opt.now;
  MET_ASSIGN_OR_RETURN(std::string text, tmpl.render(context, options));
  std::cout << text << std::flush;
  return ok_status();
}

}  // namespace

void add_template_command(CLI::App& app) {
  auto opt = std::make_shared<TemplateOptionsCli>();
  CLI::App* cmd = app.add_subcommand("template", "Work with Jinja chat templates");
  cmd->require_subcommand(1);
  CLI::App* render = cmd->add_subcommand("render", "Render a chat template with a JSON context to stdout");
  auto* tmpl = render->add_option("--template", opt->template_path, "Jinja template file");
  auto* model = render->add_option("--model", opt->model_path, "GGUF model whose tokenizer.chat_template to use");
  tmpl->excludes(model);
  render->add_option("--context", opt->context_path, "JSON object: messages, tools, add_generation_prompt, …")
      ->required();
  render->add_option("--now", opt->now, "What strftime_now() formats, e.g. 2026-07-26T09:30:00");
  render->callback([opt] {
    if (opt->template_path.empty() && opt->model_path.empty()) {
      exit_on_error("template", invalid_argument("give --template FILE.jinja or --model MODEL.gguf"));
    }
    exit_on_error("template", run_render(*opt));
  });
}

}  // namespace met
