// Candidates: the tokens still in the running after the logit processors,
// with their (tempered) logits, kept so that truncation costs work
// proportional to the tokens it keeps: the k largest are found by a heap
// scan or nth_element, and only a prefix is ever sorted, grown on demand or
// cut at a logit floor (a vectorized scan moves the few candidates at or
// above it to the front).
// Invariants: items()[0, num_sorted()) are in descending order (ties: lower
// id first) and each is >= every later item; size() >= 1 once assigned from
// a non-empty row. No allocation after the first call at a given vocabulary.
// Threading: one owner at a time. Tested by tests/sampling/candidates_test.cc.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "core/ids.h"

namespace met {

struct Candidate {
  float logit = 0.0f;
  TokenId id = 0;
};

// Descending logit, then ascending id.
inline bool ranks_before(const Candidate& a, const Candidate& b) {
  return a.logit > b.logit || (a.logit == b.logit && a.id < b.id);
}

class Candidates {
 public:
  // Every token of the row, unsorted.
  void assign_all(std::span<const float> logits);
  // The k largest of the row, sorted. REQUIRES: 0 < k.
  void assign_top_k(std::span<const float> logits, size_t k);

  size_t size() const { return size_; }
  size_t num_sorted() const { return num_sorted_; }
  std::span<Candidate> items() { return {items_.data(), size_}; }
  std::span<const Candidate> items() const { return {items_.data(), size_}; }

  // Sorts so that num_sorted() >= min(m, size()).
  void sort_prefix(size_t m);
  // Sorts the candidates with logit >= floor (a prefix, since ranks follow
  // logits) to the front, so that num_sorted() >= their number; the rest
  // keep their set but not their order.
  void sort_prefix_at_least(float floor);
  // Keeps the first m. REQUIRES: m <= num_sorted(), 0 < m.
  void truncate(size_t m);
  // Keeps the items for which keep(item, index) holds, in their order.
  template <typename Keep>
  void keep_if(Keep keep);

  float max_logit() const;
  void scale(float factor);

 private:
  std::vector<Candidate> items_;
  size_t size_ = 0;
  size_t num_sorted_ = 0;
};

template <typename Keep>
void Candidates::keep_if(Keep keep) {
  size_t out = 0;
  size_t sorted_out = 0;
  for (size_t i = 0; i < size_; ++i) {
    if (!keep(items_[i], i)) continue;
    if (i < num_sorted_) ++sorted_out;
    items_[out++] = items_[i];
  }
  size_ = out;
  num_sorted_ = sorted_out;
}

}  // namespace met
