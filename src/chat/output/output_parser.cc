// make_output_parser: see output_parser.h.
// Tested by tests/chat/output_parser_test.cc.
#include "chat/output/output_parser.h"

#include "chat/output/harmony_parser.h"
#include "chat/output/marked_output_parser.h"
#include "chat/output/tool_syntax.h"

namespace met {

std::unique_ptr<OutputParser> make_output_parser(const ChatFormat& format, const ParserOptions& options) {
  if (format.family == ChatFamily::kGptOss) return std::make_unique<HarmonyParser>(options);
  return std::make_unique<MarkedOutputParser>(format, tool_syntax_for(format.family), options);
}

}  // namespace met
