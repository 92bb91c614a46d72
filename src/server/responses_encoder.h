// ResponsesEncoder: writes one Responses API response (POST /v1/responses):
// the response object {id "resp_…", object "response", status, output
// items, usage, the request's echoed fields}, whole or as its semantic SSE
// events. The generated text is shaped by ChatShaper (meta.shape; without one
// it is all content) into output items, in the order the model wrote them:
// a reasoning item (rs_…: content [reasoning_text], and the same text as a
// summary_text when a summary was asked), a message item (msg_…: one
// output_text part) and function_call items (fc_…, call_id "call_…").
// Streamed, each event is "event: TYPE\ndata: JSON\n\n" with sequence_number
// counting from 0: response.created, response.in_progress; per item
// response.output_item.added, then for a message content_part.added,
// output_text.delta…, output_text.done, content_part.done; for reasoning
// (reasoning_summary_part.added,) content_part.added, reasoning_text.delta
// (with reasoning_summary_text.delta)…, reasoning_text.done,
// content_part.done (, reasoning_summary_text.done,
// reasoning_summary_part.done); for a call function_call_arguments.delta…,
// function_call_arguments.done; then response.output_item.done; finally
// response.completed, or response.incomplete (incomplete_details.reason
// "max_output_tokens" for a "length" finish, "timeout" for the deadline), or
// response.failed on an error. No [DONE].
// A message's leading whitespace is held until its first other character and
// dropped when another item came first (the blank between </think> and a
// call is no message); a response with no item gets one empty message.
// Invariants: one request choice (the Responses API has no `n`); an item's
// done event carries the concatenation of its deltas; the whole body's
// output equals a stream's final output for the same text; `on_done` sees
// the final response object once (completed or incomplete, never failed).
// Threading: one per request, on its connection's strand.
// Tested by tests/server/responses_encoder_test.cc.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "server/api_front.h"
#include "server/chat_shaper.h"

namespace met {

// Called with the final response object of a completed or incomplete response.
using ResponseDone = std::function<void(const nlohmann::ordered_json& response)>;

// "resp_<hex>" from a per-process unique number.
std::string make_responses_id(uint64_t unique);

// The response object: id, object, created_at, status, error,
// incomplete_details, model, `echo`'s fields (the request's instructions,
// tools, …), output and usage (null without one).
nlohmann::ordered_json response_object(const ResponseMeta& meta, const nlohmann::ordered_json& echo,
                                       std::string_view status, nlohmann::ordered_json output,
                                       const Usage* usage);

class ResponsesEncoder final : public ResponseEncoder {
 public:
  // `echo`: the request fields the response object repeats (an object).
  ResponsesEncoder(ResponseMeta meta, nlohmann::ordered_json echo, bool reasoning_summary,
                   ResponseDone on_done = {});

  std::string start() override;
  std::string encode(size_t index, const StreamEvent& event) override;
  std::string fail(const ApiError& error) override;
  std::string body(std::span<const ChoiceOutput> choices) override;

 private:
  enum class Open : uint8_t { kNone, kReasoning, kMessage, kCall };

  void emit(const char* type, nlohmann::ordered_json fields);
  void dispatch(std::vector<ParseEvent>& events);
  void on_reasoning(const std::string& text);
  void on_content(const std::string& text);
  void message_delta(const std::string& shown);  // REQUIRES: a message is open
  void on_call_begin(const ToolCallBegin& begin);
  void on_call_arguments(const ToolCallArgumentsDelta& delta);
  void open_reasoning();
  void open_message();
  void close_item();
  void close_reasoning();
  void close_message();
  // The response's end after the shaper's last events; the final object.
  nlohmann::ordered_json finish(const FinishEvent& f);
  std::string item_id(const char* prefix) const;
  nlohmann::ordered_json item_ref() const;  // {item_id, output_index}

  ResponseMeta meta_;
  nlohmann::ordered_json echo_;
  bool reasoning_summary_;
  ResponseDone on_done_;
  std::unique_ptr<ChatShaper> shaper_;  // with meta.shape
  std::vector<ParseEvent> events_;      // scratch
  std::string out_;                     // SSE bytes not yet returned
  uint64_t sequence_ = 0;
  nlohmann::ordered_json output_ = nlohmann::ordered_json::array();  // closed items
  Open open_ = Open::kNone;
  nlohmann::ordered_json item_;  // the open item
  std::string text_;             // the open item's text (reasoning, content or arguments)
  std::string held_space_;       // a message's leading whitespace, not yet shown
  std::optional<size_t> open_call_;       // the open call's ToolCallBegin index
  std::map<size_t, size_t> call_output_;  // a call's index -> its output index
  bool ended_ = false;
};

}  // namespace met
