// Tests for engine/kv_event_publisher.h over real ZeroMQ sockets (ipc in a
// temporary folder): vLLM's framing (topic, big-endian sequence number,
// payload), sequence numbers from 0 up by one, the replay protocol, and bad
// endpoints refused at create(). Delivery is polled with generous timeouts;
// nothing is timed.
#include "engine/kv_event_publisher.h"

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "testing/kv_event_client.h"
#include "testing/msgpack_reader.h"
#include "testing/temp_dir.h"

namespace met {
namespace {

using namespace std::chrono_literals;
using testing::KvEventClient;
using testing::KvEventMessage;

constexpr auto kDeliveryTimeout = 10s;

KvEventBatch removed_batch(uint64_t hash) {
  KvEventBatch b;
  b.ts = 1.0;
  b.events.push_back(KvBlockRemoved{.block_hash = hash});
  return b;
}

// The hash a one-event batch's BlockRemoved names.
uint64_t removed_hash(const std::string& payload) {
  const std::optional<testing::MsgpackValue> v = testing::read_msgpack(payload);
  EXPECT_TRUE(v.has_value());
  if (!v) return 0;
  return v->array.at(1).array.at(0).array.at(1).array.at(0).u64();
}

std::unique_ptr<KvEventPublisher> make_publisher(const KvEventOptions& o) {
  Result<std::unique_ptr<KvEventPublisher>> p = KvEventPublisher::create(o);
  EXPECT_TRUE(p.ok()) << p.status().message();
  return p.ok() ? std::move(*p) : nullptr;
}

TEST(KvEventPublisher, SendsTopicSequenceAndPayloadWithSequenceNumbersUpByOne) {
  testing::TempDir dir;
  KvEventOptions o;
  o.endpoint = "ipc://" + dir.file("kv");
  o.topic = "kv@met";
  std::unique_ptr<KvEventPublisher> pub = make_publisher(o);
  ASSERT_NE(pub, nullptr);
  KvEventClient client(o.endpoint, "", o.topic);
  // A subscription takes a moment to reach the publisher: probe until one
  // batch arrives.
  std::optional<KvEventMessage> first;
  const auto give_up = std::chrono::steady_clock::now() + kDeliveryTimeout;
  for (uint64_t probe = 1000; !first && std::chrono::steady_clock::now() < give_up; ++probe) {
    pub->publish(removed_batch(probe));
    first = client.next(20ms);
  }
  ASSERT_TRUE(first.has_value()) << "no batch reached the subscriber";
  while (std::optional<KvEventMessage> late = client.next(50ms)) first = late;  // the other probes in flight
  for (uint64_t i = 1; i <= 3; ++i) pub->publish(removed_batch(i));
  for (uint64_t i = 1; i <= 3; ++i) {
    const std::optional<KvEventMessage> m = client.next(kDeliveryTimeout);
    ASSERT_TRUE(m.has_value());
    EXPECT_EQ(m->topic, "kv@met");
    EXPECT_EQ(m->seq, first->seq + static_cast<int64_t>(i));
    EXPECT_EQ(removed_hash(m->payload), i);
  }
}

TEST(KvEventPublisher, ReplayReturnsTheBufferedBatchesFromTheStartThenTheEndMarker) {
  testing::TempDir dir;
  KvEventOptions o;
  o.endpoint = "ipc://" + dir.file("kv");
  o.replay_endpoint = "ipc://" + dir.file("replay");
  o.buffer_batches = 3;
  std::unique_ptr<KvEventPublisher> pub = make_publisher(o);
  ASSERT_NE(pub, nullptr);
  for (uint64_t i = 0; i < 5; ++i) pub->publish(removed_batch(100 + i));  // seqs 0..4; 2..4 kept
  KvEventClient client(o.endpoint, o.replay_endpoint, "");
  const std::optional<std::vector<KvEventMessage>> from3 = client.replay(3, kDeliveryTimeout);
  ASSERT_TRUE(from3.has_value());
  ASSERT_EQ(from3->size(), 3u);
  EXPECT_EQ((*from3)[0].seq, 3);
  EXPECT_EQ(removed_hash((*from3)[0].payload), 103u);
  EXPECT_EQ((*from3)[1].seq, 4);
  EXPECT_EQ(removed_hash((*from3)[1].payload), 104u);
  EXPECT_EQ((*from3)[2].seq, kKvEventReplayEnd);
  EXPECT_TRUE((*from3)[2].payload.empty());
  // A start older than the buffer gets what the buffer still holds.
  const std::optional<std::vector<KvEventMessage>> from0 = client.replay(0, kDeliveryTimeout);
  ASSERT_TRUE(from0.has_value());
  ASSERT_EQ(from0->size(), 4u);
  EXPECT_EQ((*from0)[0].seq, 2);
  EXPECT_EQ((*from0)[3].seq, kKvEventReplayEnd);
}

TEST(KvEventPublisher, ReplayPastTheLastBatchIsOnlyTheEndMarker) {
  testing::TempDir dir;
  KvEventOptions o;
  o.endpoint = "ipc://" + dir.file("kv");
  o.replay_endpoint = "ipc://" + dir.file("replay");
  std::unique_ptr<KvEventPublisher> pub = make_publisher(o);
  ASSERT_NE(pub, nullptr);
  pub->publish(removed_batch(1));
  KvEventClient client(o.endpoint, o.replay_endpoint, "");
  const std::optional<std::vector<KvEventMessage>> r = client.replay(1, kDeliveryTimeout);
  ASSERT_TRUE(r.has_value());
  ASSERT_EQ(r->size(), 1u);
  EXPECT_EQ((*r)[0].seq, kKvEventReplayEnd);
}

TEST(KvEventPublisher, ABadEndpointIsRefusedWithOneLineNamingTheFlagAndTheEndpoint) {
  KvEventOptions o;
  o.endpoint = "nonsense://here";
  Result<std::unique_ptr<KvEventPublisher>> p = KvEventPublisher::create(o);
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("--kv-events-endpoint 'nonsense://here'"), std::string::npos)
      << p.status().message();
  EXPECT_EQ(p.status().message().find('\n'), std::string::npos);

  testing::TempDir dir;
  o.endpoint = "ipc://" + dir.file("kv");
  o.replay_endpoint = "tcp://no-such-host:5558";
  p = KvEventPublisher::create(o);
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("--kv-events-replay-endpoint"), std::string::npos) << p.status().message();
}

TEST(KvEventPublisher, ABufferOutsideItsBoundsIsRefused) {
  testing::TempDir dir;
  KvEventOptions o;
  o.endpoint = "ipc://" + dir.file("kv");
  o.buffer_batches = 0;
  Result<std::unique_ptr<KvEventPublisher>> p = KvEventPublisher::create(o);
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("--kv-events-buffer 0"), std::string::npos) << p.status().message();
}

}  // namespace
}  // namespace met
