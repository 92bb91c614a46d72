// The sequence lifecycle (reference 000): finishing a sequence, answering it
// with an error, marking it failed, swapping it out to a spill image and
// resuming it from one, and giving back the blocks behind a sliding window.
// Invariants (DESIGN.md 1-3): every path answers the client exactly once;
// finish_sequence caches the full blocks and then releases them; send_error
// releases without caching; a failed sequence (error set) never gets a normal
// finish frame; every error path of swap-out and resume answers the client
// and frees what it took; a spill image is removed on every exit of a resume
// once it was opened; an image holds only the live blocks and a resumed
// sequence gets its released ones back released.
// Threading: engine thread only. Tested by tests/scheduler/lifecycle_test.cc.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "kv/kv_manager.h"
#include "kv/spill_io.h"
#include "scheduler/active_seq.h"
#include "scheduler/dev_port.h"
#include "scheduler/io.h"

namespace met {

// The telemetry event `kind` of `a` (its id, tenant, adapter, token counts,
// blocks held); the views borrow from `a`.
RequestEvent request_event_of(const ActiveSeq& a, RequestEventKind kind);

// Sends the final frame (or, for a failed sequence, the error frame) and
// releases the sequence, caching its full blocks first. `max_seq_len` is the
// served context ceiling (0: unlimited).
void finish_sequence(const SchedIo& io, ActiveSeq& a, size_t max_seq_len);

// An error frame, then the sequence is released without caching. `param`:
// ErrorEvent::param (the request's field at fault, if it was the cause).
void send_error(const SchedIo& io, ActiveSeq& a, std::string_view msg,
                std::optional<std::string> param = std::nullopt);

// An error frame to a sink with no sequence (a failed swap-in, a request
// refused before admission, the shutdown drain).
void send_error_to_sink(const SchedIo& io, ResponseSink& sink, std::string_view msg);

// Marks the sequence failed; it stays where it is until retired, and
// finish_sequence turns it into an error frame. `param` as for send_error.
void fail_sequence(ActiveSeq& a, std::string msg, std::optional<std::string> param = std::nullopt);

// Removes active[victim_idx] (the last row moves into its place and its slot
// is compacted), saves its KV to a spill image and releases its blocks. On
// error the victim has had its error frame and is released; the error is
// returned for the log.
Result<SwappedSeq> swap_out_sequence(const SchedIo& io, std::vector<ActiveSeq>& active, size_t victim_idx,
                                     SpillIo& spill, SpillId swap_id, SpillImage& scratch);

// Saves `a`'s cached KV as image `swap_id` and releases its blocks. On error
// `a` is untouched (still holding its blocks) and the error is returned.
Status spill_out_sequence(const SchedIo& io, ActiveSeq& a, SpillIo& spill, SpillId swap_id, SpillImage& scratch);

// Restores a swapped sequence from its image (which is removed). On error the
// client has had its error frame, nothing stays allocated, and the error is
// returned. A resumed sequence is immune to preemption for its next
// PREEMPT_IMMUNITY_TOKENS tokens unless no other row is eligible.
Result<ActiveSeq> resume_swapped_seq(const SchedIo& io, SwappedSeq s, SpillIo& spill, SpillImage& scratch);

// Gives back the leading blocks of `seq` that no later query reaches once
// seq_len positions hold KV (ReleaseBehindWindow of blocks_behind_window):
// called whenever seq_len grows. Nothing when kv_window is 0 (some layer
// reads the whole context).
void release_behind_window(const SchedIo& io, SeqState& seq, int32_t kv_window);

// Removes `active[idx]` and returns it; the row that moves into its place gets
// a CompactSlot.
ActiveSeq take_active(const SchedIo& io, std::vector<ActiveSeq>& active, size_t idx);

}  // namespace met
