#include "job/shell_status.hpp"

#include <sys/wait.h>

namespace popdist::cli {

int shell_status(int wait_status) {
  if (WIFEXITED(wait_status)) return WEXITSTATUS(wait_status);
  if (WIFSIGNALED(wait_status)) return 128 + WTERMSIG(wait_status);
  return 1;
}

}  // namespace popdist::cli
