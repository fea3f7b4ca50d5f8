#pragma once
// Open MPI's --tag-output tags each chunk it reads from an instance's pipe, not each line: a line
// written in two pieces (Python's print under PYTHONUNBUFFERED=1 writes the text, then "\n"; C's
// stdio flushes a full buffer mid-line; `printf a; printf 'b\n'`) comes out as
// `[1,0]<stdout>:a[1,0]<stdout>:b`, or with another instance's tag in between. So under tagging,
// `popdist run` starts each instance as `popdist _whole-lines -- program args`: the program's
// stdout and stderr go to pipes read here, and reach Open MPI one write per run of complete lines
// (a last line without a newline gets one, or the next instance's output would be glued to it).
// Progress drawn in place (`\r`: C's `printf("%d%%\r")`, tqdm's and Lightning's `\rbar`) is passed
// on at once, one write per segment, so that it stays live and each update carries one tag.

#include <string>
#include <vector>

namespace popdist::cli {

/// The hidden subcommand's name (on the instances' command lines only).
inline constexpr const char* whole_lines_command = "_whole-lines";

/// Runs `program` with its stdout and stderr passed on in whole lines; forwards SIGTERM, SIGINT,
/// SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2 and SIGCONT to it; ends as it ended (its status, or the
/// same signal). The program dies with this process (PR_SET_PDEATHSIG), so nothing is left behind.
/// With a `status_file`, records there how the program ended (instance_status.hpp).
[[nodiscard]] int run_with_whole_lines(const std::vector<std::string>& program, const std::string& status_file = "");

}  // namespace popdist::cli
