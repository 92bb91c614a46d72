// FakeDevice.
#include "testing/fake_device.h"
#include "kv/kv_block.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <limits>
#include <string>

namespace met::testing {
namespace {

constexpr int32_t kCellInts = 2;  // token, position
constexpr int32_t kBlockInts = kKvBlockTokens * kCellInts;
constexpr uint64_t kEmptyState = 0x9E3779B97F4A7C15ull;

uint64_t mix_state(uint64_t h, TokenId t) { return (h ^ static_cast<uint32_t>(t)) * 0x100000001B3ull + 7; }

const char* call_name(DeviceCall k) {
  switch (k) {
    case DeviceCall::kLaunch: return "launch";
    case DeviceCall::kAwait: return "await_result";
    case DeviceCall::kReadKv: return "read_kv_block";
    case DeviceCall::kWriteKv: return "write_kv_block";
    case DeviceCall::kReadState: return "read_state_slot";
    case DeviceCall::kWriteState: return "write_state_slot";
    case DeviceCall::kBindAdapter: return "bind_adapter";
  }
  return "?";
}

}  // namespace

FakeDevice::FakeDevice(FakeDeviceOptions options) : options_(std::move(options)) {
  info_.vocab_size = options_.vocab_size;
  info_.num_kv_blocks = options_.num_kv_blocks;
  info_.kv_block_tokens = options_.kv_block_tokens;
  info_.max_context = options_.max_context;
  info_.kv_window = options_.kv_window;
  info_.kv_block_bytes = kBlockInts * static_cast<int64_t>(sizeof(int32_t));
  info_.kv_dtype = GgmlType::kF32;
  info_.num_layers = 1;
  info_.num_kv_heads = 1;
  info_.head_dim = kCellInts;
  info_.max_rows = options_.max_rows;
  info_.max_seqs = options_.max_seqs;
  info_.max_outputs = options_.max_seqs;
  info_.fed_ahead_policy = options_.policy;
  kv_.assign(static_cast<size_t>(options_.num_kv_blocks) * kBlockInts, -1);
  info_.num_state_slots = options_.num_state_slots;
  // A slot's bytes are its hash; the position a version holds is kept beside them.
  info_.state_slot_bytes = options_.num_state_slots > 0 ? static_cast<int64_t>(sizeof(uint64_t)) : 0;
  info_.num_state_snapshot_slots = options_.num_state_snapshot_slots;
  info_.state_rollback = options_.state_rollback;
  info_.state_drafts = options_.state_drafts;
  info_.mtp_drafts = options_.mtp ? 1 + options_.mtp_chain : 0;
  info_.mtp_chain_seqs = options_.mtp && options_.mtp_chain > 0 ? options_.max_seqs : 0;
  info_.num_adapter_slots = options_.num_adapter_slots;
  info_.max_lora_rank = options_.num_adapter_slots > 0 ? options_.max_lora_rank : 0;
  info_.hidden_size = kFakeHiddenSize;
  info_.has_head = options_.has_head;
  info_.causal = options_.causal;
  info_.pooling = options_.pooling;
  adapters_.resize(static_cast<size_t>(options_.num_adapter_slots));
  states_.assign(static_cast<size_t>(options_.num_state_slots), std::vector<SlotState>(1));
}

FakeDevice::SlotState FakeDevice::begin_state(StateSlotId slot, int64_t from) {
  std::vector<SlotState>& versions = states_[static_cast<size_t>(slot.value())];
  SlotState st{kEmptyState, 0};
  if (from > 0) {
    auto it = std::find_if(versions.begin(), versions.end(), [&](const SlotState& v) { return v.num_tokens == from; });
    if (it == versions.end()) {
      ++num_state_mismatches_;  // the scheduler ran a row on a state that is not the sequence's
      st = versions.back();
    } else {
      st = *it;
    }
  }
  // A branch the sequence was rewound from is forgotten.
  std::erase_if(versions, [&](const SlotState& v) { return v.num_tokens > from; });
  return st;
}

void FakeDevice::end_state(StateSlotId slot, const SlotState& st) {
  std::vector<SlotState>& versions = states_[static_cast<size_t>(slot.value())];
  versions.push_back(st);
  const size_t keep = 1 + static_cast<size_t>(std::max(options_.state_rollback, options_.state_drafts));
  if (versions.size() > keep) versions.erase(versions.begin(), versions.end() - static_cast<ptrdiff_t>(keep));
}

void FakeDevice::run_states(const StepPlan& plan, std::span<const TokenId> tokens) {
  row_state_.assign(static_cast<size_t>(plan.num_rows()), 0);
  if (states_.empty()) return;
  const auto copy_newest = [&](const StateCopy& c) {
    states_[static_cast<size_t>(c.to.value())].assign(1, states_[static_cast<size_t>(c.from.value())].back());
  };
  for (const StateCopy& c : plan.state_restores) copy_newest(c);
  for (const StepSeq& sq : plan.seqs) {
    SlotState st = begin_state(*sq.state_slot, sq.num_cached);
    for (int32_t k = 0; k < sq.num_rows; ++k) {
      const auto row = static_cast<size_t>(sq.row_begin + k);
      st.hash = mix_state(st.hash, tokens[row]);
      ++st.num_tokens;
      row_state_[row] = st.hash;
      if (sq.state_checkpoints && k + 1 < sq.num_rows) end_state(*sq.state_slot, st);
    }
    end_state(*sq.state_slot, st);
  }
  for (const StateCopy& c : plan.state_snapshots) copy_newest(c);
}

Status FakeDevice::count(DeviceCall kind) {
  const int64_t n = num_calls_++;
  if ((fail_at_ && *fail_at_ == n) || (fail_kind_ && *fail_kind_ == kind)) {
    return internal_error("injected failure of {} (call {})", call_name(kind), n);
  }
  return ok_status();
}

TokenId FakeDevice::default_next(std::span<const TokenId> context) const {
  uint64_t h = 1469598103934665603ull;
  for (TokenId t : context) h = (h ^ static_cast<uint32_t>(t)) * 1099511628211ull;
  for (int attempt = 0;; ++attempt) {
    const auto t = static_cast<TokenId>((h >> 17) % static_cast<uint64_t>(options_.vocab_size));
    if (std::find(options_.avoid.begin(), options_.avoid.end(), t) == options_.avoid.end()) return t;
    h = h * 6364136223846793005ull + 1442695040888963407ull + static_cast<uint64_t>(attempt);
  }
}

Result<Ticket> FakeDevice::launch(const StepPlan& plan) {
  MET_RETURN_IF_ERROR(count(DeviceCall::kLaunch));
  MET_RETURN_IF_ERROR(
      validate_plan(plan, info_.num_kv_blocks, info_.max_context, info_.kv_block_tokens, info_.kv_window));
  MET_RETURN_IF_ERROR(validate_state_slots(plan, info_.num_state_slots, info_.state_drafts));
  MET_RETURN_IF_ERROR(validate_mtp_chains(plan, std::max(info_.mtp_drafts - 1, 0), info_.mtp_chain_seqs));
  if (plan.num_rows() > info_.max_rows) return invalid_argument("{} rows > {}", plan.num_rows(), info_.max_rows);
  if (pending_.size() >= 2) return internal_error("FakeDevice keeps at most two steps in flight");
  MET_RETURN_IF_ERROR(validate_adapter_slots(plan, info_.num_adapter_slots));
  MET_RETURN_IF_ERROR(validate_model_outputs(plan, info_.has_head, info_.causal));
  std::vector<TokenId> marks(plan.seqs.size(), 0);
  for (size_t i = 0; i < plan.seqs.size(); ++i) {
    const int32_t slot = plan.seqs[i].adapter_slot;
    if (slot == kNoAdapterSlot) continue;
    const LoraAdapter* a = adapters_[static_cast<size_t>(slot)].get();
    if (a == nullptr) return invalid_argument("seq {} runs adapter slot {}, which holds no adapter", i, slot);
    marks[i] = static_cast<TokenId>(std::hash<std::string>()(a->name) & 0x3FFFFFFF) + 1;
  }
  const Ticket ticket(next_ticket_++);
  pending_.emplace_back(ticket, plan);
  pending_marks_.push_back(std::move(marks));
  if (keep_plans_) plans_.push_back(plan);
  return ticket;
}

Status FakeDevice::await_result(Ticket ticket, StepResult& out) {
  Status s = count(DeviceCall::kAwait);
  if (pending_.empty() || ticket != pending_.front().first) {
    return internal_error("await of a ticket that is not the oldest in flight");
  }
  StepPlan plan = std::move(pending_.front().second);
  pending_.pop_front();
  const std::vector<TokenId> marks = std::move(pending_marks_.front());
  pending_marks_.pop_front();
  if (!s.ok()) {
    prev_argmax_.clear();  // a step fed from this one has no input
    return s;
  }
  ++num_steps_;
  max_rows_seen_ = std::max(max_rows_seen_, plan.num_rows());
  // Write every row's (token, position) into its KV slot.
  std::vector<TokenId> tokens(static_cast<size_t>(plan.num_rows()));
  for (int32_t r = 0; r < plan.num_rows(); ++r) {
    const RowInput& in = plan.inputs[static_cast<size_t>(r)];
    if (const auto* f = std::get_if<FeedToken>(&in)) {
      tokens[static_cast<size_t>(r)] = f->id;
    } else {
      const auto from = static_cast<size_t>(std::get<FeedFromRow>(in).output_index);
      if (from >= prev_argmax_.size()) {
        prev_argmax_.clear();
        return internal_error("row {} is fed from output {} of a step that gave {}", r, from, prev_argmax_.size());
      }
      tokens[static_cast<size_t>(r)] = prev_argmax_[from];
    }
  }
  for (const StepSeq& sq : plan.seqs) {
    for (int32_t k = 0; k < sq.num_rows; ++k) {
      const int32_t row = sq.row_begin + k;
      const int32_t pos = plan.positions[static_cast<size_t>(row)];
      const BlockId b = sq.block_table[static_cast<size_t>(pos / kKvBlockTokens)];
      int32_t* cell = &kv_[static_cast<size_t>(b.value()) * kBlockInts + static_cast<size_t>(pos % kKvBlockTokens) * kCellInts];
      cell[0] = tokens[static_cast<size_t>(row)];
      cell[1] = pos;
    }
  }
  run_states(plan, tokens);
  out.vocab_size = info_.vocab_size;
  out.busy_ns = options_.step_ns ? options_.step_ns(plan.num_rows()) : 0;
  out.logits.assign(plan.outputs.size() * static_cast<size_t>(info_.vocab_size), 0.0f);
  out.argmax.assign(plan.outputs.size(), 0);
  out.mtp_argmax.assign(options_.mtp && plan.mtp_guesses ? plan.outputs.size() : 0, 0);
  out.mtp_chain_width = options_.mtp ? options_.mtp_chain : 0;
  out.mtp_chain.assign(plan.outputs.size() * static_cast<size_t>(out.mtp_chain_width), kNoChainToken);
  for (size_t o = 0; o < plan.outputs.size(); ++o) {
    const int32_t row = plan.outputs[o].row;
    const StepSeq* sq = nullptr;
    TokenId mark = 0;
    for (size_t i = 0; i < plan.seqs.size(); ++i) {
      const StepSeq& s2 = plan.seqs[i];
      if (row >= s2.row_begin && row < s2.row_begin + s2.num_rows) {
        sq = &s2;
        mark = marks[i];
      }
    }
    const int32_t pos = plan.positions[static_cast<size_t>(row)];
    context_.clear();
    // With a window the row reads only its last kv_window positions, so a
    // block released behind it is never touched (validate_plan checked).
    const int32_t first = options_.kv_window > 0 ? std::max(0, pos - options_.kv_window + 1) : 0;
    for (int32_t p = first; p <= pos; ++p) {
      const BlockId b = sq->block_table[static_cast<size_t>(p / kKvBlockTokens)];
      const int32_t* cell = &kv_[static_cast<size_t>(b.value()) * kBlockInts + static_cast<size_t>(p % kKvBlockTokens) * kCellInts];
      // A cell that does not hold this position reads as a poisoned token,
      // so a lost or misplaced block changes the output.
      context_.push_back(cell[1] == p ? cell[0] : -1000 - p);
    }
    if (mark != 0) context_.push_back(-mark);  // the adapter changes what the model says
    if (!states_.empty()) {  // a recurrent model's output reads its state too
      const uint64_t h = row_state_[static_cast<size_t>(row)];
      context_.push_back(static_cast<TokenId>(h & 0x7FFFFFFF));
      context_.push_back(static_cast<TokenId>((h >> 32) & 0x7FFFFFFF));
    }
    const TokenId next = next_token_ ? next_token_(context_) : default_next(context_);
    float* logits = &out.logits[o * static_cast<size_t>(info_.vocab_size)];
    logits[static_cast<size_t>(next)] = 10.0f;
    const OutputRow& orow = plan.outputs[o];
    for (int32_t k = 0; k < orow.num_banned; ++k) {
      logits[static_cast<size_t>(plan.banned[static_cast<size_t>(orow.banned_begin + k)])] =
          -std::numeric_limits<float>::infinity();
    }
    out.argmax[o] = static_cast<TokenId>(std::max_element(logits, logits + info_.vocab_size) - logits);
    if (options_.mtp && plan.mtp_guesses) {
      context_.push_back(out.argmax[o]);
      out.mtp_argmax[o] = options_.mtp(context_);
      if (row != sq->row_begin + sq->num_rows - 1) continue;
      TokenId* chain = out.mtp_chain.data() + o * static_cast<size_t>(options_.mtp_chain);  // empty: no chain
      for (int32_t j = 0; j < sq->mtp_chain; ++j) {
        context_.push_back(j == 0 ? out.mtp_argmax[o] : chain[j - 1]);
        chain[j] = options_.mtp(context_);
      }
    }
  }
  write_hidden(plan, out);
  for (const Override& ov : overrides_) {
    if (ov.step == num_steps_ - 1 && ov.output < out.argmax.size()) out.argmax[ov.output] = ov.token;
  }
  prev_argmax_ = out.argmax;
  return ok_status();
}

void FakeDevice::add_row_hidden(const StepPlan& plan, const StepSeq& sq, int32_t row, float* h) const {
  const int32_t pos = plan.positions[static_cast<size_t>(row)];
  const int32_t last = info_.causal ? pos : sq.num_cached + sq.num_rows - 1;
  float context_sum = 0.0f;
  TokenId token = 0;
  for (int32_t p = 0; p <= last; ++p) {
    const BlockId b = sq.block_table[static_cast<size_t>(p / kKvBlockTokens)];
    const int32_t* cell =
        &kv_[static_cast<size_t>(b.value()) * kBlockInts + static_cast<size_t>(p % kKvBlockTokens) * kCellInts];
    const TokenId t = cell[1] == p ? cell[0] : -1000 - p;
    context_sum += static_cast<float>(t);
    if (p == pos) token = t;
  }
  h[0] += static_cast<float>(token);
  h[1] += static_cast<float>(pos);
  h[2] += context_sum;
  h[3] += 1.0f;
}

void FakeDevice::write_hidden(const StepPlan& plan, StepResult& out) const {
  out.hidden_size = kFakeHiddenSize;
  out.hidden.assign(plan.outputs.size() * kFakeHiddenSize, 0.0f);
  for (size_t o = 0; o < plan.outputs.size(); ++o) {
    const OutputRow& orow = plan.outputs[o];
    if (!is_hidden_output(orow.kind)) continue;
    for (const StepSeq& sq : plan.seqs) {
      if (orow.row < sq.row_begin || orow.row >= sq.row_begin + sq.num_rows) continue;
      float* h = &out.hidden[o * kFakeHiddenSize];
      if (orow.kind == OutputKind::kHidden) {
        add_row_hidden(plan, sq, orow.row, h);
      } else {
        for (int32_t r = sq.row_begin; r < sq.row_begin + sq.num_rows; ++r) add_row_hidden(plan, sq, r, h);
      }
    }
  }
}

Status FakeDevice::read_kv_block(BlockId block, std::span<uint8_t> bytes) {
  MET_RETURN_IF_ERROR(count(DeviceCall::kReadKv));
  if (static_cast<int64_t>(bytes.size()) != info_.kv_block_bytes) return invalid_argument("bad block size");
  std::memcpy(bytes.data(), &kv_[static_cast<size_t>(block.value()) * kBlockInts], bytes.size());
  return ok_status();
}

Status FakeDevice::write_kv_block(BlockId block, std::span<const uint8_t> bytes) {
  MET_RETURN_IF_ERROR(count(DeviceCall::kWriteKv));
  if (static_cast<int64_t>(bytes.size()) != info_.kv_block_bytes) return invalid_argument("bad block size");
  std::memcpy(&kv_[static_cast<size_t>(block.value()) * kBlockInts], bytes.data(), bytes.size());
  return ok_status();
}

Status FakeDevice::bind_adapter(int32_t slot, std::shared_ptr<const LoraAdapter> adapter) {
  MET_RETURN_IF_ERROR(count(DeviceCall::kBindAdapter));
  if (slot < 0 || slot >= info_.num_adapter_slots) {
    return invalid_argument("adapter slot {} is outside the device's {}", slot, info_.num_adapter_slots);
  }
  if (adapter != nullptr && adapter->max_rank > info_.max_lora_rank) {
    return invalid_argument("adapter '{}' has rank {}; the device runs up to {}", adapter->name, adapter->max_rank,
                            info_.max_lora_rank);
  }
  num_binds_ += adapter != nullptr ? 1 : 0;
  adapters_[static_cast<size_t>(slot)] = std::move(adapter);
  return ok_status();
}

Status FakeDevice::read_state_slot(StateSlotId slot, int64_t position, std::span<uint8_t> bytes) {
  MET_RETURN_IF_ERROR(count(DeviceCall::kReadState));
  if (slot.value() < 0 || slot.value() >= info_.num_state_slots) return invalid_argument("bad state slot");
  if (static_cast<int64_t>(bytes.size()) != info_.state_slot_bytes) return invalid_argument("bad state size");
  for (const SlotState& v : states_[static_cast<size_t>(slot.value())]) {
    if (v.num_tokens != position) continue;
    std::memcpy(bytes.data(), &v.hash, bytes.size());
    return ok_status();
  }
  return out_of_range("state slot {}: no state after {} tokens", slot.value(), position);
}

Status FakeDevice::write_state_slot(StateSlotId slot, int64_t position, std::span<const uint8_t> bytes) {
  MET_RETURN_IF_ERROR(count(DeviceCall::kWriteState));
  if (slot.value() < 0 || slot.value() >= info_.num_state_slots) return invalid_argument("bad state slot");
  if (static_cast<int64_t>(bytes.size()) != info_.state_slot_bytes) return invalid_argument("bad state size");
  SlotState st;
  std::memcpy(&st.hash, bytes.data(), bytes.size());
  st.num_tokens = position;
  states_[static_cast<size_t>(slot.value())].assign(1, st);
  return ok_status();
}

}  // namespace met::testing
