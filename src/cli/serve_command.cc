// `met serve [MODEL.gguf] [--host 127.0.0.1] [--port 8080] [--model-alias NAME]
// [--chat-template FILE] [--max-concurrent N] [--max-body-bytes N]
// [--api-key KEY]... [--api-key-file F] [--admin-key KEY]... [--tenant-quota Q]...
// [--request-timeout S]
// [--drain-timeout S] [--stall-timeout S] [--cache-dir DIR]
// [--hf ORG/REPO[:FILE|:QUANT] [--hf-endpoint URL] [--hf-revision REV]]` plus
// the engine flags: the OpenAI-compatible HTTP server (server/http_server.h).
// --hf fetches the model from a Hugging Face-style hub into the cache first
// (cli/hub_flags.h; a model path and --hf exclude each other). With neither
// it serves a small random-weight model made once (make-model's tiny
// preset, q8_0) and kept in the cache directory, and says so in one line.
// The server binds before the model loads (/health answers 503 "loading"
// meanwhile); loading reads the file through with a progress bar when stderr
// is a terminal. When ready it prints exactly one line to stderr,
// "met: listening on http://HOST:PORT"; on SIGINT/SIGTERM it stops
// accepting, lets requests in flight finish within --drain-timeout (then
// ends them with an error frame), and exits 0.
// Threading: main thread (the server and the engine run their own).
// Tested by tests/server/http_server_test.cc and
// tests/server/server_endpoints_test.cc.
#include <sys/resource.h>

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cli/commands.h"
#include "cli/engine_flags.h"
#include "cli/hub_flags.h"
#include "cli/model_sampling.h"
#include "cli/progress_bar.h"
#include "cli/version.h"
#include "core/log.h"
#include "core/pooling.h"
#include "model/random_model.h"
#include "server/http_server.h"
#include "server/prompt_builder.h"
#include "server/tokenize_api.h"

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
  std::string cache_dir;  // where the default model is made and kept
  std::vector<std::string> api_keys;
  std::string api_key_file;
  std::vector<std::string> admin_keys;
  std::vector<std::string> tenant_quotas;
  std::vector<std::string> cors_origins;
  std::string pooling;  // "": the model's
  double request_timeout_s = 0;  // 0: none
  double drain_timeout_s = 30;
  double stall_timeout_s = 60;  // 0: not checked
  int64_t max_pending_bytes = int64_t{1} << 20;
  double slow_client_timeout_s = 30;
  HubFlags hub;
  EngineFlags engine;
};

constexpr const char* kDefaultModelFile = "random-tiny-q8_0.gguf";

// The default model's path, made on first use.
Result<std::string> default_model(const std::string& cache_dir) {
  if (cache_dir.empty()) return invalid_argument("no model given and no cache directory to keep a default one in");
  std::error_code ec;
  std::filesystem::create_directories(cache_dir, ec);
  if (ec) return io_error("--cache-dir {}: {}", cache_dir, ec.message());
  const std::string path = (std::filesystem::path(cache_dir) / kDefaultModelFile).string();
  if (!std::filesystem::exists(path)) {
    std::optional<RandomModelSpec> spec = random_model_preset("tiny");
    if (!spec) return internal_error("make-model has no tiny preset");
    spec->dtype = GgmlType::kQ8_0;
    std::fprintf(stderr, "met: making the default model (random weights) at %s\n", path.c_str());
    MET_RETURN_IF_ERROR(make_random_model(*spec, path).status());
  }
  std::fprintf(stderr,
               "met: no model given: serving %s, a small model with RANDOM weights (its text is noise); "
               "load a real one with `met serve MODEL.gguf`\n",
               path.c_str());
  return path;
}

// What OpenAI calls the backend configuration: a change of met's version,
// the model file or the engine's settings gives another fingerprint.
std::string system_fingerprint(const ServeOptions& o) {
  const EngineFlags& e = o.engine;
  const std::string config = fmt::format("{}|{}|{}|{}|{}|{}|{}|{}", met_version(), o.model_path, e.kv_dtype, e.kv_mem,
                                         e.kv_blocks.value_or(0), e.max_seqs, e.max_batch_tokens, e.pipeline);
  return fmt::format("fp_{:016x}", std::hash<std::string>{}(config));
}

