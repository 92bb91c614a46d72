// The built `met top` in an 80x24 tmux pane: against a loopback fake (the
// layout of a canned /v1/requests, help, a refused key, an unreachable
// server that is retried, a resize) and against the built `met serve` with
// streaming clients of three tenants (the running count, a request's
// timeline, and a cancel through the admin key that ends that client's
// stream with an error frame). Skips when tmux is not installed.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <memory>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "fake_requests_server.h"
#include "testing/http_client.h"
#include "testing/run_command.h"
#include "testing/temp_dir.h"
#include "top_test_data.h"

namespace met::top {
namespace {

using met::testing::run_command;
using met::testing::shell_quote;

bool have_tmux() { return run_command("tmux -V").exit_code == 0; }

// One detached tmux server of its own (-L), one 80x24 session running `command`.
class TmuxPane {
 public:
  explicit TmuxPane(const std::string& command, int width = 80, int height = 24)
      : socket_("met-top-test-" + std::to_string(::getpid()) + "-" + std::to_string(next_id_++)) {
    const auto r = run_command(tmux() + " new-session -d -s top -x " + std::to_string(width) + " -y " +
                               std::to_string(height) + " " + shell_quote(command));
    started_ = r.exit_code == 0;
    EXPECT_TRUE(started_) << r.err;
  }
  ~TmuxPane() { run_command(tmux() + " kill-server"); }
  TmuxPane(const TmuxPane&) = delete;
  TmuxPane& operator=(const TmuxPane&) = delete;

  std::string capture() const { return run_command(tmux() + " capture-pane -p -t top").out; }
  void keys(const std::string& tmux_keys) const { run_command(tmux() + " send-keys -t top " + tmux_keys); }
  void resize(int width, int height) const {
    run_command(tmux() + " resize-window -t top -x " + std::to_string(width) + " -y " + std::to_string(height));
  }
  bool alive() const { return run_command(tmux() + " has-session -t top").exit_code == 0; }
  // The screen once it shows `needle` (or, after `timeout`, the last screen, which fails the caller's check).
  std::string wait_for(const std::string& needle, std::chrono::milliseconds timeout = std::chrono::seconds(15)) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    std::string screen;
    do {
      screen = capture();
      if (screen.find(needle) != std::string::npos) return screen;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    } while (std::chrono::steady_clock::now() < deadline);
    return screen;
  }
  bool wait_gone(std::chrono::milliseconds timeout = std::chrono::seconds(5)) const {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (alive()) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return true;
  }

 private:
  std::string tmux() const { return "tmux -L " + socket_ + " -f /dev/null"; }
  static inline int next_id_ = 0;
  std::string socket_;
  bool started_ = false;
};

std::string top_command(const std::string& url, const std::string& extra = "") {
  return met::testing::met_binary() + " top " + url + " --interval 0.2 " + extra;
}

class TopTmux : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!have_tmux()) GTEST_SKIP() << "tmux is not installed; the met top terminal tests need it";
  }
};

TEST_F(TopTmux, AnUnreachableServerIsAClearMessageAndIsRetried) {
  uint16_t port = 0;
  {
    testing::FakeRequestsServer gone;
    port = gone.port();
  }
  const std::string url = "http://127.0.0.1:" + std::to_string(port);
  TmuxPane pane(top_command(url));
  const std::string screen = pane.wait_for("retrying every");
  EXPECT_NE(screen.find("cannot reach " + url + "/v1/requests"), std::string::npos) << screen;
  EXPECT_NE(screen.find("retrying every 0.2s"), std::string::npos) << screen;
  std::this_thread::sleep_for(std::chrono::milliseconds(600));
  EXPECT_TRUE(pane.alive()) << "met top keeps retrying";
  pane.keys("q");
  EXPECT_TRUE(pane.wait_gone());
}

TEST_F(TopTmux, ARefusedKeyIsAClearMessage) {
  testing::FakeRequestsServer server;
  server.answer(401, R"({"error":{"message":"Incorrect API key provided","type":"invalid_request_error"}})");
  TmuxPane pane(top_command(server.url(), "--api-key wrong"));
  const std::string screen = pane.wait_for("refused the key");
  EXPECT_NE(screen.find("the server refused the key (HTTP 401: Incorrect API key provided)"), std::string::npos)
      << screen;
  ASSERT_FALSE(server.seen().empty());
  EXPECT_EQ(server.seen()[0].authorization, "Bearer wrong");
  pane.keys("q");
  EXPECT_TRUE(pane.wait_gone());
}

