#include "run/report/failure_report.hpp"

#include <fmt/format.h>

#include <csignal>
#include <cstring>
#include <algorithm>
#include <sstream>

namespace popdist::cli {
namespace {

constexpr int kTerminated = 128 + SIGTERM;

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

std::string indented(const std::string& lines) {
  std::string text;
  std::istringstream in(lines);
  for (std::string line; std::getline(in, line);) text += "    " + line + "\n";
  return text;
}

/// The teardown's instances that never said how they ended, on one line.
std::string no_word_in_teardown(const std::vector<UnreportedInstance>& unreported) {
  std::vector<int> silent;
  for (const auto& instance : unreported) {
    if (instance.in_teardown) silent.push_back(instance.index);
  }
  if (silent.empty()) return "";
  return fmt::format("  no word from instance(s) {}: killed with their agents before these said how they ended (still "
                     "running when the teardown's --grace-period ran out)\n",
                     fmt::join(silent, ", "));
}

/// After a lost or unreached host, instances that all ended by SIGTERM were ended by the job's
/// teardown that the host's loss began: on one line, none of them a "first failure". "" otherwise.
std::string teardown_after_host(const std::vector<Failure>& failures, bool host_is_cause) {
  std::vector<int> stopped;
  for (const auto& failure : failures) {
    if (failure.end.status != kTerminated) return "";
    stopped.push_back(failure.end.index);
  }
  if (!host_is_cause || stopped.empty()) return "";
  std::sort(stopped.begin(), stopped.end());
  return fmt::format("  stopped by the job's teardown after the host's loss: instance(s) {}\n", fmt::join(stopped, ", "));
}

}  // namespace

bool stopped_by_teardown(const Failure& failure, const Failure& first) {
  const int status = failure.end.status;
  return status == kTerminated || (status == 128 + SIGKILL && failure.end.ended_ns >= first.end.ended_ns);
}

std::string describe_status(int status) {
  if (status <= 128 || status > 128 + 64) return fmt::format("exit code {}", status);
  const int signal = status - 128;
  const char* name = ::sigabbrev_np(signal);
  const std::string meaning = likely_meaning(signal);
  return fmt::format("SIG{} (signal {}{}{})", name != nullptr ? name : "?", signal, meaning.empty() ? "" : ": ",
                     meaning);
}

std::vector<Failure> failures_in_order(const std::vector<InstanceRecord>& records) {
  std::vector<Failure> failures;
  for (const auto& record : records) {
    if (!record.status || *record.status == 0) continue;
    const auto ended_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(record.ended_at.time_since_epoch());
    failures.push_back({InstanceEnd{record.index, *record.status, ended_ns.count(), record.host}, record.error_text,
                        record.error_from_torch_file ? "torch error file" : "stderr"});
  }
  std::sort(failures.begin(), failures.end(), [](const Failure& a, const Failure& b) {
    return a.end.ended_ns != b.end.ended_ns ? a.end.ended_ns < b.end.ended_ns : a.end.index < b.end.index;
  });
  // The teardown's SIGTERM can reach an instance before the root cause's end arrives; it is not the cause.
  const auto root = std::find_if(failures.begin(), failures.end(),
                                 [](const Failure& failure) { return failure.end.status != kTerminated; });
  if (root != failures.end()) std::rotate(failures.begin(), root, root + 1);
  return failures;
}

std::optional<int> first_failure_status(const std::vector<InstanceRecord>& records) {
  const auto failures = failures_in_order(records);
  return failures.empty() ? std::nullopt : std::optional<int>(failures.front().end.status);
}

std::string failure_report(const std::vector<Failure>& failures, long long start_ns, int attempt, int attempts,
                           int status, const std::vector<LostHost>& lost,
                           const std::vector<UnreportedInstance>& unreported, const std::string& unreached) {
  const bool unreachable = unreached.find("  unreachable host: ") != std::string::npos;
  std::string text = fmt::format("popdist run: the job failed ({}){}\n",
                                 !lost.empty()  ? fmt::format("lost host, exit status {}", status)
                                 : unreachable ? fmt::format("unreachable host, exit status {}", status)
                                               : describe_status(status),
                                 attempts > 1 ? fmt::format(", attempt {} of {}", attempt + 1, attempts) : "");
  text += unreached;
  for (const auto& host : lost) {
    text += fmt::format("  lost host: {}: no word from its agents (link down, machine down, or its processes or "
                        "the launcher's daemon (orted, hydra_pmi_proxy) killed)\n",
                        describe_lost({host}));
  }
  for (const auto& instance : unreported) {
    if (instance.in_teardown) continue;  // the teardown's, after the failures
    text += fmt::format("  instance {} on {}: never said how it ended (mpirun ended with 0, but its agent stopped "
                        "reporting before the end)\n",
                        instance.index, instance.host);
  }
  const bool named = std::any_of(unreported.begin(), unreported.end(),
                                 [](const UnreportedInstance& instance) { return !instance.in_teardown; });
  if (failures.empty() && (named || !unreached.empty())) return text;
  const auto after_host = teardown_after_host(failures, !lost.empty() || unreachable);
  if (!after_host.empty()) return text + after_host + no_word_in_teardown(unreported);
  if (failures.empty()) {
    return text + "  no instance's agent said how it ended (none started, or the job's channel was not reached): "
                  "see the launcher's message above\n";
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
  return text + no_word_in_teardown(unreported);
}

}  // namespace popdist::cli