Status validate(const ServeOptions& o) {
  if (!o.hub.hf.empty() && !o.model_path.empty()) {
    return invalid_argument("both a model path ({}) and --hf {}: give one of them", o.model_path, o.hub.hf);
  }
  if (o.port < 0 || o.port > 65535) return invalid_argument("--port {} must be between 0 and 65535", o.port);
  if (o.max_concurrent < 1) return invalid_argument("--max-concurrent {} must be at least 1", o.max_concurrent);
  if (o.max_body_bytes < 1) return invalid_argument("--max-body-bytes {} must be at least 1", o.max_body_bytes);
  if (!(o.request_timeout_s >= 0)) return invalid_argument("--request-timeout {} must be >= 0", o.request_timeout_s);
  if (!(o.drain_timeout_s >= 0)) return invalid_argument("--drain-timeout {} must be >= 0", o.drain_timeout_s);
  if (!(o.stall_timeout_s >= 0)) return invalid_argument("--stall-timeout {} must be >= 0", o.stall_timeout_s);
  if (o.max_pending_bytes < 1) return invalid_argument("--max-pending-bytes {} must be at least 1", o.max_pending_bytes);
  if (!(o.slow_client_timeout_s > 0)) {
    return invalid_argument("--slow-client-timeout {} must be > 0", o.slow_client_timeout_s);
  }
  return validate_engine_flags(o.engine);
}

// The chat template's source: from --chat-template FILE (which must parse),
// else the GGUF's; none when the GGUF has none or met cannot parse it (chat
// requests then get a 400 saying why, and completions still work).
struct TemplateSource {
  std::optional<std::string> text;
  std::string why_none;  // when the GGUF's template did not parse
};

Result<TemplateSource> chat_template_source(const ServeOptions& o, const GgufMetadata& md) {
  if (!o.chat_template_path.empty()) {
    std::ifstream in(o.chat_template_path, std::ios::binary);
    if (!in) return io_error("--chat-template: cannot read '{}'", o.chat_template_path);
    std::ostringstream text;
    text << in.rdbuf();
    Result<ChatTemplate> parsed = ChatTemplate::parse(text.str());
    if (!parsed.ok()) return parsed.status().with_prefix(fmt::format("--chat-template {}", o.chat_template_path));
    return TemplateSource{text.str(), ""};
  }
  Result<std::string> source = md.get_string("tokenizer.chat_template");
  if (!source.ok()) return TemplateSource{};
  Result<ChatTemplate> parsed = ChatTemplate::parse(*source);
  if (!parsed.ok()) return TemplateSource{std::nullopt, "tokenizer.chat_template: " + parsed.status().message()};
  return TemplateSource{std::move(*source), ""};
}

// A parse of a source chat_template_source() already parsed once.
std::optional<ChatTemplate> parse_template(const TemplateSource& t) {
  if (!t.text) return std::nullopt;
  Result<ChatTemplate> parsed = ChatTemplate::parse(*t.text);
  if (!parsed.ok()) return std::nullopt;
  return std::move(*parsed);
}

std::optional<Duration> seconds_or_none(double s) {
  if (s <= 0) return std::nullopt;
  return std::chrono::duration_cast<Duration>(std::chrono::duration<double>(s));
}

