#pragma once
// A PMPI counting layer for the scaling benchmark: the MPI calls that popdist's protocols make
// are defined here, counted, and passed on to their PMPI_ names. Linked into the benchmark
// executable (before libmpi, so popdist's static library resolves to these definitions).
//
// What is counted, per process, is what the MPI interface says: for a point-to-point send one
// message and its bytes; for a collective one call and the bytes this process receives by its
// arguments (an allgather of b bytes receives N x b). How many wire messages a collective makes
// inside MPI is its algorithm's business (log2 N rounds for the small-message barrier, allreduce,
// scan and broadcast of Open MPI's tuned component); tests/bench/README.md models it that way.

#include <cstdint>

namespace popdist_bench {

struct MpiCounts {
  std::uint64_t sends = 0;             ///< point-to-point sends (MPI_Send, MPI_Isend)
  std::uint64_t sent_bytes = 0;
  std::uint64_t collectives = 0;       ///< collective calls (blocking and nonblocking)
  std::uint64_t received_bytes = 0;    ///< by the collectives' receive arguments and p2p receives
};

/// The counts so far in this process (all threads).
[[nodiscard]] MpiCounts mpi_counts() noexcept;
/// The difference of two snapshots.
[[nodiscard]] MpiCounts operator-(const MpiCounts& a, const MpiCounts& b) noexcept;

}  // namespace popdist_bench
