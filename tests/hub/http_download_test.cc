// Tests of download_file (src/hub/http_download.h) against FakeHub on a real
// loopback socket: redirects, the sha256 from the hub's headers, resuming
// with Range (206, and a 200 that ignores it), interrupted transfers,
// corrupted bodies, HTTP errors and an unreachable host.
#include "hub/http_download.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "hub/hub_test_support.h"
#include "hub/sha256.h"
#include "testing/fake_hub.h"
#include "testing/temp_dir.h"

namespace met {
namespace {

using testing::FakeHub;
using testing::FakeHubRequest;
using testing::model_bytes;
using testing::read_file;

constexpr size_t kSize = 100000;

class HttpDownload : public ::testing::Test {
 protected:
  HttpDownload() : content_(model_bytes(kSize, 1)) { hub_.add_file("org/model", "m-Q8_0.gguf", content_); }

  DownloadRequest request(int max_attempts = 1) const {
    DownloadRequest r;
    r.url = hub_.endpoint() + "/org/model/resolve/main/m-Q8_0.gguf";
    r.part_path = dir_.file("m.gguf.part");
    r.max_attempts = max_attempts;
    return r;
  }
  Result<DownloadResult> download(const DownloadRequest& r, const HttpOptions& o = {}) {
    return download_file(r, o, [&](uint64_t done, uint64_t total) { progress_.emplace_back(done, total); });
  }
  std::vector<FakeHubRequest> storage_requests() const {
    std::vector<FakeHubRequest> out;
    for (const FakeHubRequest& r : hub_.requests()) {
      if (r.target.rfind("/storage/", 0) == 0) out.push_back(r);
    }
    return out;
  }
  void write_part(const std::string& bytes) const {
    std::ofstream(dir_.file("m.gguf.part"), std::ios::binary) << bytes;
  }

  FakeHub hub_;
  testing::TempDir dir_;
  std::string content_;
  std::vector<std::pair<uint64_t, uint64_t>> progress_;
};

TEST_F(HttpDownload, FollowsTheRedirectAndChecksTheLinkedEtag) {
  Result<DownloadResult> r = download(request());
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_TRUE(r->verified) << "the sha256 came from X-Linked-Etag";
  EXPECT_EQ(r->sha256, sha256_hex(content_));
  EXPECT_EQ(r->size_bytes, kSize);
  EXPECT_EQ(r->resumed_from, 0u);
  EXPECT_EQ(read_file(dir_.file("m.gguf.part")), content_);
  ASSERT_EQ(storage_requests().size(), 1u);
  EXPECT_EQ(storage_requests()[0].range, "") << "nothing to resume";
  ASSERT_FALSE(progress_.empty());
  EXPECT_EQ(progress_.back(), std::make_pair(uint64_t{kSize}, uint64_t{kSize}));
}

TEST_F(HttpDownload, ResumesAPartFileWithARangeRequest) {
  write_part(content_.substr(0, 30000));
  Result<DownloadResult> r = download(request());
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->resumed_from, 30000u);
  EXPECT_TRUE(r->verified);
  EXPECT_EQ(read_file(dir_.file("m.gguf.part")), content_);
  ASSERT_EQ(storage_requests().size(), 1u);
  EXPECT_EQ(storage_requests()[0].range, "bytes=30000-");
}

TEST_F(HttpDownload, StartsOverWhenTheServerIgnoresTheRange) {
  hub_.ignore_ranges(true);
  write_part(std::string(30000, 'x'));  // bytes that are not the file's: kept, they would fail the check
  Result<DownloadResult> r = download(request());
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->resumed_from, 0u);
  EXPECT_EQ(read_file(dir_.file("m.gguf.part")), content_);
  EXPECT_EQ(storage_requests().at(0).range, "bytes=30000-");
}

TEST_F(HttpDownload, AnInterruptedTransferLeavesAPartFileTheNextRunResumes) {
  hub_.cut_transfers(1, 40000);
  Result<DownloadResult> first = download(request());
  ASSERT_FALSE(first.ok());
  EXPECT_NE(first.status().message().find("run again to resume"), std::string::npos) << first.status().message();
  EXPECT_EQ(std::filesystem::file_size(dir_.file("m.gguf.part")), 40000u);
  Result<DownloadResult> second = download(request());
  ASSERT_TRUE(second.ok()) << second.status().to_string();
  EXPECT_EQ(second->resumed_from, 40000u);
  EXPECT_EQ(read_file(dir_.file("m.gguf.part")), content_);
  ASSERT_EQ(storage_requests().size(), 2u);
  EXPECT_EQ(storage_requests()[1].range, "bytes=40000-");
}

