#include "run/report/failure_report.hpp"

#include <fmt/format.h>

#include <csignal>
#include <cstring>
#include <fstream>
#include <sstream>

namespace popdist::cli {
namespace {

std::string likely_meaning(int signal) {
  switch (signal) {
    case SIGKILL: return "killed: often the out-of-memory killer (see dmesg), or a scheduler's time limit";
    case SIGSEGV: return "segmentation fault: a bug in native code (a C extension, a library)";
    case SIGBUS: return "bus error: a bad memory access, or a full /dev/shm";
    case SIGABRT: return "aborted: a failed assertion or a fatal error in native code";
    case SIGFPE: return "arithmetic error in native code";
    case SIGILL: return "illegal instruction: a binary built for another CPU";
    case SIGTERM: return "terminated from outside (a user, a scheduler, or the job's teardown)";
    case SIGINT: return "interrupted (Ctrl-C)";
    case SIGHUP: return "hangup: the terminal or session went away";
    case SIGPIPE: return "broken pipe: its output's reader went away";
    default: return "";
  }
}

std::string file_text(const std::string& path) {
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

// The JSON string value after `key` in `json`, unescaped; empty when absent. Enough of JSON for
// the error file's fixed shape: \uXXXX outside ASCII becomes '?'.
std::string json_string_after(const std::string& json, const std::string& key, std::size_t from = 0) {
  const auto at = json.find("\"" + key + "\"", from);
  if (at == std::string::npos) return {};
  std::size_t i = json.find_first_not_of(" \t\r\n:", at + key.size() + 2);
  if (i == std::string::npos || json[i] != '"') return {};
  std::string value;
  for (++i; i < json.size() && json[i] != '"'; ++i) {
    if (json[i] != '\\' || i + 1 >= json.size()) {
      value += json[i];
      continue;
    }
    const char escaped = json[++i];
    switch (escaped) {
      case 'n': value += '\n'; break;
      case 't': value += '\t'; break;
      case 'r': break;
      case 'u': {
        const unsigned code = i + 4 < json.size() ? std::stoul(json.substr(i + 1, 4), nullptr, 16) : '?';
        value += code < 0x80 ? static_cast<char>(code) : '?';
        i += 4;
        break;
      }
      default: value += escaped;
    }
  }
  return value;
}

std::string indented(const std::string& lines) {
  std::string text;
  std::istringstream in(lines);
  for (std::string line; std::getline(in, line);) text += "    " + line + "\n";
  return text;
}

}  // namespace

bool stopped_by_teardown(const Failure& failure, const Failure& first) {
  const int status = failure.end.status;
  return (status == 128 + SIGTERM || status == 128 + SIGKILL) && failure.end.ended_ns >= first.end.ended_ns;
}

std::string describe_status(int status) {
  if (status <= 128 || status > 128 + 64) return fmt::format("exit code {}", status);
  const int signal = status - 128;
  const char* name = ::sigabbrev_np(signal);
  const std::string meaning = likely_meaning(signal);
  return fmt::format("SIG{} (signal {}{}{})", name != nullptr ? name : "?", signal, meaning.empty() ? "" : ": ",
                     meaning);
}

std::string torch_error_text(const std::string& json) {
  if (auto callstack = json_string_after(json, "py_callstack"); !callstack.empty()) return callstack;
  // {"message": {"message": "...", ...}} or {"message": "..."}
  const auto outer = json.find("\"message\"");
  if (outer == std::string::npos) return {};
  if (auto inner = json_string_after(json, "message", outer + 1); !inner.empty()) return inner;
  return json_string_after(json, "message");
}

std::vector<Failure> recorded_failures(const std::string& job_dir) {
  std::vector<Failure> failures;
  for (const auto& end : recorded_ends(job_dir)) {
    if (end.status == 0) continue;
    Failure failure{end, torch_error_text(file_text(instance_file(job_dir, end.index, ".error.json"))),
                    "torch error file"};
    if (failure.error_lines.empty()) {
      failure.error_lines = file_text(instance_file(job_dir, end.index, ".stderr"));
      failure.error_source = "stderr";
    }
    failures.push_back(std::move(failure));
  }
  return failures;
}

std::string failure_report(const std::vector<Failure>& failures, long long start_ns, int attempt, int attempts,
                           int status) {
  std::string text = fmt::format("popdist run: the job failed ({}){}\n", describe_status(status),
                                 attempts > 1 ? fmt::format(", attempt {} of {}", attempt + 1, attempts) : "");
  if (failures.empty()) {
    return text + "  no instance recorded how it ended (instances on other hosts record nowhere that popdist run "
                  "reads): see mpirun's message above\n";
  }
  std::vector<int> stopped;
  for (std::size_t i = 0; i < failures.size(); ++i) {
    const Failure& failure = failures[i];
    if (i > 0 && stopped_by_teardown(failure, failures.front())) {
      stopped.push_back(failure.end.index);
      continue;
    }
    const double seconds = static_cast<double>(failure.end.ended_ns - start_ns) / 1e9;
    text += fmt::format("  {}instance {} on {}: {}, {:.1f} s after the start\n", i == 0 ? "first failure: " : "",
                        failure.end.index, failure.end.host.empty() ? "?" : failure.end.host,
                        describe_status(failure.end.status), seconds);
    if (!failure.error_lines.empty()) {
      text += fmt::format("  its last error lines ({}):\n{}", failure.error_source, indented(failure.error_lines));
    }
  }
  if (!stopped.empty()) {
    text += fmt::format("  stopped by the job's teardown after the first failure: instance(s) {}\n",
                        fmt::join(stopped, ", "));
  }
  return text;
}

}  // namespace popdist::cli
