// The chat page `met serve` answers at / and /index.html: src/server/web/chat.html,
// built into the binary (cmake/EmbedFile.cmake writes chat_page_html.cc into the
// build folder from it). Loading the page needs no API key, as /health; the API
// calls the page makes carry the key typed into its settings.
// Threading: immutable data; any thread.
// Tested by tests/server/chat_page_test.cc, over a socket by
// tests/server/server_endpoints_test.cc, and in Chromium by tests/server/web_chat/.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace met {

inline constexpr std::string_view kChatPageContentType = "text/html; charset=utf-8";

// True for the paths that answer with the page.
bool is_chat_page_path(std::string_view target);

// The page's bytes (the generated chat_page_html.cc defines it).
std::string_view chat_page_html();

// `base` (e.g. CORS headers) and the page's own: a Content-Security-Policy that
// lets it run only its inline script and style and talk only to this server,
// nosniff, and no-cache so that a new binary's page replaces a cached one.
std::vector<std::pair<std::string, std::string>> chat_page_headers(
    std::vector<std::pair<std::string, std::string>> base);

}  // namespace met
