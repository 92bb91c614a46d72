// run_reference.
#include "testing/reference_loop.h"

#include <algorithm>
#include <limits>

#include "core/check.h"
#include "sampling/sampler.h"
#include "tokenizer/incremental_detokenizer.h"

namespace met::testing {

ReferenceOutcome run_reference(Device& device, const Tokenizer& tokenizer, const EngineRequest& request,
                               int32_t max_seq_len) {
  const DeviceInfo& info = device.info();
  if (max_seq_len <= 0) max_seq_len = info.max_context;
  std::vector<BlockId> blocks;
  for (int32_t b = 0; b < info.num_kv_blocks; ++b) blocks.emplace_back(b);
  const Vocab& vocab = tokenizer.vocab();
  std::vector<TokenId> stops;
  if (!request.ignore_eos) stops = vocab.eog_ids();
  stops.insert(stops.end(), request.stop_token_ids.begin(), request.stop_token_ids.end());
  DetokenizerOptions dopt;
  dopt.stop_strings = request.stop_strings;
  dopt.at_sequence_start = std::all_of(request.prompt.begin(), request.prompt.end(), [&](TokenId t) {
    return vocab.token(t).kind == TokenKind::kControl;
  });
  IncrementalDetokenizer detok(tokenizer, dopt);
  Sampler sampler(request.sampling);

  ReferenceOutcome out;
  std::vector<TokenId> tokens = request.prompt;
  int32_t seq_len = 0;
  int32_t remaining = request.max_tokens;
  if (remaining == 0) {
    out.finish_reason = "length";
    return out;
  }
  StepPlan plan;
  StepResult result;
  for (;;) {
    // Feed every token not yet in the KV; the last row's logits come back.
    while (seq_len < static_cast<int32_t>(tokens.size())) {
      const int32_t n = std::min<int32_t>(static_cast<int32_t>(tokens.size()) - seq_len, info.max_rows);
      plan.clear();
      for (int32_t k = 0; k < n; ++k) {
        plan.inputs.push_back(FeedToken{tokens[static_cast<size_t>(seq_len + k)]});
        plan.positions.push_back(seq_len + k);
      }
      plan.seqs.push_back(StepSeq{0, n, seq_len, blocks, std::nullopt});
      plan.outputs.push_back(OutputRow{n - 1, OutputKind::kLogits});
      Result<Ticket> t = device.launch(plan);
      MET_CHECK(t.ok(), "{}", t.status().message());
      const Status s = device.await_result(*t, result);
      MET_CHECK(s.ok(), "{}", s.message());
      seq_len += n;
    }
    std::vector<float> logits(result.logits.begin(), result.logits.begin() + result.vocab_size);
    if (static_cast<int32_t>(out.tokens.size()) < request.min_tokens) {
      for (TokenId t : stops) logits[static_cast<size_t>(t)] = -std::numeric_limits<float>::infinity();
    }
    const TokenId next = sampler.sample(logits);
    out.tokens.push_back(next);
    tokens.push_back(next);
    --remaining;
    if (std::find(stops.begin(), stops.end(), next) != stops.end()) {
      out.text += detok.finish().text;
      out.finish_reason = "stop";
      break;
    }
    DetokenizerStep step = detok.push(next);
    out.text += step.text;
    if (step.stop.has_value()) {
      out.finish_reason = "stop";
      break;
    }
    if (remaining == 0 || static_cast<int32_t>(tokens.size()) >= max_seq_len) {
      out.text += detok.finish().text;
      out.finish_reason = "length";
      break;
    }
  }
  return out;
}

}  // namespace met::testing
