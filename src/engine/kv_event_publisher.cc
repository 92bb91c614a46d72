// KvEventPublisher over cppzmq. Every ZeroMQ call is made here, and its
// exceptions are caught here: at create() they become a Status; on the
// publisher's thread a failed send or replay is logged and dropped (a router
// that misses a batch asks for a replay). Tested by
// tests/engine/kv_event_publisher_test.cc.
#include "engine/kv_event_publisher.h"

#include <pthread.h>

#include <array>
#include <chrono>
#include <optional>
#include <utility>
#include <vector>

#include <zmq.hpp>

#include "core/check.h"
#include "core/log.h"
#include "engine/kv_event_codec.h"

namespace met {

struct KvEventPublisher::Sockets {
  zmq::context_t context{1};
  zmq::socket_t pub{context, zmq::socket_type::pub};
  std::optional<zmq::socket_t> replay;
};

namespace {

// How long the publisher's thread sleeps between looks at the replay socket.
constexpr auto kReplayPollInterval = std::chrono::milliseconds(5);
// How long closing waits for unsent messages.
constexpr int kLingerMs = 500;

std::array<uint8_t, 8> big_endian_seq(int64_t seq) {
  std::array<uint8_t, 8> b;
  const auto u = static_cast<uint64_t>(seq);
  for (int i = 0; i < 8; ++i) b[static_cast<size_t>(i)] = static_cast<uint8_t>(u >> (56 - 8 * i));
  return b;
}

int64_t seq_from_big_endian(const zmq::message_t& m) {
  uint64_t u = 0;
  const auto* p = static_cast<const uint8_t*>(m.data());
  for (size_t i = 0; i < 8; ++i) u = (u << 8) | p[i];
  return static_cast<int64_t>(u);
}

Status bind_socket(zmq::socket_t& socket, const std::string& endpoint, std::string_view flag) {
  try {
    socket.set(zmq::sockopt::linger, kLingerMs);
    socket.bind(endpoint);
  } catch (const zmq::error_t& e) {
    return invalid_argument("{} '{}': cannot bind it: {}", flag, endpoint, e.what());
  }
  return ok_status();
}

}  // namespace

Result<std::unique_ptr<KvEventPublisher>> KvEventPublisher::create(const KvEventOptions& options) {
  MET_CHECK(!options.endpoint.empty(), "KvEventPublisher::create without an endpoint");
  if (options.buffer_batches < 1 || options.buffer_batches > kMaxKvEventBufferBatches) {
    return invalid_argument("--kv-events-buffer {} must be between 1 and {}", options.buffer_batches,
                            kMaxKvEventBufferBatches);
  }
  auto sockets = std::make_unique<Sockets>();
  MET_RETURN_IF_ERROR(bind_socket(sockets->pub, options.endpoint, "--kv-events-endpoint"));
  if (!options.replay_endpoint.empty()) {
    try {
      sockets->replay.emplace(sockets->context, zmq::socket_type::router);
    } catch (const zmq::error_t& e) {
      return internal_error("cannot make the KV events replay socket: {}", e.what());
    }
    MET_RETURN_IF_ERROR(bind_socket(*sockets->replay, options.replay_endpoint, "--kv-events-replay-endpoint"));
  }
  std::unique_ptr<KvEventPublisher> p(new KvEventPublisher(options, std::move(sockets)));
  p->thread_ = std::thread([raw = p.get()] { raw->run(); });
  return p;
}

KvEventPublisher::KvEventPublisher(const KvEventOptions& options, std::unique_ptr<Sockets> sockets)
    : options_(options), sockets_(std::move(sockets)) {}

KvEventPublisher::~KvEventPublisher() {
  {
    MutexLock lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void KvEventPublisher::publish(KvEventBatch batch) {
  {
    MutexLock lock(mu_);
    pending_.push_back(std::move(batch));
  }
  cv_.notify_one();
}

void KvEventPublisher::run() {
  pthread_setname_np(pthread_self(), "met-kv-events");
  for (;;) {
    bool stopping = false;
    {
      MutexLock lock(mu_);
      if (pending_.empty() && !stopping_) {
        if (sockets_->replay) {
          cv_.wait_until(mu_, std::chrono::steady_clock::now() + kReplayPollInterval);
        } else {
          while (pending_.empty() && !stopping_) cv_.wait(mu_);
        }
      }
      stopping = stopping_;
    }
    send_pending();
    if (sockets_->replay) serve_replays();
    if (stopping) {
      send_pending();  // what was handed over after the last look
      return;
    }
  }
}

void KvEventPublisher::send_pending() {
  {
    MutexLock lock(mu_);
    work_.swap(pending_);
  }
  for (const KvEventBatch& batch : work_) send(batch);
  work_.clear();
}

void KvEventPublisher::send(const KvEventBatch& batch) {
  Sent sent{next_seq_++, {}};
  encode_kv_event_batch(batch, options_.medium, sent.payload);
  const std::array<uint8_t, 8> seq = big_endian_seq(sent.seq);
  try {
    // A PUB socket never blocks: past its high-water mark it drops.
    sockets_->pub.send(zmq::buffer(options_.topic), zmq::send_flags::sndmore);
    sockets_->pub.send(zmq::buffer(seq), zmq::send_flags::sndmore);
    sockets_->pub.send(zmq::buffer(sent.payload), zmq::send_flags::none);
  } catch (const zmq::error_t& e) {
    MET_LOG_WARN("KV events: batch {} not sent: {}", sent.seq, e.what());
  }
  if (!sockets_->replay) return;
  sent_.push_back(std::move(sent));
  while (sent_.size() > static_cast<size_t>(options_.buffer_batches)) sent_.pop_front();
}

void KvEventPublisher::serve_replays() {
  zmq::socket_t& replay = *sockets_->replay;
  try {
    for (;;) {
      // A REQ client's request: [identity, "", start seq].
      std::vector<zmq::message_t> frames;
      zmq::message_t frame;
      if (!replay.recv(frame, zmq::recv_flags::dontwait)) return;
      frames.push_back(std::move(frame));
      while (frames.back().more()) {
        (void)replay.recv(frame, zmq::recv_flags::none);
        frames.push_back(std::move(frame));
      }
      if (frames.size() != 3 || frames[2].size() != 8) {
        MET_LOG_WARN("KV events: a replay request of {} frames, not [identity, \"\", seq]", frames.size());
        continue;
      }
      const int64_t start = seq_from_big_endian(frames[2]);
      send_pending();  // a replay holds every batch handed over before it was asked for
      auto reply = [&](int64_t seq, std::string_view payload) {
        const std::array<uint8_t, 8> s = big_endian_seq(seq);
        replay.send(zmq::buffer(frames[0].data(), frames[0].size()), zmq::send_flags::sndmore);
        replay.send(zmq::message_t(), zmq::send_flags::sndmore);
        replay.send(zmq::buffer(s), zmq::send_flags::sndmore);
        replay.send(zmq::buffer(payload), zmq::send_flags::none);
      };
      for (const Sent& s : sent_) {
        if (s.seq >= start) reply(s.seq, s.payload);
      }
      reply(kKvEventReplayEnd, {});
    }
  } catch (const zmq::error_t& e) {
    MET_LOG_WARN("KV events: replay failed: {}", e.what());
  }
}

}  // namespace met
