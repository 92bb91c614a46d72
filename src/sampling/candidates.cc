// Candidates. Tested by tests/sampling/candidates_test.cc.
#include "sampling/candidates.h"

#include <algorithm>

#include "core/check.h"
#include "sampling/avx2_exp.h"
#include "sampling/candidate_mass.h"

namespace met {
namespace {

// ranks_before as a type std::sort can inline (a function pointer is not).
constexpr auto ranked = [](const Candidate& a, const Candidate& b) { return ranks_before(a, b); };

}  // namespace

void Candidates::assign_all(std::span<const float> logits) {
  if (items_.size() < logits.size()) items_.resize(logits.size());
  for (size_t i = 0; i < logits.size(); ++i) items_[i] = {logits[i], static_cast<TokenId>(i)};
  size_ = logits.size();
  num_sorted_ = 0;
}

void Candidates::assign_top_k(std::span<const float> logits, size_t k) {
  MET_DCHECK(k > 0);
  const size_t n = logits.size();
  if (k >= n || k * 8 > n) {
    assign_all(logits);
    sort_prefix(k);
    size_ = std::min(k, n);
    return;
  }
  // A min-heap of the k best so far (worst on top); a later equal logit
  // never displaces an earlier one, so ties keep the lower id.
  if (items_.size() < k) items_.resize(k);
  auto worse_on_top = [](const Candidate& a, const Candidate& b) { return ranks_before(a, b); };
  for (size_t i = 0; i < k; ++i) items_[i] = {logits[i], static_cast<TokenId>(i)};
  std::make_heap(items_.begin(), items_.begin() + static_cast<std::ptrdiff_t>(k), worse_on_top);
  float floor = items_[0].logit;
  auto offer = [&](size_t i) {
    if (!(logits[i] > floor)) return;
    std::pop_heap(items_.begin(), items_.begin() + static_cast<std::ptrdiff_t>(k), worse_on_top);
    items_[k - 1] = {logits[i], static_cast<TokenId>(i)};
    std::push_heap(items_.begin(), items_.begin() + static_cast<std::ptrdiff_t>(k), worse_on_top);
    floor = items_[0].logit;
  };
  // Once the heap holds good candidates most of the row is below its floor:
  // a chunk whose maximum (a reduction the compiler vectorizes) does not beat
  // the floor is skipped whole.
  constexpr size_t kChunk = 32;
  size_t i = k;
  for (; i + kChunk <= n; i += kChunk) {
    // Eight independent lanes (no dependency chain; GCC turns them into one
    // vector max per 8 logits).
    float lanes[8];
    for (size_t t = 0; t < 8; ++t) lanes[t] = logits[i + t];
    for (size_t j = 8; j < kChunk; j += 8) {
      for (size_t t = 0; t < 8; ++t) lanes[t] = lanes[t] > logits[i + j + t] ? lanes[t] : logits[i + j + t];
    }
    float chunk_max = lanes[0];
    for (size_t t = 1; t < 8; ++t) chunk_max = chunk_max > lanes[t] ? chunk_max : lanes[t];
    if (chunk_max <= floor) continue;  // a NaN in the chunk fails this: offered one by one
    for (size_t j = 0; j < kChunk; ++j) offer(i + j);
  }
  for (; i < n; ++i) offer(i);
  std::sort_heap(items_.begin(), items_.begin() + static_cast<std::ptrdiff_t>(k), worse_on_top);
  size_ = k;
  num_sorted_ = k;
}

void Candidates::sort_prefix(size_t m) {
  m = std::min(m, size_);
  if (m <= num_sorted_) return;
  const auto first = items_.begin() + static_cast<std::ptrdiff_t>(num_sorted_);
  const auto middle = items_.begin() + static_cast<std::ptrdiff_t>(m);
  const auto last = items_.begin() + static_cast<std::ptrdiff_t>(size_);
  if (middle != last) std::nth_element(first, middle - 1, last, ranked);
  std::sort(first, middle, ranked);
  num_sorted_ = m;
}

void Candidates::truncate(size_t m) {
  MET_DCHECK(m > 0 && m <= num_sorted_);
  size_ = m;
  num_sorted_ = m;
}

void Candidates::sort_prefix_at_least(float floor) {
  // A stable compaction of the passing candidates to the front: each one is
  // swapped with the first non-passing one, which has been scanned already.
  size_t out = 0;
  size_t i = 0;
  const __m256 vfloor = _mm256_set1_ps(floor);
  for (; i + avx2::kLanes <= size_; i += avx2::kLanes) {
    auto pass = static_cast<unsigned>(
        _mm256_movemask_ps(_mm256_cmp_ps(avx2::load_logits(items_.data() + i), vfloor, _CMP_GE_OQ)));
    for (; pass != 0; pass &= pass - 1) std::swap(items_[out++], items_[i + static_cast<size_t>(__builtin_ctz(pass))]);
  }
  for (; i < size_; ++i) {
    if (items_[i].logit >= floor) std::swap(items_[out++], items_[i]);
  }
  std::sort(items_.begin(), items_.begin() + static_cast<std::ptrdiff_t>(out), ranked);
  num_sorted_ = out;
}

float Candidates::max_logit() const {
  if (num_sorted_ > 0) return items_[0].logit;
  return max_logit_of(items());
}

void Candidates::scale(float factor) {
  for (size_t i = 0; i < size_; ++i) items_[i].logit *= factor;
}

}  // namespace met
