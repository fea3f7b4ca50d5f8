#pragma once
// The agent passes a signal on to its program only when it would not reach the program
// otherwise, so that each signal arrives exactly once (a checkpoint-and-requeue handler must not
// save and requeue twice). Open MPI's daemons signal an instance's whole process group (odls:
// kill(-pid)), which holds the agent and the program; Slurm's slurmstepd signals every process of
// a step. Both reach the program by themselves. A signal sent to the agent alone (by another
// process, or by Open MPI run with odls_base_signal_direct_children_only) is passed on. One the
// agent sends its own group (its fence, agent/host_fence.hpp) is neither passed on nor a request
// to end.

#include <sys/types.h>

#include <optional>
#include <string>

namespace popdist::cli {

/// Installs the handler for the signals that mpirun passes on (TERM, INT, HUP, QUIT, USR1, USR2,
/// CONT, TSTP, ALRM, ABRT). `direct_children_only` is the value of
/// OMPI_MCA_odls_base_signal_direct_children_only, when set.
void relay_signals_to_program(const std::optional<std::string>& direct_children_only);

/// The program's pid, once forked: from then on signals are passed on to it.
void set_signal_target(pid_t program);

/// Whether a signal that ends a job (TERM, INT, HUP) reached the agent: its program's end is then
/// part of the job's teardown.
[[nodiscard]] bool asked_to_end();

/// Whether Open MPI's daemon signals only its direct children (the agent) for this
/// parameter value: "1", "true", "yes" or "on", in any case. Pure.
[[nodiscard]] bool signals_direct_children_only(const std::optional<std::string>& value);

}  // namespace popdist::cli
