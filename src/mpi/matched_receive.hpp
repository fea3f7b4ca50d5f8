#pragma once
// Taking one waiting message, whatever its size, if there is one: the only place popdist probes.
//
// With MPI-3 that is a matched probe, MPI_Improbe + MPI_Mrecv: the probe removes the message
// from matching, so that another thread's receive on the same communicator and tag cannot take
// it between the probe and the receive (MPI_THREAD_MULTIPLE). SimGrid SMPI (3.32) declares the
// matched probe but does not implement it; a simulated rank is one thread, so there MPI_Iprobe
// + MPI_Recv from the probed source is equivalent -- as it is wherever one thread at a time
// receives with this tag on this communicator (popdist's protocols hold the MPI lock, or run
// in the calling thread only, while they take their messages).

#include <mpi.h>

#include <vector>

namespace popdist::detail {

/// Receives one message with `tag` on `comm` from any source into `buffer` (resized to it), and
/// returns true with `status` filled; false when none is waiting. Throws MpiError.
[[nodiscard]] bool take_message(int tag, MPI_Comm comm, std::vector<char>& buffer, MPI_Status& status);

}  // namespace popdist::detail
