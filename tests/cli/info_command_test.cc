// Tests for `met info`, run as a user would run it.
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "testing/run_command.h"
#include "testing/shared_data.h"
#include "testing/temp_dir.h"

namespace met {
namespace {

using testing::met_binary;
using testing::run_command;
using testing::shell_quote;

int count_lines(const std::string& s) { return static_cast<int>(std::count(s.begin(), s.end(), '\n')); }

TEST(MetInfo, ReportsStories260KAsDocumented) {
  MET_REQUIRE_SHARED(path, "models/stories260K.gguf");
  auto r = run_command(met_binary() + " info --json " + shell_quote(path));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["hparams"]["layers"], 5);
  EXPECT_EQ(j["hparams"]["embedding"], 64);
  EXPECT_EQ(j["hparams"]["heads"], 8);
  EXPECT_EQ(j["hparams"]["kv_heads"], 4);
  EXPECT_EQ(j["hparams"]["feed_forward"], 172);
  EXPECT_EQ(j["vocab"]["size"], 512);
  EXPECT_EQ(j["vocab"]["model"], "llama");
  EXPECT_EQ(j["gguf_version"], 3);
}

TEST(MetInfo, TextOutputNamesTheShape) {
  MET_REQUIRE_SHARED(path, "models/stories260K.gguf");
  auto r = run_command(met_binary() + " info " + shell_quote(path));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("layers         5\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("SentencePiece"), std::string::npos) << r.out;
}

TEST(MetInfo, GgufVersionOneExitsNonZeroWithOneLine) {
  MET_REQUIRE_SHARED(path, "models/tinyllamas-stories-260k-f32.gguf");
  auto r = run_command(met_binary() + " info " + shell_quote(path));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_EQ(count_lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("version 1"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.rfind("met info: ", 0), 0u) << r.err;
}

TEST(MetInfo, TruncatedFileExitsNonZeroWithOneLine) {
  MET_REQUIRE_SHARED(path, "models/stories260K.gguf");
  testing::TempDir dir;
  std::ifstream in(path, std::ios::binary);
  std::string bytes(200000, '\0');
  in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  std::ofstream(dir.file("cut.gguf"), std::ios::binary).write(bytes.data(), 200000);
  auto r = run_command(met_binary() + " info " + shell_quote(dir.file("cut.gguf")));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_EQ(count_lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("cut.gguf"), std::string::npos) << r.err;
}

TEST(MetInfo, MissingFileSaysSo) {
  auto r = run_command(met_binary() + " info /nonexistent/model.gguf");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_EQ(count_lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("/nonexistent/model.gguf"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace met
