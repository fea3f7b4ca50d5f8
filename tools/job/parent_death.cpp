#include "job/parent_death.hpp"

#include <sys/prctl.h>
#include <unistd.h>

namespace popdist::cli {

bool end_with_parent(int signal, pid_t parent) noexcept {
  ::prctl(PR_SET_PDEATHSIG, signal);
  return ::getppid() == parent;  // async-signal-safe: callers run it between fork and exec
}

}  // namespace popdist::cli
