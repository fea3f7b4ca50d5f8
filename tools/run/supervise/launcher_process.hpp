#pragma once
// What popdist run does to its own process before the first attempt, so that mpirun's life under
// it goes as expected: a closed stdin is given /dev/null, and under popdist.launch the job ends
// with the process that called it.

#include "popdist/environment.hpp"

namespace popdist::cli {

/// A closed stdin (`popdist run ... <&-`) becomes /dev/null: mpirun would otherwise wait on the
/// first file it opens as if it were its input, and the job would never start.
void give_closed_stdin_null();

/// Under popdist.launch (POPDIST_LAUNCH_PARENT, its process's pid): the job ends with the process
/// that called it (a Jupyter kernel killed or restarted), as mpirun ends with popdist run -- that
/// process's death sends popdist run SIGTERM, the job's usual stop. The variable is unset, so
/// that an instance's own popdist run is not tied to it.
void end_with_launching_process(const EnvLookup& env);

}  // namespace popdist::cli
