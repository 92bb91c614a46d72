// Tests for the version line (src/cli/version.h) and `met --version`.
#include "cli/version.h"

#include <gtest/gtest.h>

#include "core/cpu_features.h"
#include "testing/run_command.h"

namespace met {
namespace {

TEST(VersionLine, NamesVersionAndSelectedIsa) {
  const std::string line = version_line();
  EXPECT_NE(line.find(std::string(met_version())), std::string::npos);
  EXPECT_NE(line.find(std::string("isa: ") + std::string(isa_name(selected_isa()))),
            std::string::npos);
}

TEST(MetVersion, PrintsTheVersionLine) {
  auto r = testing::run_command(testing::met_binary() + " --version");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("met ", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("isa: "), std::string::npos);
}

TEST(MetVersion, IsaCapIsHonoured) {
  auto r = testing::run_command(testing::met_binary() + " --isa avx2 --version");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("isa: avx2"), std::string::npos) << r.out;
  auto env = testing::run_command("MET_ISA=avx2 " + testing::met_binary() + " --version");
  EXPECT_NE(env.out.find("isa: avx2"), std::string::npos) << env.out;
}

// A cap at a tier this CPU lacks runs the highest tier below it that it
// has: avxvnni on a CPU without AVX-VNNI (Zen 4, Ice Lake, older) is avx2.
TEST(MetVersion, IsaCapAtATierTheCpuLacksFallsBelowIt) {
  auto r = testing::run_command(testing::met_binary() + " --isa avxvnni --version");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const bool vnni = isa_supported(detect_cpu_features(), Isa::kAvxVnni);
  EXPECT_NE(r.out.find(vnni ? "isa: avxvnni;" : "isa: avx2;"), std::string::npos) << r.out;
}

TEST(MetVersion, UnknownIsaIsRefused) {
  auto r = testing::run_command(testing::met_binary() + " --isa sse9 info x.gguf");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("sse9"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace met