Result<ServerOptions> server_options(const ServeOptions& o) {
  ServerOptions so;
  so.host = o.host;
  so.port = static_cast<uint16_t>(o.port);
  so.max_concurrent = o.max_concurrent;
  so.max_body_bytes = static_cast<size_t>(o.max_body_bytes);
  // "models/llama/" (a Hugging Face folder) is named "llama", as "models/llama.gguf" is.
  const std::filesystem::path model_path = std::filesystem::path(o.model_path).lexically_normal();
  const std::filesystem::path named = model_path.has_filename() ? model_path : model_path.parent_path();
  so.model_name = o.alias.empty() ? named.stem().string() : o.alias;
  so.system_fingerprint = system_fingerprint(o);
  so.request_timeout = seconds_or_none(o.request_timeout_s);
  so.drain_timeout = seconds_or_none(o.drain_timeout_s).value_or(Duration::zero());
  so.stall_timeout = seconds_or_none(o.stall_timeout_s);
  so.slow_client_timeout = *seconds_or_none(o.slow_client_timeout_s);
  MET_ASSIGN_OR_RETURN(so.api_keys, ApiKeys::create(o.api_keys, o.api_key_file));
  MET_ASSIGN_OR_RETURN(so.admin_keys, ApiKeys::create(o.admin_keys, "", "--admin-key"));
  MET_ASSIGN_OR_RETURN(so.tenant_quotas, TenantQuotas::parse(o.tenant_quotas));
  MET_ASSIGN_OR_RETURN(so.cors, CorsPolicy::create(o.cors_origins));
  if (!o.pooling.empty()) {
    so.pooling = parse_pooling(o.pooling);
    if (!so.pooling.has_value()) {
      return invalid_argument("--pooling must be none, mean, cls or last, not '{}'", o.pooling);
    }
  }
  return so;
}

// Each connection is a file descriptor: take the hard limit (as nginx and
// vLLM do), so thousands of clients do not fail at the usual soft 1,024.
void raise_open_file_limit() {
  rlimit r{};
  if (::getrlimit(RLIMIT_NOFILE, &r) != 0 || r.rlim_cur >= r.rlim_max) return;
  r.rlim_cur = r.rlim_max;
  if (::setrlimit(RLIMIT_NOFILE, &r) != 0) MET_LOG_WARN("cannot raise the open-file limit to {}", r.rlim_max);
}

Status serve(ServeOptions o) {
  MET_RETURN_IF_ERROR(validate(o));
  raise_open_file_limit();
  if (!o.hub.hf.empty()) {
    MET_ASSIGN_OR_RETURN(o.model_path, fetch_hub_model(o.hub, o.cache_dir));
  }
  if (o.model_path.empty()) {
    MET_ASSIGN_OR_RETURN(o.model_path, default_model(o.cache_dir));
    if (o.alias.empty()) o.alias = "met-random-tiny";
  }
  MET_ASSIGN_OR_RETURN(ServerOptions so, server_options(o));
  const std::string host = so.host;
  MET_ASSIGN_OR_RETURN(std::unique_ptr<HttpServer> server, HttpServer::create(std::move(so)));
  StreamLimits streams;
  streams.max_pending_bytes = static_cast<size_t>(o.max_pending_bytes);
  streams.slow_client_timeout = *seconds_or_none(o.slow_client_timeout_s);
  MET_ASSIGN_OR_RETURN(const CpuEngineConfig config, engine_config(o.engine, streams));
  ProgressBar load_bar("loading " + std::filesystem::path(o.model_path).filename().string());
  MET_ASSIGN_OR_RETURN(
      std::unique_ptr<CpuEngine> e,
      CpuEngine::open(o.model_path, config, [&](size_t done, size_t total) { load_bar.update(done, total); }));
  const Tokenizer& tok = e->tokenizer();
  MET_ASSIGN_OR_RETURN(TemplateSource chat, chat_template_source(o, e->metadata()));
  const ModelSampling sampling = model_sampling_defaults(e->metadata());
  for (const std::string& w : sampling.warnings) std::fprintf(stderr, "met: warning: %s\n", w.c_str());
  if (sampling.defaults.from_model) {
    std::fprintf(stderr, "met: sampling defaults from the model file (general.sampling.*): %s\n",
                 sampling.described.c_str());
  }
  PromptBuilder prompts(tok, parse_template(chat), e->engine().limits(), chat.why_none, sampling.defaults);
  TokenizeApi tokenize(prompts, e->engine().limits().max_seq_len);
  const bool v6 = host.find(':') != std::string::npos;
  std::fprintf(stderr, "met: listening on http://%s%s%s:%u\n", v6 ? "[" : "", host.c_str(), v6 ? "]" : "",
               static_cast<unsigned>(server->port()));
  std::fflush(stderr);
  server->serve(ServedModel{e->engine(), prompts, tokenize, e->clock(), LoraApi{&e->adapters(), e->max_loras()}});
  server.reset();  // it borrows the engine, the prompts and the tokenizer
  e->engine().drain();
  return ok_status();
}

}  // namespace

