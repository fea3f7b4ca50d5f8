#pragma once
// The children of a process that have ended but that it has not reaped (zombies), read from
// /proc. `popdist run` uses it to notice an mpirun that hangs in its own teardown: a live
// mpirun reaps its instances at once, so an instance left unreaped for seconds means that its
// event loop has stopped (hung_teardown.hpp).

#include <sys/types.h>

#include <vector>

namespace popdist::cli {

struct UnreapedChild {
  pid_t pid = 0;
  int exit_status = 0;  ///< as a shell reports it: the exit code, or 128 + the signal
};

/// The zombie children of `parent`, with their exit statuses (/proc/<pid>/stat's exit_code,
/// Linux 3.5 and later). Empty when there are none or /proc cannot tell.
[[nodiscard]] std::vector<UnreapedChild> unreaped_children(pid_t parent);

}  // namespace popdist::cli
