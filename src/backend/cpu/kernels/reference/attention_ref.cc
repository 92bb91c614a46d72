// ref::paged_attention. Tested by tests/backend/attention_test.cc.
#include "backend/cpu/kernels/reference/attention_ref.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "backend/cpu/q8_keys.h"
#include "core/check.h"

namespace met::cpu::ref {
namespace {

// K and V of positions [0, len) of one sequence, dequantized:
// [pos][kv_head][head_dim].
struct SeqKv {
  std::vector<float> k, v;
};

SeqKv load_seq(const KvCache& cache, int32_t layer, const AttnSeq& seq, int32_t len) {
  const int64_t width = int64_t{cache.layout().num_kv_heads} * cache.layout().head_dim;
  SeqKv kv{std::vector<float>(static_cast<size_t>(len * width)),
           std::vector<float>(static_cast<size_t>(len * width))};
  for (int32_t pos = 0; pos < len; ++pos) {
    cache.load(layer, seq.block_table, pos, kv.k.data() + pos * width, kv.v.data() + pos * width);
  }
  return kv;
}

// One row and head: positions [0, len).
void attend(const SeqKv& kv, int64_t width, int32_t kv_head, int32_t head_dim, const float* q,
            int32_t len, double scale, float* out) {
  std::vector<double> s(static_cast<size_t>(len));
  for (int32_t t = 0; t < len; ++t) {
    const float* k = kv.k.data() + t * width + int64_t{kv_head} * head_dim;
    double dot = 0.0;
    for (int32_t d = 0; d < head_dim; ++d) dot += static_cast<double>(q[d]) * k[d];
    s[static_cast<size_t>(t)] = dot * scale;
  }
  const double m = *std::max_element(s.begin(), s.end());
  double l = 0.0;
  for (double& x : s) l += (x = std::exp(x - m));
  std::vector<double> acc(static_cast<size_t>(head_dim), 0.0);
  for (int32_t t = 0; t < len; ++t) {
    const float* v = kv.v.data() + t * width + int64_t{kv_head} * head_dim;
    for (int32_t d = 0; d < head_dim; ++d)
      acc[static_cast<size_t>(d)] += s[static_cast<size_t>(t)] * v[d];
  }
  for (int32_t d = 0; d < head_dim; ++d)
    out[d] = static_cast<float>(acc[static_cast<size_t>(d)] / l);
}

}  // namespace

std::vector<float> attended_query(const KvCache& cache, const float* q) {
  const int32_t hd = cache.layout().head_dim;
  std::vector<float> out(q, q + hd);
  if (cache.layout().dtype != GgmlType::kQ8_0) return out;
  std::vector<uint8_t> codes(static_cast<size_t>(q8_query_bytes(hd)));
  const QueryQ8 q8 = quantize_query_q8(q, hd, codes.data());
  for (int32_t d = 0; d < hd; ++d) out[static_cast<size_t>(d)] = q8.d[d / 32] * static_cast<float>(q8.codes[d]);
  return out;
}

void paged_attention(const KvCache& cache, int32_t layer, std::span<const AttnSeq> seqs,
                     const float* q, int64_t q_stride, int32_t num_heads, float scale, float* out,
                     int64_t out_stride) {
  const KvLayout& layout = cache.layout();
  MET_CHECK(num_heads % layout.num_kv_heads == 0, "{} heads over {} kv heads", num_heads,
            layout.num_kv_heads);
  const int32_t group = num_heads / layout.num_kv_heads;
  const int32_t hd = layout.head_dim;
  const int64_t width = int64_t{layout.num_kv_heads} * hd;
  for (const AttnSeq& seq : seqs) {
    const SeqKv kv = load_seq(cache, layer, seq, seq.num_cached + seq.num_rows);
    for (int32_t r = 0; r < seq.num_rows; ++r) {
      const int64_t row = seq.row_begin + r;
      for (int32_t h = 0; h < num_heads; ++h) {
        const std::vector<float> qh = attended_query(cache, q + row * q_stride + int64_t{h} * hd);
        attend(kv, width, h / group, hd, qh.data(), row_read_end(seq, r), scale,
               out + row * out_stride + int64_t{h} * hd);
      }
    }
  }
}

}  // namespace met::cpu::ref
