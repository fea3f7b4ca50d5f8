// Before an instance ends the job, the launcher must have read what the instance wrote.
#pragma once

namespace popdist::detail {

/// Flushes stdout and stderr, then waits (at most `max_seconds`) until the reader of each (a
/// launcher's pipe, socket or terminal) has taken every byte. MPI_Abort makes launchers such as
/// srun end the step at once; a traceback still in the pipe would be lost with it. When either
/// stream is a pipe or socket (read by a relay such as slurmstepd), then waits `relay_seconds`
/// more, for the relay to pass the bytes on to the launcher.
void wait_until_output_is_read(double max_seconds, double relay_seconds) noexcept;

}  // namespace popdist::detail
