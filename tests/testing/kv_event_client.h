// KvEventClient: a prefix-aware router's end of met's KV events, as vLLM's
// kv_events_subscriber example and Dynamo's ZMQ listener do it: a SUB socket
// on the publisher's endpoint (frames: topic, 8-byte big-endian sequence
// number, payload) and a DEALER socket on its replay endpoint that frames
// its request as a REQ socket does (an empty delimiter first) but, unlike
// one, takes the many replies a replay sends.
// Threading: the test's thread. Never linked into apps/.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <zmq.hpp>

namespace met::testing {

struct KvEventMessage {
  std::string topic;  // empty for replay replies, which carry none
  int64_t seq = 0;
  std::string payload;
};

class KvEventClient {
 public:
  KvEventClient(const std::string& endpoint, const std::string& replay_endpoint, const std::string& topic) {
    sub_.set(zmq::sockopt::linger, 0);
    sub_.set(zmq::sockopt::subscribe, topic);
    sub_.connect(endpoint);
    if (!replay_endpoint.empty()) {
      req_.set(zmq::sockopt::linger, 0);
      req_.connect(replay_endpoint);
    }
  }

  // The next live message, or nullopt when none comes within `timeout`.
  std::optional<KvEventMessage> next(std::chrono::milliseconds timeout) {
    std::vector<std::string> frames;
    if (!recv_multipart(sub_, timeout, frames)) return std::nullopt;
    EXPECT_EQ(frames.size(), 3u) << "a KV event message is [topic, seq, payload]";
    if (frames.size() != 3) return std::nullopt;
    return KvEventMessage{frames[0], seq_of(frames[1]), frames[2]};
  }

  // Asks for the batches from `start` on; every reply up to and including
  // the end marker (seq -1, empty payload), or nullopt on a timeout.
  std::optional<std::vector<KvEventMessage>> replay(int64_t start, std::chrono::milliseconds timeout) {
    std::string request(8, '\0');
    for (size_t i = 0; i < 8; ++i) request[i] = static_cast<char>(static_cast<uint64_t>(start) >> (56 - 8 * i));
    req_.send(zmq::message_t(), zmq::send_flags::sndmore);
    req_.send(zmq::buffer(request), zmq::send_flags::none);
    std::vector<KvEventMessage> out;
    for (;;) {
      std::vector<std::string> frames;
      if (!recv_multipart(req_, timeout, frames)) return std::nullopt;
      EXPECT_EQ(frames.size(), 3u) << "a replay reply is [\"\", seq, payload]";
      if (frames.size() != 3) return std::nullopt;
      out.push_back(KvEventMessage{"", seq_of(frames[1]), frames[2]});
      if (out.back().seq == -1) return out;
    }
  }

 private:
  static int64_t seq_of(const std::string& b) {
    EXPECT_EQ(b.size(), 8u) << "a sequence number is 8 bytes";
    uint64_t u = 0;
    for (size_t i = 0; i < 8 && i < b.size(); ++i) u = (u << 8) | static_cast<uint8_t>(b[i]);
    return static_cast<int64_t>(u);
  }

  static bool recv_multipart(zmq::socket_t& s, std::chrono::milliseconds timeout, std::vector<std::string>& out) {
    zmq::pollitem_t item{s.handle(), 0, ZMQ_POLLIN, 0};
    if (zmq::poll(&item, 1, timeout) == 0) return false;
    zmq::message_t m;
    do {
      (void)s.recv(m, zmq::recv_flags::none);
      out.emplace_back(static_cast<const char*>(m.data()), m.size());
    } while (m.more());
    return true;
  }

  zmq::context_t context_{1};
  zmq::socket_t sub_{context_, zmq::socket_type::sub};
  zmq::socket_t req_{context_, zmq::socket_type::dealer};
};

}  // namespace met::testing
