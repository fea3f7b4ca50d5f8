#pragma once
// Where is everyone? The stack report of a running `popdist run` job: every Python instance's
// stacks (all threads), gathered into one report that names, per instance, the innermost frame of
// its main thread.
//
// How: `popdist run` exports POPDIST_RUN_JOB_DIR (one directory per job attempt) and writes
// `<dir>/popdist-run.pid`; the Python start-up hook (python_startup/sitecustomize.py) of each
// instance registers Python's faulthandler on SIGURG, dumping into `<dir>/instance<RANK>.stacks`,
// and records `<dir>/instance<RANK>.python` ("pid=P thread=T host=H": its pid, its main thread's
// ident, its host). SIGURG because its default action is to ignore it: a program without the hook,
// or one that has not run it yet, is not disturbed. The collector empties each stacks file, sends
// SIGURG, waits until the dumps are complete, and parses faulthandler's text.
// Only instances on this machine (fake hosts included) can be reached: an instance on another host
// has no marker here, or one whose pid is no process of this job here; the report names both.

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
    no_hook,     ///< no .python marker: not a Python program, or on another host
    not_here,    ///< a marker, but its pid is no process of this job on this machine (ended, or another host)
    no_answer,   ///< signalled, but nothing was dumped in time
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

/// Gathers the stacks of the job whose directory is `job_dir` and returns the report: instances
/// 0..num_instances-1 (num_instances <= 0: unknown, then up to the highest instance with a marker).
/// Waits at most `wait` for the dumps. Sends SIGURG only to processes of this job on this machine
/// (their environment names `job_dir`).
[[nodiscard]] std::string collect_stack_report(const std::string& job_dir, int num_instances,
                                               std::chrono::milliseconds wait = std::chrono::seconds(5));

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
