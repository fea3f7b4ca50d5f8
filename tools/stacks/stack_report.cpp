#include "stacks/stack_report.hpp"

#include <fmt/format.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string_view>
#include <thread>

namespace popdist::cli {
namespace {

namespace fs = std::filesystem;

bool starts_with(std::string_view text, std::string_view prefix) { return text.substr(0, prefix.size()) == prefix; }

bool all_digits(std::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

/// The whole file; empty when it cannot be read.
std::string read_text(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

/// The hexadecimal ident after "thread " in a faulthandler thread header; 0 when there is none.
unsigned long long header_thread_id(std::string_view line) {
  const auto at = line.find("0x");
  if (at == std::string_view::npos) return 0;
  return std::strtoull(std::string(line.substr(at + 2, 16)).c_str(), nullptr, 16);
}

/// `  File "x.py", line 12 in f` (line "???" when Python does not know it); nullopt otherwise.
std::optional<StackFrame> parse_frame(std::string_view line) {
  constexpr std::string_view head = "  File \"";
  if (!starts_with(line, head)) return std::nullopt;
  line.remove_prefix(head.size());
  const auto file_end = line.rfind("\", line ");
  if (file_end == std::string_view::npos) return std::nullopt;
  const auto rest = line.substr(file_end + 8);
  const auto in = rest.find(" in ");
  if (in == std::string_view::npos) return std::nullopt;
  StackFrame frame{std::string(line.substr(0, file_end)), -1, std::string(rest.substr(in + 4))};
  const auto number = rest.substr(0, in);
  if (all_digits(number) && number.size() <= 9) frame.line = std::atoi(std::string(number).c_str());
  return frame;
}

std::string frame_text(const StackFrame& frame) {
  return fmt::format("{}:{} in {}", frame.file, frame.line >= 0 ? std::to_string(frame.line) : "???", frame.function);
}

/// A frame of Python's own library or of an installed package, rather than of the program.
bool library_frame(const StackFrame& frame) {
  for (const std::string_view part : {"/site-packages/", "/dist-packages/", "/lib/python"}) {
    if (frame.file.find(part) != std::string::npos) return true;
  }
  return starts_with(frame.file, "<frozen ");
}

/// The innermost frame, and when it is in a library the program's innermost frame after it:
/// "lib.py:9 in wait <- train.py:14 in main".
std::string innermost(const ThreadStack& thread) {
  const auto& frames = thread.frames;
  auto text = frame_text(frames.front());
  if (!library_frame(frames.front())) return text;
  const auto own = std::find_if(frames.begin(), frames.end(), [](const StackFrame& f) { return !library_frame(f); });
  return own == frames.end() ? text : text + " <- " + frame_text(*own);
}

/// A process that exists and has not ended (a zombie has).
bool live_process(long pid) {
  if (pid <= 0) return false;
  const auto stat = read_text(fmt::format("/proc/{}/stat", pid));
  const auto name_end = stat.rfind(')');
  return name_end != std::string::npos && name_end + 2 < stat.size() && stat[name_end + 2] != 'Z' &&
         stat[name_end + 2] != 'X';
}

std::string canonical(const std::string& path) {
  std::error_code error;
  const auto resolved = fs::weakly_canonical(path, error);
  return (error ? fs::path(path) : resolved).lexically_normal().string();
}

/// Whether `pid` is a live process of the job in `job_dir` on this machine: its environment names
/// the directory. (On another host, or after the instance ended, the same pid is someone else.)
bool runs_in_job(long pid, const std::string& job_dir) {
  if (!live_process(pid)) return false;
  const auto environment = read_text(fmt::format("/proc/{}/environ", pid));
  constexpr std::string_view name = "POPDIST_RUN_JOB_DIR=";
  std::istringstream entries(environment);
  for (std::string entry; std::getline(entries, entry, '\0');) {
    if (starts_with(entry, name)) return canonical(entry.substr(name.size())) == canonical(job_dir);
  }
  return false;
}

std::string instance_file(const std::string& job_dir, int index, const char* suffix) {
  return fmt::format("{}/instance{}.{}", job_dir, index, suffix);
}

/// Waits until every file in `paths` holds a dump that has stopped growing (faulthandler writes
/// it from its signal handler, ending with a newline), or until `wait` has passed.
void wait_for_dumps(const std::vector<std::string>& paths, std::chrono::milliseconds wait) {
  constexpr auto poll = std::chrono::milliseconds(50);
  constexpr int quiet_polls = 3;  // unchanged this many polls in a row: complete
  const auto deadline = std::chrono::steady_clock::now() + wait;
  std::vector<std::size_t> last(paths.size(), 0);
  std::vector<int> quiet(paths.size(), 0);
  for (;;) {
    bool settled = true;
    for (std::size_t i = 0; i < paths.size(); ++i) {
      const auto text = read_text(paths[i]);
      const bool steady = !text.empty() && text.back() == '\n' && text.size() == last[i];
      quiet[i] = steady ? quiet[i] + 1 : 0;
      last[i] = text.size();
      settled = settled && quiet[i] >= quiet_polls;
    }
    if (settled || std::chrono::steady_clock::now() >= deadline) return;
    std::this_thread::sleep_for(poll);
  }
}

/// Where instance `instance` is, for its line in the summary.
std::string whereabouts(const InstanceStacks& instance, std::chrono::milliseconds wait) {
  const auto& marker = instance.marker;
  const auto host = marker.host.empty() ? std::string() : " on " + marker.host;
  switch (instance.state) {
    case InstanceStacks::State::no_hook:
      return fmt::format("no Python stack hook: not a Python program, or its hook has not run yet{}", host);
    case InstanceStacks::State::ended:
      return fmt::format("ended before it was asked{}", host);
    case InstanceStacks::State::no_answer:
      return fmt::format("no answer within {:.1f} s{}{}: still starting, or the program took SIGURG for itself",
                         wait.count() / 1000.0, marker.pid > 0 ? fmt::format(" (pid {})", marker.pid) : "", host);
    case InstanceStacks::State::answered:
      break;
  }
  const auto main = std::find_if(instance.threads.begin(), instance.threads.end(),
                                 [&](const ThreadStack& thread) { return thread.id == marker.main_thread; });
  std::string where;
  if (main == instance.threads.end()) {
    where = fmt::format("main thread not in the dump ({} thread(s))", instance.threads.size());
  } else if (main->frames.empty()) {
    where = "main thread: no Python frame";
  } else {
    where = innermost(*main);
  }
  return fmt::format("{}  (pid {}{})", where, marker.pid, host);
}

void append_dump(std::string& report, const InstanceStacks& instance) {
  const auto& marker = instance.marker;
  report += fmt::format("\ninstance {} (pid {}{}): {} thread(s), most recent call first\n", instance.index, marker.pid,
                        marker.host.empty() ? "" : " on " + marker.host, instance.threads.size());
  for (const auto& thread : instance.threads) {
    const bool main = thread.id == marker.main_thread;
    report += fmt::format("    {} 0x{:016x}{}:\n", main ? "main thread" : "thread", thread.id,
                          thread.current && !main ? " (ran the dump)" : "");
    for (const auto& frame : thread.frames) {
      report += fmt::format("      File \"{}\", line {} in {}\n", frame.file,
                            frame.line >= 0 ? std::to_string(frame.line) : "???", frame.function);
    }
    for (const auto& line : thread.other_lines) report += fmt::format("      {}\n", line);
  }
}

}  // namespace

std::vector<ThreadStack> parse_faulthandler_dump(const std::string& text) {
  std::vector<ThreadStack> threads;
  std::size_t start = 0;
  for (std::size_t end; (end = text.find('\n', start)) != std::string::npos; start = end + 1) {
    const std::string_view line(text.data() + start, end - start);
    if (starts_with(line, "Current thread ") || starts_with(line, "Thread ") || starts_with(line, "Stack (")) {
      threads.push_back({header_thread_id(line), starts_with(line, "Current thread "), {}, {}});
    } else if (line.find_first_not_of(' ') != std::string_view::npos) {
      if (threads.empty()) threads.emplace_back();
      if (auto frame = parse_frame(line)) {
        threads.back().frames.push_back(std::move(*frame));
      } else {
        threads.back().other_lines.emplace_back(line.substr(line.find_first_not_of(' ')));
      }
    }
  }
  return threads;
}

std::optional<PythonMarker> parse_python_marker(const std::string& text) {
  PythonMarker marker;
  std::istringstream words(text);
  for (std::string word; words >> word;) {
    const auto equals = word.find('=');
    if (equals == std::string::npos) continue;
    const auto key = word.substr(0, equals);
    const auto value = word.substr(equals + 1);
    if (key == "pid") marker.pid = std::strtol(value.c_str(), nullptr, 10);
    if (key == "thread") marker.main_thread = std::strtoull(value.c_str(), nullptr, 10);
    if (key == "host") marker.host = value;
  }
  if (marker.pid <= 0) return std::nullopt;
  return marker;
}

std::string format_stack_report(const std::string& job, const std::vector<InstanceStacks>& instances,
                                 std::chrono::milliseconds wait) {
  std::string report = fmt::format("Where is everyone? {} instance(s) of {}\n", instances.size(), job);
  for (const auto& instance : instances) {
    report += fmt::format("  instance {}: {}\n", instance.index, whereabouts(instance, wait));
  }
  for (const auto& instance : instances) {
    if (instance.state == InstanceStacks::State::answered) append_dump(report, instance);
  }
  return report;
}

OwnDump dump_own_stacks(const std::string& job_dir, int index, std::chrono::milliseconds wait) {
  OwnDump dump;
  dump.marker = parse_python_marker(read_text(instance_file(job_dir, index, "python")));
  if (!dump.marker || !runs_in_job(dump.marker->pid, job_dir)) return dump;
  // Its file is opened for appending: emptied here, the dump starts at its beginning.
  const auto stacks = instance_file(job_dir, index, "stacks");
  if (::truncate(stacks.c_str(), 0) != 0 || ::kill(static_cast<pid_t>(dump.marker->pid), SIGURG) != 0) return dump;
  wait_for_dumps({stacks}, wait);
  dump.text = read_text(stacks);
  return dump;
}

int recorded_instance_count(const std::string& job_dir) {
  std::istringstream words(read_text(job_dir + "/popdist-run.pid"));
  long pid = 0;
  int count = 0;
  return words >> pid >> count && count > 0 ? count : 0;
}

std::vector<RunningJob> find_running_jobs() {
  const char* tmpdir = std::getenv("TMPDIR");
  const std::string root = tmpdir != nullptr && *tmpdir != '\0' ? tmpdir : "/tmp";
  std::vector<RunningJob> jobs;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(root, error)) {
    struct stat info {};
    const auto directory = entry.path().string();
    if (!starts_with(entry.path().filename().string(), "popdist-run-") || ::stat(directory.c_str(), &info) != 0 ||
        !S_ISDIR(info.st_mode) || info.st_uid != ::geteuid()) {
      continue;
    }
    std::istringstream words(read_text(directory + "/popdist-run.pid"));
    long pid = 0;
    if (words >> pid && live_process(pid)) jobs.push_back({directory, pid, recorded_instance_count(directory)});
  }
  std::sort(jobs.begin(), jobs.end(),
            [](const RunningJob& a, const RunningJob& b) { return a.directory < b.directory; });
  return jobs;
}

}  // namespace popdist::cli
