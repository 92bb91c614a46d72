// Helpers for the hub tests: references, file contents, reading a file
// back, and a loopback port nothing listens on. Threading: the test's thread.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "hub/hub_ref.h"

namespace met::testing {

// The parsed reference `text` (a parse failure fails the test).
inline HubRef ref_of(const std::string& text) {
  Result<HubRef> ref = parse_hub_ref(text);
  EXPECT_TRUE(ref.ok()) << ref.status().to_string();
  return ref.ok() ? *ref : HubRef{};
}

// `n` bytes that differ from position to position.
inline std::string model_bytes(size_t n, uint32_t seed) {
  std::string s(n, '\0');
  uint32_t x = seed * 2654435761u + 1;
  for (char& c : s) {
    x = x * 1664525u + 1013904223u;
    c = static_cast<char>(x >> 24);
  }
  return s;
}

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// A loopback port that was free a moment ago (bound, then closed).
inline uint16_t closed_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(a);
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a));
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(fd);
  return ntohs(a.sin_port);
}

}  // namespace met::testing
