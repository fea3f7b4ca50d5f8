#pragma once
// The job directory on the agent's host, for what stays local: the Python start-up hook's marker
// and stack dumps, torch's error file. popdist run made it (and removes it) on its own machine; on
// another host (a node-local /tmp) the agents make it, with a mark saying so, and tidy up what
// they made: each agent its instance's files when it ends, and whichever ends last the directory
// (and the parents the agents made for it). A directory without the mark -- popdist run's, or
// anything that was there before -- is never removed.

#include <string>

namespace popdist::cli {

/// The file that marks a job directory as made by the agents of its host; it holds the topmost
/// directory they made (the job directory itself, or a parent that was missing too).
inline constexpr const char* kMadeByAgentsFile = ".made-by-agents";

class HostJobDirectory {
 public:
  /// Makes `path` (mode 0700) with the mark when it is missing, and notes this agent's instance
  /// in it, so that another agent of the host that ends meanwhile does not remove it. Empty
  /// `path`: nothing. Failures are not errors: the program runs, its stacks unlocated.
  HostJobDirectory(std::string path, int instance);
  /// tidy()
  ~HostJobDirectory();
  HostJobDirectory(const HostJobDirectory&) = delete;
  HostJobDirectory& operator=(const HostJobDirectory&) = delete;

  /// When the agents made the directory: removes this instance's files (`instance<i>.*`), then
  /// the directory if nothing else is left in it but the mark (an rmdir that fails because
  /// another agent still has files there is harmless), then the parents they made. Idempotent.
  void tidy() noexcept;

 private:
  std::string path_;
  int instance_;
  bool made_by_agents_ = false;
};

}  // namespace popdist::cli
