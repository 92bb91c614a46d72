// chat_family_name: see chat_format.h.
// Tested by tests/chat/format_detection_test.cc.
#include "chat/output/chat_format.h"

namespace met {

std::string_view chat_family_name(ChatFamily family) {
  switch (family) {
    case ChatFamily::kGeneric: return "generic";
    case ChatFamily::kHermes: return "hermes";
    case ChatFamily::kQwen3Coder: return "qwen3-coder";
    case ChatFamily::kSeedOss: return "seed-oss";
    case ChatFamily::kLlama3: return "llama3";
    case ChatFamily::kMistral: return "mistral";
    case ChatFamily::kDeepSeekR1: return "deepseek-r1";
    case ChatFamily::kDeepSeekV31: return "deepseek-v3.1";
    case ChatFamily::kDeepSeekV32: return "deepseek-v3.2";
    case ChatFamily::kMiniMaxM2: return "minimax-m2";
    case ChatFamily::kGptOss: return "gpt-oss";
    case ChatFamily::kFunctionaryV31: return "functionary-v3.1";
    case ChatFamily::kFunctionaryV32: return "functionary-v3.2";
    case ChatFamily::kCommandR: return "command-r";
    case ChatFamily::kCommandR7B: return "command-r7b";
    case ChatFamily::kKimiK2: return "kimi-k2";
    case ChatFamily::kGlm45: return "glm-4.5";
    case ChatFamily::kApriel: return "apriel";
  }
  return "unknown";
}

}  // namespace met