void add_serve_command(CLI::App& app, const HubEnv& env) {
  auto o = std::make_shared<ServeOptions>();
  o->cache_dir = env.cache_dir;
  CLI::App* cmd = app.add_subcommand("serve", "Serve the OpenAI HTTP API (completions, chat completions)");
  cmd->add_option("model", o->model_path,
                  "GGUF model or Hugging Face model folder (default: a random-weight model kept in --cache-dir)");
  cmd->add_option("--cache-dir", o->cache_dir, "Where downloaded models and the default one are kept (env MET_CACHE)")
      ->capture_default_str();
  add_hub_flags(*cmd, o->hub, env, /*with_hf=*/true);
  cmd->add_option("--host", o->host, "Address to bind")->capture_default_str();
  cmd->add_option("--port", o->port, "Port to bind; 0 picks a free one")->capture_default_str();
  cmd->add_option("--model-alias", o->alias, "The model's name in the API (default: the file's stem)");
  cmd->add_option("--chat-template", o->chat_template_path, "Jinja chat template file (default: the GGUF's)");
  cmd->add_option("--max-concurrent", o->max_concurrent, "Generation requests in flight; more get 429")
      ->capture_default_str();
  cmd->add_option("--max-body-bytes", o->max_body_bytes, "Largest request body; larger gets 413")
      ->capture_default_str();
  cmd->add_option("--api-key", o->api_keys, "Require 'Authorization: Bearer KEY' (repeatable)");
  cmd->add_option("--api-key-file", o->api_key_file,
                  "Require a bearer key from this file (one per line: KEY, or KEY TENANT to account it to TENANT)");
  cmd->add_option("--admin-key", o->admin_keys,
                  "The key of the operator's routes (/v1/requests, /v1/telemetry, cancel; repeatable); "
                  "default: the API keys");
  cmd->add_option("--tenant-quota", o->tenant_quotas,
                  "TENANT:requests=N,kv_blocks=M (either or both; TENANT * for every other tenant; repeatable): "
                  "past it a tenant's new requests get 429 with Retry-After");
  cmd->add_option("--cors-origins", o->cors_origins,
                  "Browser origins that may call the API (e.g. http://localhost:3000, or *); default none")
      ->delimiter(',');
  cmd->add_option("--request-timeout", o->request_timeout_s,
                  "Default deadline of every request in seconds; 0: none (a request's smaller `timeout` wins)")
      ->capture_default_str();
  cmd->add_option("--drain-timeout", o->drain_timeout_s,
                  "On SIGTERM/SIGINT, seconds in-flight requests get to finish before they end with an error")
      ->capture_default_str();
  cmd->add_option("--stall-timeout", o->stall_timeout_s,
                  "/health answers 503 when work makes no engine step for this many seconds; 0: never")
      ->capture_default_str();
  cmd->add_option("--max-pending-bytes", o->max_pending_bytes,
                  "Bytes of a streamed response a client may leave unread before --slow-client-timeout runs")
      ->capture_default_str();
  cmd->add_option("--slow-client-timeout", o->slow_client_timeout_s,
                  "Seconds a client may stay over --max-pending-bytes before its request is cancelled (a "
                  "write it takes twice as long to accept closes its connection)")
      ->capture_default_str();
  cmd->add_option("--pooling", o->pooling,
                  "How /v1/embeddings pools an input's hidden states: mean, cls or last (default: the model's "
                  "pooling_type, else last for a decoder, cls for an encoder)");
  add_engine_flags(*cmd, o->engine);
  add_kv_event_flags(*cmd, o->engine);
  cmd->callback([o] { exit_on_error("serve", serve(*o)); });
}

}  // namespace met