TEST_F(TopTmux, At80x24TheCannedAnswerFillsEveryPaneAndTheScreenFollowsAResize) {
  testing::FakeRequestsServer server;
  server.answer(200, testing::kRequestsJson);
  TmuxPane pane(top_command(server.url()));
  std::string screen = pane.wait_for("17       acme       running      120     64     33");
  EXPECT_NE(screen.find("running          1"), std::string::npos) << screen;
  EXPECT_NE(screen.find("kv used       5.9%"), std::string::npos) << screen;
  EXPECT_NE(screen.find("18       -          waiting"), std::string::npos) << screen;
  EXPECT_NE(screen.find("TENANT            REQS"), std::string::npos) << screen;
  EXPECT_NE(screen.find("q quit  ? help"), std::string::npos) << screen;
  int lines = 0;
  for (size_t at = 0; (at = screen.find('\n', at)) != std::string::npos; ++at) ++lines;
  EXPECT_EQ(lines, 24) << screen;
  pane.keys("?");
  screen = pane.wait_for("cancel the selected request");
  EXPECT_NE(screen.find("filter by the next tenant"), std::string::npos) << screen;
  pane.keys("?");
  pane.resize(100, 30);
  screen = pane.wait_for("every 0.2s");
  EXPECT_NE(pane.wait_for("17       acme").find("17       acme"), std::string::npos);
  pane.resize(30, 10);
  screen = pane.wait_for("needs a terminal");
  EXPECT_NE(screen.find("met top needs a terminal"), std::string::npos) << screen;
  pane.keys("q");
  EXPECT_TRUE(pane.wait_gone());
}

constexpr const char* kLongStream =
    R"({"prompt": "Once", "max_tokens": 16000, "ignore_eos": true, "temperature": 0, "stream": true})";

TEST_F(TopTmux, AgainstMetServeItShowsTheRunningRequestsAndCancelsTheSelectedOne) {
  met::testing::TempDir dir;
  const std::string model = dir.file("medium.gguf");
  const auto made = run_command(met::testing::met_binary() + " make-model -o " + shell_quote(model) +
                                " --layers 4 --embd 256 --heads 4 --kv-heads 2 --ff 1024 --dtype f32 --vocab 512"
                                " --ctx 16384");
  ASSERT_EQ(made.exit_code, 0) << made.err;
  std::ofstream(dir.file("keys")) << "sk-1 tenant-1\nsk-2 tenant-2\nsk-3 tenant-3\n";
  met::testing::ServeProcess server(shell_quote(model) + " --port 0 --threads 1 --api-key-file " +
                                    shell_quote(dir.file("keys")) + " --admin-key adm");
  ASSERT_NE(server.port(), 0) << server.error();
  std::vector<std::unique_ptr<met::testing::HttpConnection>> clients;
  for (int i = 1; i <= 3; ++i) {
    clients.push_back(std::make_unique<met::testing::HttpConnection>(server.port()));
    ASSERT_TRUE(clients.back()->send_all(met::testing::http_request(
        "POST", "/v1/completions", kLongStream, {"Authorization: Bearer sk-" + std::to_string(i)})));
    ASSERT_TRUE(clients.back()->read_until("data: "));
  }
  const std::string url = "http://127.0.0.1:" + std::to_string(server.port());
  TmuxPane pane(top_command(url, "--api-key adm"));
  std::string screen = pane.wait_for("running          3");
  ASSERT_NE(screen.find("running          3"), std::string::npos) << screen;
  for (const char* tenant : {"tenant-1", "tenant-2", "tenant-3"}) {
    EXPECT_NE(screen.find(tenant), std::string::npos) << screen;
  }
  EXPECT_NE(screen.find("running"), screen.rfind("running")) << "the table lists running requests\n" << screen;

  pane.keys("Down Enter");  // the second row's timeline
  screen = pane.wait_for("admitted");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(screen, m, std::regex("request (\\S+)  tenant tenant-(\\d)"))) << screen;
  const std::string id = m[1];
  const int client = std::stoi(m[2]) - 1;
  EXPECT_NE(screen.find("queued"), std::string::npos) << screen;
  EXPECT_NE(screen.find("first_token"), std::string::npos) << screen;
  pane.keys("Enter c");
  screen = pane.wait_for("cancel request " + id + "? y");
  ASSERT_NE(screen.find("cancel request " + id + "? y"), std::string::npos) << screen;
  pane.keys("y");
  screen = pane.wait_for("cancelled request " + id);
  EXPECT_NE(screen.find("cancelled request " + id), std::string::npos) << screen;

  auto& cancelled = *clients[static_cast<size_t>(client)];
  cancelled.set_receive_timeout(std::chrono::seconds(10));
  ASSERT_TRUE(cancelled.read_until("data: [DONE]")) << cancelled.raw().substr(0, 300);
  EXPECT_NE(cancelled.raw().find("cancelled by an operator"), std::string::npos);
  screen = pane.wait_for("running          2");
  EXPECT_NE(screen.find("running          2"), std::string::npos) << screen;
  pane.keys("q");
  EXPECT_TRUE(pane.wait_gone());
  clients.clear();  // the others disconnect, which cancels them
  EXPECT_EQ(server.stop(), 0) << server.stderr_text();
}

}  // namespace
}  // namespace met::top
