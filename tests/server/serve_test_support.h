// Helpers for the tests that run `met serve` as a subprocess: its command
// line, small random-weight models made with `met make-model`, and a
// response body as JSON. Threading: the test's thread. Never linked into apps/.
#pragma once

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "testing/http_client.h"
#include "testing/run_command.h"
#include "testing/temp_dir.h"

namespace met::testing {

// `met serve MODEL` on a free port with one compute thread.
inline std::string serve_args(const std::string& model, const std::string& extra = "") {
  return shell_quote(model) + " --port 0 --threads 1 " + extra;
}

// A small random-weight model (2 layers, width 128, f32, met's ChatML
// template unless `extra` names another) at dir/name; `extra` adds
// make-model flags. A failure to make it fails the test.
inline std::string make_small_model(const TempDir& dir, const std::string& name, int vocab,
                                    const std::string& extra = "") {
  const std::string model = dir.file(name);
  const auto r = run_command(met_binary() + " make-model -o " + shell_quote(model) +
                             " --layers 2 --embd 128 --heads 4 --kv-heads 2 --ff 256 --dtype f32 --vocab " +
                             std::to_string(vocab) + " " + extra);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return model;
}

// make_small_model with the chat template file `tmpl` (its markers become
// vocabulary tokens), vocab 700.
inline std::string make_template_model(const TempDir& dir, const std::string& name, const std::string& tmpl) {
  return make_small_model(dir, name, 700, "--chat-template " + shell_quote(tmpl));
}

// The response body as JSON (discarded when it is not JSON; null without a response).
inline nlohmann::json body_json(const std::optional<HttpResponse>& r) {
  if (!r) return nlohmann::json();
  return nlohmann::json::parse(r->body, nullptr, /*allow_exceptions=*/false);
}

}  // namespace met::testing
