#pragma once
// Non-blocking sends whose completion nobody waits for: handshake messages, and a timed
// synchronize's messages to instances that may never receive them. Their buffers must live until
// MPI is done with them, so they are kept here and reaped opportunistically; a send that cannot
// complete (its receiver gave up) is released with MPI_Request_free when popdist finalizes.

#include <mpi.h>

#include <memory>
#include <mutex>
#include <vector>

namespace popdist::detail {

class PendingSends {
 public:
  /// MPI_Isend of `bytes` to `destination` with `tag` on `comm`; the buffer is kept until done.
  void send(std::vector<char> bytes, int destination, int tag, MPI_Comm comm);
  /// Takes over a send that is already posted (`request`, reading from memory that `buffer`
  /// keeps alive): the timed synchronize posts its sends from a buffer it reuses every round,
  /// and hands over only the rare send that has not completed by the end of its round.
  void adopt(MPI_Request request, std::shared_ptr<const void> buffer);
  /// Forgets the sends that have completed (MPI_Testsome; never blocks).
  void reap();
  /// Releases every send still pending (MPI_Request_free) and keeps their buffers alive until
  /// the process exits: MPI may still read them while it finalizes. noexcept: used by finalize.
  void release_all() noexcept;

 private:
  std::mutex mutex_;
  std::vector<MPI_Request> requests_;
  std::vector<std::shared_ptr<const void>> buffers_;  ///< buffers_[i] is what requests_[i] reads
  std::vector<std::shared_ptr<const void>> released_;
};

/// The process-wide pending sends.
PendingSends& pending_sends();

}  // namespace popdist::detail
