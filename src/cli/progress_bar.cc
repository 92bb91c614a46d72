// Terminal progress bar.
#include "cli/progress_bar.h"

#include <unistd.h>

#include <cstdio>

namespace met {

ProgressBar::ProgressBar(std::string label) : label_(std::move(label)), enabled_(isatty(2) == 1) {}

ProgressBar::~ProgressBar() {
  if (drawn_) std::fputc('\n', stderr);
}

void ProgressBar::update(size_t done, size_t total) {
  if (!enabled_ || total == 0) return;
  constexpr int kWidth = 40;
  const int filled = static_cast<int>(kWidth * done / total);
  std::string bar(static_cast<size_t>(filled), '#');
  bar.resize(kWidth, '.');
  std::fprintf(stderr, "\r%s [%s] %3d%%", label_.c_str(), bar.c_str(),
               static_cast<int>(100 * done / total));
  std::fflush(stderr);
  drawn_ = true;
}

}  // namespace met
