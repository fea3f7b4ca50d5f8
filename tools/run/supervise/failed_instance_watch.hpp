#pragma once
// A failed instance ends the job, as a watch (watch.hpp), for the launchers that do not do it
// themselves: hydra's mpiexec lets the others run on when one exits non-zero (Open MPI's mpirun
// ends the job itself). The verdict is SIGTERM -- which hydra passes on to every instance, a
// graceful stop -- then SIGKILL after the grace period, with the status of the instance that
// failed first as its agent told it.

#include <chrono>
#include <functional>
#include <optional>

#include "run/supervise/watch.hpp"

namespace popdist::cli {

/// The watch: a verdict as soon as `first_failure` (the status of the instance that failed first,
/// from the agents) has a value.
[[nodiscard]] Watch failed_instance_watch(std::function<std::optional<int>()> first_failure,
                                          std::chrono::milliseconds grace);

}  // namespace popdist::cli
