// DraftModel. Tested by tests/spec/draft_model_test.cc.
#include "spec/draft_model.h"

#include <algorithm>

#include "core/log.h"

namespace met {

DraftModel::DraftModel(Device& device) : device_(device), block_tokens_(device.info().kv_block_tokens) {
  const int32_t n = device.info().num_kv_blocks;
  free_.reserve(static_cast<size_t>(n));
  for (int32_t b = n - 1; b >= 0; --b) free_.push_back(BlockId(b));
  // Running sequences' slots are the first ones (the rest hold snapshots).
  const DeviceInfo& in = device.info();
  for (int32_t s = in.num_state_slots - in.num_state_snapshot_slots - 1; s >= 0; --s) {
    free_slots_.push_back(StateSlotId(s));
  }
  kept_versions_ = 1 + static_cast<size_t>(std::max(in.state_rollback, 0));
}

DraftModel::Track& DraftModel::track_for(uint64_t seq_id) {
  for (Track& t : tracks_) {
    if (t.seq_id == seq_id) return t;
  }
  tracks_.push_back(Track{seq_id, {}, {}, false, std::nullopt, {}});
  return tracks_.back();
}

void DraftModel::release(Track& t) {
  free_.insert(free_.end(), t.blocks.begin(), t.blocks.end());
  t.blocks.clear();
  t.tokens.clear();
  if (t.slot.has_value()) free_slots_.push_back(*t.slot);
  t.slot.reset();
  t.versions.clear();
}

size_t DraftModel::state_start(const Track& t, size_t tokens) const {
  size_t start = 0;
  for (const int32_t v : t.versions) {
    if (static_cast<size_t>(v) <= tokens) start = std::max(start, static_cast<size_t>(v));
  }
  return start;
}

void DraftModel::note_state(Track& t, int32_t from, int32_t to) const {
  std::erase_if(t.versions, [from](int32_t v) { return v > from; });  // a rewound branch is gone
  t.versions.push_back(to);
  if (t.versions.size() > kept_versions_) t.versions.erase(t.versions.begin());
}

void DraftModel::retain_only(std::span<const uint64_t> live) {
  for (size_t i = 0; i < tracks_.size();) {
    if (std::find(live.begin(), live.end(), tracks_[i].seq_id) != live.end()) {
      ++i;
      continue;
    }
    release(tracks_[i]);
    tracks_[i] = std::move(tracks_.back());
    tracks_.pop_back();
  }
}

bool DraftModel::prepare(Track& t, const DraftAsk& ask) {
  const auto n = static_cast<int64_t>(ask.tokens.size());
  if (t.starved || n == 0 || ask.num_drafts < 1) return false;
  // The last row runs at n - 1 + (num_drafts - 1): its position must exist.
  const int64_t positions = n + ask.num_drafts - 1;
  if (info().max_context > 0 && positions > info().max_context) return false;
  const auto shared = static_cast<size_t>(
      std::mismatch(t.tokens.begin(), t.tokens.end(), ask.tokens.begin(), ask.tokens.end()).first - t.tokens.begin());
  size_t keep = std::min(shared, static_cast<size_t>(n - 1));  // the last token runs again for its logits
  const bool has_state = info().num_state_slots > 0;
  if (has_state && !t.slot.has_value() && !free_slots_.empty()) {
    t.slot = free_slots_.back();
    free_slots_.pop_back();
  }
  if (has_state) keep = state_start(t, keep);
  t.tokens.resize(keep);
  const auto need = static_cast<size_t>((positions + block_tokens_ - 1) / block_tokens_);
  if ((has_state && !t.slot.has_value()) || need - std::min(need, t.blocks.size()) > free_.size()) {
    release(t);
    t.starved = true;
    return false;
  }
  while (t.blocks.size() < need) {
    t.blocks.push_back(free_.back());
    free_.pop_back();
  }
  return true;
}

void DraftModel::propose(std::span<DraftAsk> asks) {
  for (DraftAsk& ask : asks) ask.drafts->clear();
  if (failed_) return;
  for (const DraftAsk& ask : asks) track_for(ask.seq_id);  // tracks_ grows here only: pointers below stay
  jobs_.clear();
  int32_t most = 0;
  for (DraftAsk& ask : asks) {
    Track& t = track_for(ask.seq_id);
    if (!prepare(t, ask)) continue;
    jobs_.push_back(Job{&ask, &t});
    most = std::max(most, ask.num_drafts);
  }
  if (jobs_.empty() || !catch_up()) return;
  for (int32_t k = 1; k < most; ++k) {
    if (!extend(k)) return;
  }
}

void DraftModel::add_seq(Job& job, std::span<const TokenId> inputs, bool with_output) {
  const auto first = static_cast<int32_t>(plan_.inputs.size());
  const auto cached = static_cast<int32_t>(job.track->tokens.size());
  job.rows = static_cast<int32_t>(inputs.size());
  // Seqs are reused across steps (their block tables keep their storage).
  if (num_seqs_ == plan_.seqs.size()) plan_.seqs.emplace_back();
  StepSeq& seq = plan_.seqs[num_seqs_++];
  seq.row_begin = first;
  seq.num_rows = job.rows;
  seq.num_cached = cached;
  seq.state_slot = job.track->slot;
  assign_block_table(seq.block_table, job.track->blocks);
  for (size_t r = 0; r < inputs.size(); ++r) {
    plan_.inputs.emplace_back(FeedToken{inputs[r]});
    plan_.positions.push_back(cached + static_cast<int32_t>(r));
  }
  job.output = -1;
  if (with_output) {
    job.output = static_cast<int32_t>(plan_.outputs.size());
    plan_.outputs.push_back(OutputRow{first + job.rows - 1, OutputKind::kArgmax, 0, 0});
  }
}

bool DraftModel::catch_up() {
  const DeviceInfo& in = info();
  for (;;) {
    begin_plan();
    for (Job& job : jobs_) {
      job.rows = 0;
      job.output = -1;
      const std::span<const TokenId> all = job.ask->tokens;
      const size_t held = job.track->tokens.size();
      const int32_t room = in.max_rows - plan_.num_rows();
      if (held == all.size() || room <= 0 || static_cast<int32_t>(num_seqs_) >= in.max_seqs) continue;
      const size_t take = std::min(all.size() - held, static_cast<size_t>(room));
      add_seq(job, all.subspan(held, take), held + take == all.size());
    }
    if (num_seqs_ == 0) return true;
    if (!run()) return false;
    for (Job& job : jobs_) {
      const size_t held = job.track->tokens.size();
      const auto rows = static_cast<size_t>(job.rows);
      if (rows > 0 && job.track->slot.has_value()) {
        note_state(*job.track, static_cast<int32_t>(held), static_cast<int32_t>(held + rows));
      }
      job.track->tokens.insert(job.track->tokens.end(), job.ask->tokens.begin() + static_cast<std::ptrdiff_t>(held),
                               job.ask->tokens.begin() + static_cast<std::ptrdiff_t>(held + rows));
      if (job.output >= 0) job.ask->drafts->push_back(result_.argmax[static_cast<size_t>(job.output)]);
    }
  }
}

bool DraftModel::extend(int32_t k) {
  begin_plan();
  for (Job& job : jobs_) {
    job.rows = 0;
    job.output = -1;
    std::vector<TokenId>& drafts = *job.ask->drafts;
    if (job.ask->num_drafts <= k || static_cast<int32_t>(drafts.size()) != k) continue;
    add_seq(job, std::span<const TokenId>(&drafts[static_cast<size_t>(k - 1)], 1), true);
  }
  if (num_seqs_ == 0) return true;
  if (!run()) return false;
  for (Job& job : jobs_) {
    if (job.rows == 0) continue;
    std::vector<TokenId>& drafts = *job.ask->drafts;
    const auto held = static_cast<int32_t>(job.track->tokens.size());
    if (job.track->slot.has_value()) note_state(*job.track, held, held + 1);
    job.track->tokens.push_back(drafts[static_cast<size_t>(k - 1)]);
    drafts.push_back(result_.argmax[static_cast<size_t>(job.output)]);
  }
  return true;
}

void DraftModel::begin_plan() {
  plan_.inputs.clear();
  plan_.positions.clear();
  plan_.outputs.clear();
  num_seqs_ = 0;
}

bool DraftModel::run() {
  plan_.seqs.resize(num_seqs_);  // the seqs this step filled; the rest were last step's
  Result<Ticket> ticket = device_.launch(plan_);
  if (!ticket.ok()) {
    fail(ticket.status());
    return false;
  }
  const Status st = device_.await_result(*ticket, result_);
  if (!st.ok()) {
    fail(st);
    return false;
  }
  ++num_steps_;
  busy_ns_ += result_.busy_ns;
  return true;
}

void DraftModel::fail(const Status& status) {
  MET_LOG_WARN("the draft model's step failed ({}); speculation by the draft model is off from now on",
               status.message());
  failed_ = true;
  for (Job& job : jobs_) job.ask->drafts->clear();
  for (Track& t : tracks_) release(t);
  tracks_.clear();
}

}  // namespace met
