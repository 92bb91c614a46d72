// The wire form of a KvEventBatch: vLLM's msgspec encoding of KVEventBatch
// (vllm/distributed/kv_events.py), which Dynamo's KV router and llm-d's
// prefix-cache scorer decode. Structs are msgpack arrays of their fields in
// order (array_like), events are tagged with their class name first, and
// fields left at their default are omitted from the end (omit_defaults):
//   batch   = [ts (float64), [event...]]   (data_parallel_rank omitted)
//   stored  = ["BlockStored", [hash], parent | nil, [token ids], block_size,
//              lora_id | nil, medium | nil]
//   removed = ["BlockRemoved", [hash], medium | nil]
//   cleared = ["AllBlocksCleared"]
// Integers take msgpack's shortest form, as msgspec writes them.
// Threading: pure functions, any thread. Tested by
// tests/engine/kv_event_codec_test.cc.
#pragma once

#include <string>
#include <string_view>

#include "engine/kv_event.h"

namespace met {

// Appends the batch's encoding to `out`; `medium` ("" : nil) names where the
// blocks live ("CPU", "GPU").
void encode_kv_event_batch(const KvEventBatch& batch, std::string_view medium, std::string& out);

}  // namespace met
