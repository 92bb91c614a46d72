// The curl TopHttp (top_http.h): one easy handle reused across polls, so the
// connection is kept alive between them.
// Threading: one thread per object. Tested by tests/top/top_http_test.cc.
#include "top/top_http.h"

#include <curl/curl.h>

#include <mutex>
#include <nlohmann/json.hpp>

#include "core/check.h"

namespace met::top {
namespace {

constexpr size_t kMaxAnswerBytes = 64u << 20;

size_t append_body(char* data, size_t size, size_t count, void* user) {
  auto* body = static_cast<std::string*>(user);
  if (body->size() + size * count > kMaxAnswerBytes) return 0;
  body->append(data, size * count);
  return size * count;
}

class CurlTopHttp final : public TopHttp {
 public:
  explicit CurlTopHttp(const TopHttpOptions& options) : options_(options) {
    static std::once_flag once;
    std::call_once(once, [] { MET_CHECK(curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK, "curl_global_init"); });
    while (!options_.base_url.empty() && options_.base_url.back() == '/') options_.base_url.pop_back();
    handle_ = curl_easy_init();
    MET_CHECK(handle_ != nullptr, "curl_easy_init failed");
    if (!options_.api_key.empty()) {
      headers_ = curl_slist_append(headers_, ("Authorization: Bearer " + options_.api_key).c_str());
    }
  }
  ~CurlTopHttp() override {
    curl_slist_free_all(headers_);
    curl_easy_cleanup(handle_);
  }
  CurlTopHttp(const CurlTopHttp&) = delete;
  CurlTopHttp& operator=(const CurlTopHttp&) = delete;

  Result<HttpAnswer> get(const std::string& path) override { return call(path, /*post=*/false); }
  Result<HttpAnswer> post(const std::string& path) override { return call(path, /*post=*/true); }

 private:
  Result<HttpAnswer> call(const std::string& path, bool post) {
    const std::string url = options_.base_url + path;
    HttpAnswer answer;
    char error_buffer[CURL_ERROR_SIZE] = {};
    CURL* h = handle_;
    curl_easy_setopt(h, CURLOPT_URL, url.c_str());
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers_);
    curl_easy_setopt(h, CURLOPT_USERAGENT, "met-top");
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, options_.timeout_ms);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, options_.timeout_ms);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, error_buffer);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, append_body);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &answer.body);
    if (post) {
      curl_easy_setopt(h, CURLOPT_POST, 1L);
      curl_easy_setopt(h, CURLOPT_POSTFIELDS, "");
      curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE, 0L);
    } else {
      curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
    }
    const CURLcode code = curl_easy_perform(h);
    if (code != CURLE_OK) {
      const std::string why = error_buffer[0] != '\0' ? error_buffer : curl_easy_strerror(code);
      return io_error("cannot reach {}: {}", url, why);
    }
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &answer.status);
    return answer;
  }

  TopHttpOptions options_;
  CURL* handle_ = nullptr;
  curl_slist* headers_ = nullptr;
};

}  // namespace

std::unique_ptr<TopHttp> make_curl_http(const TopHttpOptions& options) {
  return std::make_unique<CurlTopHttp>(options);
}

std::string describe_http_failure(const HttpAnswer& answer, bool sent_key) {
  std::string server_says;
  const nlohmann::json j = nlohmann::json::parse(answer.body, nullptr, /*allow_exceptions=*/false);
  if (j.is_object() && j.contains("error") && j["error"].is_object() && j["error"].contains("message") &&
      j["error"]["message"].is_string()) {
    server_says = ": " + j["error"]["message"].get<std::string>();
  }
  const std::string code = "HTTP " + std::to_string(answer.status);
  if (answer.status == 401 || answer.status == 403) {
    return std::string(sent_key ? "the server refused the key (" : "the server wants a key (") + code + server_says +
           "); pass its admin key with --api-key or MET_API_KEY";
  }
  if (answer.status == 404) {
    return code + " for /v1/requests" + server_says + ": is this a met server new enough for met top?";
  }
  return code + server_says;
}

}  // namespace met::top
