#pragma once
// What this machine -- the one popdist run was started on -- adds to the job: the facts the mpirun
// command depends on (root, cores, Open MPI settings in the environment, the variables to forward,
// this binary as every instance's agent) and the start-up hook of Python instances. Read once,
// when the job is prepared (prepared_job.hpp).

#include <optional>
#include <string>

#include "popdist/environment.hpp"
#include "run/launch/mpirun_command.hpp"

namespace popdist::cli {

/// This binary's path; empty when /proc cannot tell.
[[nodiscard]] std::string self_path();

/// The context of the mpirun command as this machine and `env` give it, with `self` (this binary,
/// the same path on every host, as for the program itself) as every instance's agent; without the
/// job's master endpoint and any attempt's job directory, logs and variables.
[[nodiscard]] MpirunContext machine_context(const EnvLookup& env, const std::string& self);

/// PYTHONPATH for the instances with popdist run's start-up hook for Python instances
/// (python_startup/sitecustomize.py, beside `self` as ../share/popdist/python-startup: build tree,
/// install and wheel alike) first, so that Python instances tear torch.distributed down at exit
/// while the interpreter is whole (sitecustomize.py says why); nullopt when the hook is not there
/// or turned off (POPDIST_PYTHON_EXIT_HOOK=0).
[[nodiscard]] std::optional<std::string> python_path_with_hook(const std::string& self, const EnvLookup& env);

}  // namespace popdist::cli
