#pragma once
// How many MPI progress passes a "late look" makes: a look, after a protocol's exchange has
// completed, for a notice (GAVE_UP, a registration's GaveUp or Mismatch) that a peer sent before
// this instance arrived (timed_barrier.cpp, handshake.cpp).
//
// Under a real MPI library a message that was sent long ago can still sit behind other traffic
// in the progress engine: one MPI_Test or MPI_Iprobe may miss it and the next finds it (measured
// with Open MPI: a single pass missed about one in three), so the look makes several passes.
// Under SimGrid SMPI a message is in the receiver's queue from the instant its simulated
// transfer ends, so one probe sees every message sent before; more passes would only add the
// simulated cost of unsuccessful probes (smpi/test, smpi/iprobe: 1 us each in tests/scale) to
// every first round, with nothing to find.

namespace popdist::detail {

[[nodiscard]] constexpr int late_look_passes(int real_mpi_passes) noexcept {
#if defined(POPDIST_SIMULATED_MPI)
  (void)real_mpi_passes;
  return 1;
#else
  return real_mpi_passes;
#endif
}

}  // namespace popdist::detail