TEST_F(HttpDownload, RetriesAnInterruptedTransferWithinOneCall) {
  hub_.cut_transfers(2, 25000);
  Result<DownloadResult> r = download(request(/*max_attempts=*/3));
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(read_file(dir_.file("m.gguf.part")), content_);
  const std::vector<FakeHubRequest> got = storage_requests();
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[1].range, "bytes=25000-");
  EXPECT_EQ(got[2].range, "bytes=50000-");
}

TEST_F(HttpDownload, ACompletePartFileIsCheckedWithoutItsBytesAgain) {
  write_part(content_);
  Result<DownloadResult> r = download(request());
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_TRUE(r->verified);
  EXPECT_EQ(storage_requests().at(0).range, "bytes=100000-") << "answered 416: nothing left to send";
}

TEST_F(HttpDownload, ACorruptedBodyIsDeletedAndNamesBothSha256s) {
  hub_.corrupt_bodies(true);
  Result<DownloadResult> r = download(request());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kDataLoss);
  const std::string& m = r.status().message();
  EXPECT_NE(m.find("sha256 mismatch"), std::string::npos) << m;
  EXPECT_NE(m.find("expected " + sha256_hex(content_)), std::string::npos) << m;
  EXPECT_NE(m.find("got "), std::string::npos) << m;
  EXPECT_NE(m.find(request().url), std::string::npos) << m;
  EXPECT_FALSE(std::filesystem::exists(dir_.file("m.gguf.part")));
}

TEST_F(HttpDownload, AnExpectedSha256WinsOverTheHeaders) {
  DownloadRequest req = request();
  req.expected_sha256 = sha256_hex("something else");
  Result<DownloadResult> r = download(req);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("expected " + req.expected_sha256), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(req.part_path));
}

TEST_F(HttpDownload, AMissingFileIsNotFoundNamingTheUrl) {
  DownloadRequest req = request();
  req.url = hub_.endpoint() + "/org/model/resolve/main/absent.gguf";
  Result<DownloadResult> r = download(req);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
  EXPECT_NE(r.status().message().find(req.url), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find("404"), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find("Entry not found"), std::string::npos) << "the hub's X-Error-Message";
}

TEST_F(HttpDownload, ARefusedTokenIsNamedButNeverShown) {
  hub_.require_token("right-token");
  HttpOptions o;
  o.bearer_token = "wrong-secret-token";
  Result<DownloadResult> r = download(request(), o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("HTTP 401"), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find("HF_TOKEN"), std::string::npos) << r.status().message();
  EXPECT_EQ(r.status().message().find("wrong-secret-token"), std::string::npos) << r.status().message();
  o.bearer_token = "right-token";
  Result<DownloadResult> ok = download(request(), o);
  ASSERT_TRUE(ok.ok()) << ok.status().to_string();
  EXPECT_EQ(hub_.requests().back().target.rfind("/storage/", 0), 0u);
  EXPECT_EQ(hub_.requests().front().authorization, "Bearer wrong-secret-token");
}

TEST_F(HttpDownload, ASecondWriterOfThePartFileIsRefused) {
  write_part("");
  const int fd = ::open(dir_.file("m.gguf.part").c_str(), O_WRONLY);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::flock(fd, LOCK_EX), 0);
  Result<DownloadResult> r = download(request());
  ::close(fd);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("another process is downloading"), std::string::npos) << r.status().message();
  EXPECT_TRUE(hub_.requests().empty());
  EXPECT_TRUE(download(request()).ok()) << "the lock went with its holder";
}

TEST(HttpDownloadOffline, AnUnreachableHostSaysSoAndNamesTheUrl) {
  testing::TempDir dir;
  DownloadRequest req;
  req.url = "http://127.0.0.1:" + std::to_string(testing::closed_port()) + "/org/model/resolve/main/m.gguf";
  req.part_path = dir.file("m.gguf.part");
  Result<DownloadResult> r = download_file(req, HttpOptions{}, nullptr);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kIo);
  EXPECT_NE(r.status().message().find("cannot reach " + req.url), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find("offline"), std::string::npos) << r.status().message();
}

TEST(HttpGetText, ReturnsTheBodyAndRefusesOneTooLarge) {
  FakeHub hub;
  hub.add_file("org/model", "a.gguf", "abc");
  const std::string url = hub.endpoint() + "/api/models/org/model/tree/main?recursive=true";
  Result<HttpText> r = http_get_text(url, HttpOptions{}, 1 << 20);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->status, 200);
  EXPECT_NE(r->body.find("\"a.gguf\""), std::string::npos);
  EXPECT_EQ(http_get_text(url, HttpOptions{}, 10).status().code(), StatusCode::kOutOfRange);
}

}  // namespace
}  // namespace met
