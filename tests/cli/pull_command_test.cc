// Tests of `met pull` (src/cli/pull_command.cc), running the built binary
// against FakeHub on a loopback socket: the printed path and the file's
// bytes, the cache on a second run (no request), the hub's errors in one
// line, the token from HF_TOKEN never shown; and `met serve --hf` serving a
// model it fetched (and refusing a model path as well).
#include <gtest/gtest.h>

#include "hub/hub_test_support.h"
#include "testing/fake_hub.h"
#include "testing/http_client.h"
#include "testing/run_command.h"
#include "testing/temp_dir.h"

namespace met {
namespace {

using testing::met_binary;
using testing::run_command;
using testing::shell_quote;

class PullCommand : public ::testing::Test {
 protected:
  PullCommand() {
    hub_.add_file("org/model", "model-Q4_K_M.gguf", q4_);
    hub_.add_file("org/model", "model-Q8_0.gguf", testing::model_bytes(3000, 6));
  }
  // `met pull ARGS` with the hub's endpoint and the cache in HF_ENDPOINT and
  // MET_CACHE, as a user would set them.
  testing::CommandOutput pull(const std::string& args, const std::string& env = "") const {
    return run_command("HF_ENDPOINT=" + shell_quote(hub_.endpoint()) + " MET_CACHE=" + shell_quote(cache_.path()) +
                       " " + env + " " + met_binary() + " pull " + args);
  }

  testing::FakeHub hub_;
  testing::TempDir cache_;
  const std::string q4_ = testing::model_bytes(200000, 5);
};

TEST_F(PullCommand, PrintsThePathOfTheVerifiedFile) {
  const auto r = pull("org/model");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string path = cache_.path() + "/hub/org--model/main/model-Q4_K_M.gguf";
  EXPECT_EQ(r.out, path + "\n");
  EXPECT_EQ(testing::read_file(path), q4_);
  EXPECT_NE(r.err.find("downloading model-Q4_K_M.gguf"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("100%"), std::string::npos) << "plain progress lines off a terminal: " << r.err;
  EXPECT_NE(r.err.find("sha256 verified"), std::string::npos) << r.err;
}

TEST_F(PullCommand, ASecondPullUsesTheCacheWithoutTheNetwork) {
  ASSERT_EQ(pull("org/model:Q8_0").exit_code, 0);
  const size_t before = hub_.requests().size();
  const auto r = pull("org/model:q8_0");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, cache_.path() + "/hub/org--model/main/model-Q8_0.gguf\n");
  EXPECT_EQ(hub_.requests().size(), before);
  EXPECT_EQ(r.err, "");
}

TEST_F(PullCommand, TheFlagsOverrideTheEnvironment) {
  testing::TempDir other;
  const auto r = pull("org/model:model-Q8_0.gguf --cache-dir " + shell_quote(other.path()) + " --hf-endpoint " +
                      shell_quote(hub_.endpoint() + "/"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, other.path() + "/hub/org--model/main/model-Q8_0.gguf\n");
}

TEST_F(PullCommand, ErrorsAreOneLineNamingTheUrl) {
  const auto missing = pull("org/absent");
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.err.find("met pull: org/absent: " + hub_.endpoint() + "/api/models/org/absent/tree/main"),
            std::string::npos)
      << missing.err;
  EXPECT_NE(missing.err.find("404"), std::string::npos) << missing.err;
  const auto bad = pull("not-a-repo");
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.err.find("expected ORG/REPO"), std::string::npos) << bad.err;
}

TEST_F(PullCommand, TheTokenComesFromHfTokenAndIsNeverShown) {
  hub_.require_token("hf_right");
  const auto refused = pull("org/model", "HF_TOKEN=hf_wrong_secret");
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_NE(refused.err.find("HTTP 401"), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find("HF_TOKEN"), std::string::npos) << refused.err;
  EXPECT_EQ(refused.err.find("hf_wrong_secret"), std::string::npos) << refused.err;
  const auto ok = pull("org/model", "HF_TOKEN=hf_right");
  ASSERT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_EQ(ok.err.find("hf_right"), std::string::npos) << ok.err;
  EXPECT_EQ(hub_.requests().back().authorization, "Bearer hf_right");
}

TEST_F(PullCommand, ServeTakesAModelPathOrHfNotBoth) {
  const auto r = run_command(met_binary() + " serve x.gguf --hf org/model --port 0");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("give one of them"), std::string::npos) << r.err;
  EXPECT_EQ(hub_.requests().size(), 0u);
}

TEST_F(PullCommand, ServeFetchesAndServesTheModel) {
  testing::TempDir dir;
  const std::string model = dir.file("made.gguf");
  const auto made = run_command(met_binary() + " make-model -o " + shell_quote(model) +
                                " --layers 1 --embd 64 --heads 2 --kv-heads 1 --ff 128 --dtype f32 --vocab 512");
  ASSERT_EQ(made.exit_code, 0) << made.err;
  hub_.add_file("org/tiny", "tiny-F32.gguf", testing::read_file(model));
  testing::ServeProcess serve("--hf org/tiny --hf-endpoint " + shell_quote(hub_.endpoint()) + " --cache-dir " +
                              shell_quote(cache_.path()) + " --port 0 --threads 1");
  ASSERT_NE(serve.port(), 0) << serve.error() << serve.stderr_text();
  const auto models = testing::http_call(serve.port(), "GET", "/v1/models");
  ASSERT_TRUE(models.has_value());
  EXPECT_NE(models->body.find("\"tiny-F32\""), std::string::npos) << models->body;
  EXPECT_NE(serve.stderr_text().find("downloading tiny-F32.gguf"), std::string::npos) << serve.stderr_text();
  EXPECT_EQ(serve.stop(), 0);
  EXPECT_EQ(testing::read_file(cache_.path() + "/hub/org--tiny/main/tiny-F32.gguf"), testing::read_file(model));
}

}  // namespace
}  // namespace met
