#include "run/supervise/slurm_step.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cctype>
#include <csignal>
#include <cstring>
#include <sstream>
#include <vector>

#include "common/say.hpp"
#include "run/supervise/bounded_command.hpp"

namespace popdist::cli {
namespace {

using Clock = std::chrono::steady_clock;

bool is_step_id(const std::string& word) {
  const auto dot = word.find('.');
  const auto digits = [&](std::size_t from, std::size_t to) {
    if (from >= to) return false;
    for (auto i = from; i < to; ++i) {
      if (std::isdigit(static_cast<unsigned char>(word[i])) == 0) return false;
    }
    return true;
  };
  return dot != std::string::npos && digits(0, dot) && digits(dot + 1, word.size());
}

std::chrono::milliseconds left_until(Clock::time_point deadline) {
  return std::max(std::chrono::milliseconds(1),
                  std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()));
}

/// What a bounded command's failure says: its problem, else its status and last line of stderr.
std::string failed(const BoundedOutput& output, const std::string& name) {
  if (!output.problem.empty()) return output.problem;
  auto err = output.err;
  while (!err.empty() && err.back() == '\n') err.pop_back();
  const auto last = err.substr(err.rfind('\n') == std::string::npos ? 0 : err.rfind('\n') + 1);
  return fmt::format("{} ended with status {}{}{}", name, output.status, last.empty() ? "" : ": ", last);
}

}  // namespace

std::string slurm_command_path(const std::string& launcher, const std::string& command) {
  const auto slash = launcher.rfind('/');
  if (slash == std::string::npos) return command;
  const auto beside = launcher.substr(0, slash + 1) + command;
  return ::access(beside.c_str(), X_OK) == 0 ? beside : command;
}

std::optional<std::string> single_step_id(const std::string& squeue_output, std::string& why) {
  std::istringstream lines(squeue_output);
  std::vector<std::string> ids;
  for (std::string word; lines >> word;) ids.push_back(word);
  if (ids.size() == 1 && is_step_id(ids.front())) return ids.front();
  why = ids.empty() ? "squeue names no such step (not started yet, or ended)"
                    : fmt::format("squeue answered \"{}\", not one <job>.<step>", squeue_output.substr(0, 200));
  return std::nullopt;
}

std::string signal_named_step(const std::string& launcher, const std::string& step_name, int signal,
                              std::chrono::milliseconds limit) {
  const auto deadline = Clock::now() + limit;
  // this user's steps only: a name is unique on this machine, not across a cluster's users
  const auto squeue = run_bounded({slurm_command_path(launcher, "squeue"), "--steps", "--noheader", "--format", "%i",
                                   "--name", step_name, "--user", std::to_string(::getuid())},
                                  left_until(deadline));
  if (squeue.status != 0) return failed(squeue, "squeue");
  std::string why;
  const auto step = single_step_id(squeue.out, why);
  if (!step) return fmt::format("{} {}", why, step_name);
  const char* name = sigabbrev_np(signal);
  const auto scancel = run_bounded({slurm_command_path(launcher, "scancel"),
                                    fmt::format("--signal={}", name != nullptr ? name : std::to_string(signal)), *step},
                                   left_until(deadline));
  // scancel signals each node of the step itself and fails with the error of any node where the
  // step has ended (after one instance's failure, say): the live ones got the signal (measured:
  // each such instance saw it). The whole step ended in between: nothing left to signal either.
  const bool signalled = scancel.status == 0 || scancel.err.find("Invalid job id specified") != std::string::npos;
  return signalled ? std::string() : failed(scancel, "scancel");
}

std::string node_states(const std::string& launcher, const std::vector<std::string>& nodes,
                        std::chrono::milliseconds limit, std::string& problem) {
  std::string list;
  for (const auto& node : nodes) list += (list.empty() ? "" : ",") + node;
  const auto sinfo =
      run_bounded({slurm_command_path(launcher, "sinfo"), "-h", "-N", "-n", list, "-o", "%N|%T|%E"}, limit);
  if (sinfo.status == 0) return sinfo.out;
  problem = failed(sinfo, "sinfo");
  return {};
}

std::function<bool(int)> step_stop(std::string launcher, std::string step_name, bool verbose) {
  return [launcher = std::move(launcher), step_name = std::move(step_name), verbose](int signal) {
    // A few seconds: squeue and scancel each answer in tens of milliseconds on a healthy controller.
    const auto problem = signal_named_step(launcher, step_name, signal, std::chrono::seconds(5));
    if (verbose) {
      say(problem.empty()
              ? fmt::format("{} passed on to srun's step {} with scancel", sigdescr_np(signal), step_name)
              : fmt::format("could not pass {} on to srun's step {} ({}): stopping srun with SIGINT instead",
                            sigdescr_np(signal), step_name, problem));
    }
    return problem.empty();
  };
}

}  // namespace popdist::cli
