#pragma once
// Open MPI's --tag-output tags each chunk it reads from an instance's pipe, not each line: a line
// written in two pieces (Python's print under PYTHONUNBUFFERED=1 writes the text, then "\n"; C's
// stdio flushes a full buffer mid-line; `printf a; printf 'b\n'`) comes out as
// `[1,0]<stdout>:a[1,0]<stdout>:b`, or with another instance's tag in between. So each instance's
// agent (agent/instance_agent.hpp) reads the program's stdout and stderr from pipes and passes them on
// one write per run of complete lines (a last line without a newline gets one, or the next
// instance's output would be glued to it). Progress drawn in place (`\r`: C's
// `printf("%d%%\r")`, tqdm's and Lightning's `\rbar`) is passed on at once, one write per segment,
// so that it stays live and each update carries one tag. Besides the terminal, a stream can go to
// a log file (--log-dir) and keep its last lines (the failure report's error lines).

#include <cstddef>
#include <deque>
#include <string>

namespace popdist::cli {

/// One output stream of the program: where it goes, and what was read but is not yet a whole line.
struct OutputStream {
  int from = -1;      ///< read end of the program's pipe; -1 at end of file
  int to = -1;        ///< our own stdout or stderr; -1: not shown (--log-dir without --tee, silenced)
  int log = -1;       ///< the instance's log file; -1: none
  std::size_t keep_lines = 0;  ///< how many last lines to keep (0: none)
  std::deque<std::string> last_lines;
  bool wrote = false;  ///< something was read since the caller last looked
  std::string tag;     ///< written where Open MPI's --tag-output would tag (empty: nothing)

  /// Reads what the pipe has and passes on every complete line; closes `from` at end of file.
  void read_some();

 private:
  std::string held;
  std::string partial_line;   ///< the line being kept, until its newline
  char last_passed = '\n';    ///< after a return or a newline the cursor is at a line's start

  void pass_on_lines(bool at_end);
  void write_segments(std::size_t upto, bool drawing);
  void keep(const char* data, std::size_t size);
};

}  // namespace popdist::cli
