// The chat page's paths and headers; its bytes are generated (chat_page.h).
// Tested by tests/server/chat_page_test.cc.
#include "server/chat_page.h"

namespace met {

bool is_chat_page_path(std::string_view target) { return target == "/" || target == "/index.html"; }

std::vector<std::pair<std::string, std::string>> chat_page_headers(
    std::vector<std::pair<std::string, std::string>> base) {
  base.emplace_back("Content-Security-Policy",
                    "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
                    "connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; "
                    "frame-ancestors 'none'");
  base.emplace_back("X-Content-Type-Options", "nosniff");
  base.emplace_back("Cache-Control", "no-cache");
  return base;
}

}  // namespace met
