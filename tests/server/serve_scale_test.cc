// Scale tests of `met serve` (stories260K) over real sockets: 2,000
// concurrent streaming clients each get exactly one terminal event and
// [DONE] while the server's thread count stays what it was at one stream;
// 10,000 idle keep-alive connections are held (no thread each, little
// memory) and then closed cleanly; a client that never reads is cut off at
// its unsent-bytes bound while 50 others stream normally. Timing is never
// asserted; waits are bounded.
#include <gtest/gtest.h>

#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "server/prometheus_text.h"
#include "testing/http_client.h"
#include "testing/many_clients.h"
#include "testing/run_command.h"
#include "server/serve_test_support.h"
#include "testing/shared_data.h"
#include "testing/temp_dir.h"

namespace met {
namespace {

using Json = nlohmann::json;
using testing::ClientOutcome;
using testing::http_call;
using testing::http_request;
using testing::HttpConnection;
using testing::ServeProcess;
using testing::sse_data;

std::string stream_request(int seed, int max_tokens, const Json& extra = Json::object()) {
  Json j = {{"prompt", "Once upon a time"}, {"max_tokens", max_tokens}, {"ignore_eos", true},
            {"temperature", 0.8},          {"seed", seed},              {"stream", true}};
  j.update(extra);
  return http_request("POST", "/v1/completions", j.dump());
}

// "" when `o` is a whole stream: 200, one finish_reason (or one error), then [DONE].
std::string stream_problem(const ClientOutcome& o) {
  if (!o.error.empty()) return o.error;
  if (o.status != 200) return "status " + std::to_string(o.status) + ": " + o.body;
  const std::vector<std::string> events = sse_data(o.body);
  if (events.empty() || events.back() != "[DONE]") return "no [DONE] at the end";
  int terminal = 0;
  for (size_t i = 0; i + 1 < events.size(); ++i) {
    const Json j = Json::parse(events[i], nullptr, false);
    if (j.is_discarded()) return "bad event " + events[i];
    if (j.contains("error")) ++terminal;
    if (j.contains("choices") && !j["choices"].empty() && !j["choices"][0]["finish_reason"].is_null()) ++terminal;
  }
  if (terminal != 1) return std::to_string(terminal) + " terminal events";
  return "";
}

testing::PrometheusText metrics(uint16_t port) {
  auto r = http_call(port, "GET", "/metrics");
  if (!r) return {};
  return testing::parse_prometheus_text(r->body);
}

// Waits (bounded) until nothing runs or waits and every KV block is back.
testing::PrometheusText wait_idle(uint16_t port) {
  testing::PrometheusText m;
  for (int i = 0; i < 600; ++i) {
    m = metrics(port);
    if (m.error.empty() && m.value("met:num_requests_running") == 0 && m.value("met:num_requests_waiting") == 0 &&
        m.value("met:kv_cache_blocks_used") == 0) {
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return m;
}

class MetServeScale : public ::testing::Test {
 protected:
  void SetUp() override { testing::raise_open_file_limit(); }
};

TEST_F(MetServeScale, TwoThousandStreamsEachEndOnceWithNoMoreServerThreads) {
  MET_REQUIRE_SHARED(model, "models/stories260K.gguf");
  constexpr int kStreams = 2000;
  ServeProcess server(testing::shell_quote(model) +
                      " --port 0 --threads 2 --max-concurrent 4096 --max-seqs 256 --kv-blocks 4096");
  ASSERT_NE(server.port(), 0) << server.error();

  // One stream open: the thread count with a request in flight.
  HttpConnection one(server.port());
  ASSERT_TRUE(one.send_all(stream_request(1, 200)));
  ASSERT_TRUE(one.read_until("data: "));
  const int64_t threads_at_one = testing::process_threads(server.pid());
  ASSERT_GT(threads_at_one, 0);
  one.close();  // it leaves; the server cancels its request

  std::vector<std::string> requests;
  for (int i = 0; i < kStreams; ++i) requests.push_back(stream_request(i, 48));
  std::atomic<int64_t> threads_max{0};
  const std::vector<ClientOutcome> out =
      testing::run_concurrent_requests(server.port(), requests, [&](const std::atomic<bool>& done) {
        while (!done.load()) {
          threads_max = std::max<int64_t>(threads_max.load(), testing::process_threads(server.pid()));
          std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
      });
  int num_bad = 0;
  for (size_t i = 0; i < out.size(); ++i) {
    const std::string problem = stream_problem(out[i]);
    if (!problem.empty() && ++num_bad <= 5) ADD_FAILURE() << "stream " << i << ": " << problem;
  }
  EXPECT_EQ(num_bad, 0);
  EXPECT_EQ(threads_max.load(), threads_at_one);
  const testing::PrometheusText m = wait_idle(server.port());
  EXPECT_EQ(m.value("met:kv_cache_blocks_used"), 0);
  EXPECT_EQ(server.stop(), 0) << server.stderr_text();
}

TEST_F(MetServeScale, TenThousandIdleKeepAliveConnectionsAreHeldAndClosedCleanly) {
  MET_REQUIRE_SHARED(model, "models/stories260K.gguf");
  constexpr size_t kConnections = 10000;
  ServeProcess server(testing::shell_quote(model) + " --port 0 --threads 1");
  ASSERT_NE(server.port(), 0) << server.error();
  ASSERT_TRUE(http_call(server.port(), "GET", "/health").has_value());
  const int64_t threads_before = testing::process_threads(server.pid());
  const int64_t rss_before = testing::process_rss_kib(server.pid());

  testing::IdleConnections idle;
  EXPECT_EQ(idle.open(server.port(), kConnections), kConnections);
  const int64_t threads_held = testing::process_threads(server.pid());
  const int64_t rss_held = testing::process_rss_kib(server.pid());
  EXPECT_EQ(threads_held, threads_before);
  // What an idle connection may cost: its socket, buffer and coroutine frame.
  const double kib_per_connection = static_cast<double>(rss_held - rss_before) / kConnections;
  EXPECT_LT(kib_per_connection, 64.0) << "RSS " << rss_before << " -> " << rss_held << " KiB";
  std::printf("10,000 idle connections: server RSS %lld -> %lld KiB (%.1f KiB each), threads %lld\n",
              static_cast<long long>(rss_before), static_cast<long long>(rss_held), kib_per_connection,
              static_cast<long long>(threads_held));

  // The server still serves while they are held, and after they close.
  auto r = http_call(server.port(), "POST", "/v1/completions", R"({"prompt":"Once","max_tokens":4})");
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->status, 200) << r->body;
  idle.close_all();
  r = http_call(server.port(), "POST", "/v1/completions", R"({"prompt":"Once","max_tokens":4})");
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(testing::process_threads(server.pid()), threads_before);
  EXPECT_EQ(server.stop(), 0) << server.stderr_text();
}

TEST_F(MetServeScale, AClientThatNeverReadsIsCutOffWhileFiftyOthersStream) {
  // A long context, so the stuck client's request is still generating well
  // after the socket buffers fill (stories260K's 512 tokens end too soon).
  testing::TempDir dir;
  const std::string model = testing::make_small_model(dir, "long.gguf", 512, "--ctx 32768");
  ServeProcess server(testing::serve_args(model, "--max-pending-bytes 65536 --slow-client-timeout 1"));
  ASSERT_NE(server.port(), 0) << server.error();

  // The stuck client: a small receive window, a stream of many more bytes
  // than the socket buffers hold (20,000 tokens with 20 alternatives each,
  // about 12 MB against at most 4 MB of kernel send buffer), and it never
  // reads.
  HttpConnection stuck(server.port(), /*receive_buffer_bytes=*/4096);
  ASSERT_TRUE(stuck.connected());
  ASSERT_TRUE(stuck.send_all(stream_request(7, 20000, {{"logprobs", 20}})));

  std::vector<std::string> requests;
  for (int i = 0; i < 50; ++i) requests.push_back(stream_request(100 + i, 64));
  const std::vector<ClientOutcome> out = testing::run_concurrent_requests(server.port(), requests);
  for (size_t i = 0; i < out.size(); ++i) EXPECT_EQ(stream_problem(out[i]), "") << "stream " << i;

  // The stuck client is cut off: counted, its sequences released.
  testing::PrometheusText m;
  for (int i = 0; i < 600 && m.value("met:slow_clients_cut_total") < 1; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    m = metrics(server.port());
  }
  EXPECT_GE(m.value("met:slow_clients_cut_total"), 1);
  m = wait_idle(server.port());
  EXPECT_EQ(m.value("met:num_requests_running"), 0);
  EXPECT_EQ(m.value("met:kv_cache_blocks_used"), 0);
  // Its stream never finished normally: what is left to read ends with the
  // error frame saying why (or the connection closes first, when a write
  // waited past twice the timeout).
  stuck.set_receive_timeout(std::chrono::seconds(30));
  (void)stuck.read_until("data: [DONE]");
  EXPECT_EQ(stuck.raw().find("\"finish_reason\":\"length\""), std::string::npos);
  if (stuck.raw().find("data: [DONE]") != std::string::npos) {
    EXPECT_NE(stuck.raw().find("read too slowly"), std::string::npos);
  }
  EXPECT_EQ(server.stop(), 0) << server.stderr_text();
}

}  // namespace
}  // namespace met
