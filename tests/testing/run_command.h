// run_command: runs a shell command line and captures its exit code, stdout and
// stderr (for tests that drive the built `met` binary as a user would).
// Threading: any; each call uses its own temp files.
#pragma once

#include <string>

namespace met::testing {

struct CommandOutput {
  int exit_code = -1;
  std::string out;
  std::string err;
};

CommandOutput run_command(const std::string& command_line);
// Path of the built `met` binary.
std::string met_binary();
// Single-quotes `s` for the shell.
std::string shell_quote(const std::string& s);

}  // namespace met::testing
