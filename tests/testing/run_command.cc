// run_command over std::system with redirection to temp files.
#include "testing/run_command.h"

#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "testing/temp_dir.h"

namespace met::testing {
namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

CommandOutput run_command(const std::string& command_line) {
  TempDir dir;
  const std::string out_path = dir.file("stdout");
  const std::string err_path = dir.file("stderr");
  const std::string full = "(" + command_line + ") </dev/null >" + shell_quote(out_path) + " 2>" +
                           shell_quote(err_path);
  const int status = std::system(full.c_str());
  CommandOutput r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = slurp(out_path);
  r.err = slurp(err_path);
  return r;
}

std::string met_binary() { return std::string(MET_BINARY_DIR) + "/apps/met"; }

}  // namespace met::testing
