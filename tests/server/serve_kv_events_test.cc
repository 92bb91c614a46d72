// KV events through `met serve --kv-events-endpoint` (a subprocess, a small
// random-weight model from `met make-model`), as a prefix-aware router sees
// them: a SUB socket gets a BlockStored batch once a request's prompt fills
// a block, and the replay socket gives back the batches from the start (the
// AllBlocksCleared sent at start first), then the end marker.
#include <gtest/gtest.h>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>

#include "serve_test_support.h"
#include "testing/http_client.h"
#include "testing/kv_event_client.h"
#include "testing/temp_dir.h"

namespace met::serve_kv_events_test {
namespace {

using namespace std::chrono_literals;

// A loopback TCP port free a moment ago.
uint16_t free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  uint16_t port = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0) {
    port = ntohs(a.sin_port);
  }
  ::close(fd);
  return port;
}

TEST(ServeKvEvents, ARouterGetsBlockStoredLiveAndTheWholeStreamByReplay) {
  testing::TempDir dir;
  const std::string model = testing::make_small_model(dir, "small.gguf", 512);
  const std::string live = "tcp://127.0.0.1:" + std::to_string(free_port());
  const std::string replay = "tcp://127.0.0.1:" + std::to_string(free_port());
  testing::ServeProcess server(testing::serve_args(
      model, "--kv-events-endpoint " + live + " --kv-events-replay-endpoint " + replay + " --kv-events-topic kv"));
  ASSERT_NE(server.port(), 0) << server.error();
  testing::KvEventClient router(live, replay, "kv");
  std::this_thread::sleep_for(300ms);  // a SUB socket sees only what is sent after it joined
  const auto r = testing::http_call(
      server.port(), "POST", "/v1/completions",
      R"({"prompt": "one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen )"
      R"(sixteen seventeen eighteen nineteen twenty", "max_tokens": 4})");
  ASSERT_TRUE(r.has_value());
  ASSERT_EQ(r->status, 200) << r->body;
  bool stored = false;
  for (int i = 0; i < 20 && !stored; ++i) {
    const std::optional<testing::KvEventMessage> m = router.next(500ms);
    if (!m.has_value()) continue;
    EXPECT_EQ(m->topic, "kv");
    stored = m->payload.find("BlockStored") != std::string::npos;
  }
  EXPECT_TRUE(stored) << "no BlockStored batch reached the subscriber";
  const std::optional<std::vector<testing::KvEventMessage>> all = router.replay(0, 5s);
  ASSERT_TRUE(all.has_value());
  ASSERT_GE(all->size(), 3u);  // AllBlocksCleared, a BlockStored batch, the end marker
  EXPECT_EQ(all->front().seq, 0);
  EXPECT_NE(all->front().payload.find("AllBlocksCleared"), std::string::npos);
  EXPECT_EQ(all->back().seq, -1);
  EXPECT_TRUE(all->back().payload.empty());
  EXPECT_EQ(server.stop(), 0) << server.stderr_text();
}

}  // namespace
}  // namespace met::serve_kv_events_test
