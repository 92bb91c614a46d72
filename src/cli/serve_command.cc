// `met serve MODEL.gguf [--host 127.0.0.1] [--port 8080] [--model-alias NAME]
// [--chat-template FILE] [--max-concurrent N] [--max-body-bytes N]` plus the
// engine flags: the OpenAI-compatible HTTP server (server/http_server.h).
// When ready it prints exactly one line to stderr,
// "met: listening on http://HOST:PORT"; on SIGINT/SIGTERM it stops accepting,
// lets requests in flight finish, drains the engine and exits 0.
// Threading: main thread (the server and the engine run their own).
// Tested by tests/server/http_server_test.cc.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>

#include <fmt/format.h>

#include "cli/commands.h"
#include "cli/engine_flags.h"
#include "server/http_server.h"
#include "server/prompt_builder.h"

namespace met {
namespace {

struct ServeOptions {
  std::string model_path;
  std::string host = "127.0.0.1";
  int port = 8080;
  std::string alias;
  std::string chat_template_path;
  int32_t max_concurrent = 256;
  int64_t max_body_bytes = int64_t{8} << 20;
  EngineFlags engine;
};

Status validate(const ServeOptions& o) {
  if (o.port < 0 || o.port > 65535) return invalid_argument("--port {} must be between 0 and 65535", o.port);
  if (o.max_concurrent < 1) return invalid_argument("--max-concurrent {} must be at least 1", o.max_concurrent);
  if (o.max_body_bytes < 1) return invalid_argument("--max-body-bytes {} must be at least 1", o.max_body_bytes);
  return validate_engine_flags(o.engine);
}

struct LoadedTemplate {
  std::optional<ChatTemplate> chat_template;
  std::string why_none;  // when the GGUF's template did not parse
};

// The chat template from --chat-template FILE (which must parse), else the
// GGUF's; none when the GGUF has none or met cannot parse it (chat requests
// then get a 400 saying why, and completions still work).
Result<LoadedTemplate> load_chat_template(const ServeOptions& o, const GgufMetadata& md) {
  if (!o.chat_template_path.empty()) {
    std::ifstream in(o.chat_template_path, std::ios::binary);
    if (!in) return io_error("--chat-template: cannot read '{}'", o.chat_template_path);
    std::ostringstream text;
    text << in.rdbuf();
    Result<ChatTemplate> parsed = ChatTemplate::parse(text.str());
    if (!parsed.ok()) return parsed.status().with_prefix(fmt::format("--chat-template {}", o.chat_template_path));
    return LoadedTemplate{std::move(*parsed), ""};
  }
  Result<std::string> source = md.get_string("tokenizer.chat_template");
  if (!source.ok()) return LoadedTemplate{};
  Result<ChatTemplate> parsed = ChatTemplate::parse(*source);
  if (!parsed.ok()) return LoadedTemplate{std::nullopt, "tokenizer.chat_template: " + parsed.status().message()};
  return LoadedTemplate{std::move(*parsed), ""};
}

Status serve(const ServeOptions& o) {
  MET_RETURN_IF_ERROR(validate(o));
  MET_ASSIGN_OR_RETURN(std::unique_ptr<Model> model, Model::load(o.model_path));
  MET_ASSIGN_OR_RETURN(Tokenizer tok, Tokenizer::from_gguf(model->file().metadata()));
  MET_ASSIGN_OR_RETURN(LoadedTemplate chat, load_chat_template(o, model->file().metadata()));
  MET_ASSIGN_OR_RETURN(std::unique_ptr<CpuEngine> e, build_cpu_engine(*model, tok, o.engine));
  PromptBuilder prompts(tok, std::move(chat.chat_template), e->engine->limits(), std::move(chat.why_none));
  ServerOptions so;
  so.host = o.host;
  so.port = static_cast<uint16_t>(o.port);
  so.max_concurrent = o.max_concurrent;
  so.max_body_bytes = static_cast<size_t>(o.max_body_bytes);
  so.model_name = o.alias.empty() ? std::filesystem::path(o.model_path).stem().string() : o.alias;
  MET_ASSIGN_OR_RETURN(std::unique_ptr<HttpServer> server, HttpServer::create(so, *e->engine, prompts));
  const bool v6 = o.host.find(':') != std::string::npos;
  std::fprintf(stderr, "met: listening on http://%s%s%s:%u\n", v6 ? "[" : "", o.host.c_str(), v6 ? "]" : "",
               static_cast<unsigned>(server->port()));
  std::fflush(stderr);
  server->run();
  e->engine->drain();
  return ok_status();
}

}  // namespace

void add_serve_command(CLI::App& app) {
  auto o = std::make_shared<ServeOptions>();
  CLI::App* cmd = app.add_subcommand("serve", "Serve the OpenAI HTTP API (completions, chat completions)");
  cmd->add_option("model", o->model_path, "GGUF model")->required();
  cmd->add_option("--host", o->host, "Address to bind")->capture_default_str();
  cmd->add_option("--port", o->port, "Port to bind; 0 picks a free one")->capture_default_str();
  cmd->add_option("--model-alias", o->alias, "The model's name in the API (default: the file's stem)");
  cmd->add_option("--chat-template", o->chat_template_path, "Jinja chat template file (default: the GGUF's)");
  cmd->add_option("--max-concurrent", o->max_concurrent, "Generation requests in flight; more get 429")
      ->capture_default_str();
  cmd->add_option("--max-body-bytes", o->max_body_bytes, "Largest request body; larger gets 413")
      ->capture_default_str();
  add_engine_flags(*cmd, o->engine);
  cmd->callback([o] { exit_on_error("serve", serve(*o)); });
}

}  // namespace met
