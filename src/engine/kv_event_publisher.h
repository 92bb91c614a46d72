// KvEventPublisher: sends KV event batches to prefix-aware routers the way
// vLLM's ZmqEventPublisher does (vllm/distributed/kv_events.py), so Dynamo's
// KV router and llm-d's precise prefix-cache scorer can follow a met
// replica's prefix cache:
// - a PUB socket bound to `endpoint` sends each batch as three frames:
//   the topic, the batch's sequence number (8 bytes, big-endian, from 0 up
//   by one), and the payload (engine/kv_event_codec.h);
// - a ROUTER socket bound to `replay_endpoint` (optional) keeps the last
//   `buffer_batches` batches: a client (a REQ socket) sends a start sequence
//   number (8 bytes, big-endian) and gets one reply per buffered batch from
//   there on, frames (sequence number, payload), then the end marker
//   (sequence number -1, an empty payload).
// Invariants: sequence numbers have no gaps; a replay holds every batch
// handed over before the request arrived (if still buffered); a batch is
// encoded and sent on the publisher's thread, so publish() never waits on a
// socket; the destructor sends every batch handed over before it returns.
// Threading: publish() from one thread at a time (the engine thread); the
// sockets belong to the publisher's own thread. Tested by
// tests/engine/kv_event_publisher_test.cc.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <thread>

#include "core/mutex.h"
#include "core/status.h"
#include "engine/kv_event.h"

namespace met {

struct KvEventOptions {
  std::string endpoint;         // a ZeroMQ endpoint to bind ("tcp://*:5557", "ipc:///run/met-kv"); "": off
  std::string replay_endpoint;  // "": no replay socket
  std::string topic;            // the first frame of every message
  int32_t buffer_batches = 10000;  // batches kept for replay
  std::string medium = "CPU";      // where the blocks live, as events name it
};

// The bound of KvEventOptions::buffer_batches (--kv-events-buffer).
inline constexpr int32_t kMaxKvEventBufferBatches = 1 << 20;

// The sequence number of the replay's end marker.
inline constexpr int64_t kKvEventReplayEnd = -1;

class KvEventPublisher {
 public:
  // Binds the sockets (a bad or busy endpoint is refused here, naming it)
  // and starts the publisher's thread. REQUIRES: options.endpoint != "".
  static Result<std::unique_ptr<KvEventPublisher>> create(const KvEventOptions& options);
  ~KvEventPublisher();
  KvEventPublisher(const KvEventPublisher&) = delete;
  KvEventPublisher& operator=(const KvEventPublisher&) = delete;

  // Hands a batch to the publisher's thread.
  void publish(KvEventBatch batch);

 private:
  struct Sockets;  // the ZeroMQ context and sockets (kv_event_publisher.cc)
  struct Sent {
    int64_t seq;
    std::string payload;
  };

  KvEventPublisher(const KvEventOptions& options, std::unique_ptr<Sockets> sockets);
  void run();
  // Sends every batch handed over so far, in order.
  void send_pending();
  void send(const KvEventBatch& batch);
  void serve_replays();

  const KvEventOptions options_;
  std::unique_ptr<Sockets> sockets_;  // publisher's thread only, once it runs
  std::deque<KvEventBatch> work_;     // publisher's thread only: the batches being sent
  std::deque<Sent> sent_;             // publisher's thread only: the replay buffer
  int64_t next_seq_ = 0;              // publisher's thread only

  Mutex mu_;
  CondVar cv_;
  std::deque<KvEventBatch> pending_ GUARDED_BY(mu_);
  bool stopping_ GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace met
