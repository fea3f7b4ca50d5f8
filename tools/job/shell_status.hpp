#pragma once
// A child's wait status as the number a shell shows for it ($?): the launcher reports mpirun's,
// the agent its program's, in the same terms.

namespace popdist::cli {

/// The exit code, or 128 + the signal that ended the process; 1 for anything else.
[[nodiscard]] int shell_status(int wait_status);

}  // namespace popdist::cli
