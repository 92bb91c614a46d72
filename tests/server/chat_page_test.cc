// Tests for the chat page's paths, headers and embedded bytes (server/chat_page.h):
// the page is the file in src/server/web, whole, and fetches nothing from elsewhere.
#include "server/chat_page.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

namespace met {
namespace {

std::string source_page() {
  std::ifstream in(std::string(MET_SOURCE_DIR) + "/src/server/web/chat.html", std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(ChatPage, TheRootAndIndexHtmlAreThePageAndNothingElseIs) {
  EXPECT_TRUE(is_chat_page_path("/"));
  EXPECT_TRUE(is_chat_page_path("/index.html"));
  for (const char* other : {"", "/v1/models", "/index.htm", "//", "/health", "/chat.html"}) {
    EXPECT_FALSE(is_chat_page_path(other)) << other;
  }
}

TEST(ChatPage, TheEmbeddedBytesAreTheSourceFileWhole) {
  const std::string source = source_page();
  ASSERT_FALSE(source.empty()) << "cannot read src/server/web/chat.html";
  EXPECT_EQ(chat_page_html(), source);
  EXPECT_EQ(chat_page_html().rfind("<!doctype html>", 0), 0u);
  EXPECT_NE(chat_page_html().find("</html>"), std::string_view::npos);
}

TEST(ChatPage, ThePageLoadsNothingFromAnotherSite) {
  const std::string_view page = chat_page_html();
  for (const char* outside : {"http://", "https://", "//cdn", "<link", "src=", "@import"}) {
    EXPECT_EQ(page.find(outside), std::string_view::npos) << outside;
  }
}

TEST(ChatPage, ModelTextNeverGoesInAsHtml) {
  const std::string_view page = chat_page_html();
  for (const char* sink : {"innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval("}) {
    EXPECT_EQ(page.find(sink), std::string_view::npos) << sink;
  }
}

TEST(ChatPage, ItsHeadersKeepTheBaseAndConfineThePageToThisServer) {
  const auto headers = chat_page_headers({{"Access-Control-Allow-Origin", "http://app.example"}});
  ASSERT_EQ(headers.size(), 4u);
  EXPECT_EQ(headers[0].first, "Access-Control-Allow-Origin");
  EXPECT_EQ(headers[1].first, "Content-Security-Policy");
  EXPECT_NE(headers[1].second.find("default-src 'none'"), std::string::npos);
  EXPECT_NE(headers[1].second.find("connect-src 'self'"), std::string::npos);
  EXPECT_EQ(headers[2], (std::pair<std::string, std::string>{"X-Content-Type-Options", "nosniff"}));
  EXPECT_EQ(kChatPageContentType, "text/html; charset=utf-8");
}

}  // namespace
}  // namespace met
