#pragma once
// A failed instance ends the job, and a stopped job ends within its grace period, as watches
// (watch.hpp), for the launchers that do not do it themselves: hydra's mpiexec lets the others run on when one exits non-zero (Open MPI's mpirun
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

/// After a stop signal reached popdist run (`stop_signal`: it, or 0) and was passed on, the
/// launcher is SIGKILLed once `grace` has passed since the watch first saw it: hydra waits for
/// instances that ignore the signal, and has no grace period of its own (Open MPI's is
/// odls_base_sigkill_timeout). The status is 128 + the signal, as a shell reports it.
[[nodiscard]] Watch stopped_job_watch(std::function<int()> stop_signal, std::chrono::milliseconds grace);

/// `watch` whose verdicts that wait for the launcher's own teardown after SIGTERM (a stall) are
/// bounded by `grace` then SIGKILL: hydra's teardown waits for ever for an instance that ignores it.
[[nodiscard]] Watch bounded_by_grace(Watch watch, std::chrono::milliseconds grace);

}  // namespace popdist::cli
