#include "run/supervise/launcher_process.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <csignal>
#include <cstdlib>

#include "job/parent_death.hpp"

namespace popdist::cli {
namespace {

/// Set by popdist.launch to its process's pid.
constexpr const char* kLaunchParentVariable = "POPDIST_LAUNCH_PARENT";

}  // namespace

void give_closed_stdin_null() {
  if (::fcntl(STDIN_FILENO, F_GETFD) >= 0 || errno != EBADF) return;
  const int null = ::open("/dev/null", O_RDONLY);  // the lowest free descriptor: 0
  if (null > STDIN_FILENO) ::close(null);
}

void end_with_launching_process(const EnvLookup& env) {
  const auto parent = env(kLaunchParentVariable);
  if (!parent) return;
  ::unsetenv(kLaunchParentVariable);
  pid_t pid = -1;
  const auto* end = parent->data() + parent->size();
  if (std::from_chars(parent->data(), end, pid).ptr != end) pid = -1;  // no process's: end now
  if (!end_with_parent(SIGTERM, pid)) std::raise(SIGTERM);
}

}  // namespace popdist::cli
