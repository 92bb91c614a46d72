// CallStream: see call_stream.h.
// Tested by tests/chat/output_parser_test.cc and tests/chat/split_invariance_test.cc.
#include "chat/output/call_stream.h"

#include <string_view>
#include <utility>

#include "core/check.h"

namespace met {

void CallStream::update(std::optional<CallPreview> preview, MessageBuilder& builder, std::vector<ParseEvent>& events) {
  if (!preview) return;
  if (!index_) {
    index_ = builder.begin_call(preview->name, events);
    name_ = preview->name;
  }
  const bool grows = preview->arguments_prefix.starts_with(sent_);
  MET_DCHECK(grows, "a preview took back arguments it had streamed");
  if (!grows) return;
  builder.add_arguments(*index_, std::string_view(preview->arguments_prefix).substr(sent_.size()), events);
  sent_ = std::move(preview->arguments_prefix);
  closing_ = std::move(preview->closing);
}

bool CallStream::finish(const std::vector<ParsedCall>* calls, MessageBuilder& builder,
                        std::vector<ParseEvent>& events) {
  MET_CHECK(index_.has_value(), "finishing a call stream that never began");
  std::string arguments;
  if (calls != nullptr) {
    for (const std::string& piece : calls->front().argument_pieces) arguments += piece;
  }
  const bool continues = calls != nullptr && calls->front().name == name_ && arguments.starts_with(sent_);
  if (continues) {
    builder.add_arguments(*index_, std::string_view(arguments).substr(sent_.size()), events);
    for (size_t i = 1; i < calls->size(); ++i) builder.add_call((*calls)[i], events);
  } else {
    builder.add_arguments(*index_, closing_, events);
  }
  *this = CallStream();
  return continues;
}

}  // namespace met
