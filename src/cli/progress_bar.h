// ProgressBar: a one-line bar on stderr, drawn only when stderr is a terminal
// (so logs and tests see nothing). Threading: one thread.
// Tested by use (make-model, quantize); nothing to assert off a terminal.
#pragma once

#include <cstddef>
#include <string>

namespace met {

class ProgressBar {
 public:
  explicit ProgressBar(std::string label);
  ~ProgressBar();
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;

  void update(size_t done, size_t total);

 private:
  std::string label_;
  bool enabled_;
  bool drawn_ = false;
};

}  // namespace met
