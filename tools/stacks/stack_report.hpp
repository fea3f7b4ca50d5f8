#pragma once
// Where is everyone? The stack report of a running `popdist run` job: every Python instance's
// stacks (all threads), gathered into one report that names, per instance, the innermost frame of
// its main thread.
//
// How: the Python start-up hook (python_startup/sitecustomize.py) of each instance registers
// Python's faulthandler on SIGURG, dumping into `<job dir>/instance<RANK>.stacks` on its own host,
// and records `<job dir>/instance<RANK>.python` ("pid=P thread=T host=H": its pid, its main thread's
// ident, its host). SIGURG because its default action is to ignore it: a program without the hook,
// or one that has not run it yet, is not disturbed. On a Request over the job's channel, each
// instance's agent empties its stacks file, sends SIGURG, waits until the dump is complete
// (dump_own_stacks) and sends it to `popdist run`, which formats every host's dumps into one
// report (format_stack_report). `popdist stacks` asks popdist run for it (stack_query.hpp).

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace popdist::cli {

/// One frame as faulthandler writes it: `  File "x.py", line 12 in f` (line -1: "???").
struct StackFrame {
  std::string file;
  int line = -1;
  std::string function;
};

/// One thread of a faulthandler dump, frames innermost (most recent call) first.
struct ThreadStack {
  unsigned long long id = 0;  ///< Python's thread ident (pthread_t); 0 when the dump names none
  bool current = false;       ///< the thread that ran the signal handler ("Current thread")
  std::vector<StackFrame> frames;
  std::vector<std::string> other_lines;  ///< e.g. "<no Python frame>", "..." (frames left out)
};

/// Parses faulthandler's text (one dump, of all threads or of one) into threads, in the dump's
/// order. Lines it does not understand stay with their thread (other_lines); a last line without
/// its newline (a dump still being written) is ignored. Pure.
[[nodiscard]] std::vector<ThreadStack> parse_faulthandler_dump(const std::string& text);

/// The contents of an instance's .python marker.
struct PythonMarker {
  long pid = 0;
  unsigned long long main_thread = 0;
  std::string host;
};

/// Parses "pid=P thread=T host=H" (any order, whitespace separated; host optional); nullopt
/// without a valid pid. Pure.
[[nodiscard]] std::optional<PythonMarker> parse_python_marker(const std::string& text);

/// What the collector learned about one instance.
struct InstanceStacks {
  enum class State {
    no_hook,     ///< no .python marker: not a Python program (or its hook has not run yet)
    ended,       ///< the instance ended before it was asked
    no_answer,   ///< asked, but no dump came in time
    answered,    ///< `threads` holds its dump
  };
  int index = 0;
  State state = State::no_hook;
  PythonMarker marker;
  std::vector<ThreadStack> threads;
};

/// The report: one line per instance naming where its main thread is (file:line in function; when
/// that is in Python's library or a package, also the program's innermost frame: "a <- b"), then
/// each answering instance's full dump (all threads), indented. `job` names the job on the first
/// line; `wait` is what the collector waited (for the instances that did not answer). Pure.
[[nodiscard]] std::string format_stack_report(const std::string& job, const std::vector<InstanceStacks>& instances,
                                              std::chrono::milliseconds wait);

/// What an instance's agent finds of its own program's stacks: the marker (none: no hook) and
/// the dump (empty: none in time).
struct OwnDump {
  std::optional<PythonMarker> marker;
  std::string text;
};

/// Empties instance `index`'s stacks file in `job_dir`, sends SIGURG to the process its marker
/// names (only when that process belongs to this job: its environment names `job_dir`) and waits
/// at most `wait` until the dump is complete. Run by the agent, on the instance's host.
[[nodiscard]] OwnDump dump_own_stacks(const std::string& job_dir, int index, std::chrono::milliseconds wait);

/// A running `popdist run` job of this user: a `popdist-run-*` directory under $TMPDIR (else /tmp,
/// where popdist run makes it) that this user owns, whose popdist-run.pid names a live process.
struct RunningJob {
  std::string directory;
  long launcher_pid = 0;
  int num_instances = 0;  ///< a second word in popdist-run.pid; 0 when it says nothing
};

/// This user's running jobs, sorted by directory.
[[nodiscard]] std::vector<RunningJob> find_running_jobs();

/// The instance count recorded in `job_dir`/popdist-run.pid (its second word); 0 when unknown.
[[nodiscard]] int recorded_instance_count(const std::string& job_dir);

}  // namespace popdist::cli
