// Before an instance ends the job, the launcher must have read what the instance wrote.
#pragma once

namespace popdist::detail {

/// Flushes stdout and stderr, then waits (at most `max_seconds`) until the reader of each (a
/// launcher's pipe, socket or terminal) has taken every byte. MPI_Abort makes launchers such as
/// srun end the step at once; a traceback still in the pipe would be lost with it.
void wait_until_output_is_read(double max_seconds) noexcept;

}  // namespace popdist::detail
