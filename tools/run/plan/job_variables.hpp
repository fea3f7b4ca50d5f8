#pragma once
// What PopRun's kept options mean off IPUs (run/options/poprun_ipu_options.hpp): the variables every instance
// gets and the mpirun options they add. Pure: the environment comes in as a lookup.

#include <string>
#include <utility>
#include <vector>

#include "popdist/environment.hpp"
#include "run/options/run_options.hpp"

namespace popdist::cli {

struct PopRunEffects {
  std::vector<std::pair<std::string, std::string>> exports;  ///< set for every instance (-x NAME=VALUE)
  std::string mpi_global_args;  ///< added before the user's --mpi-global-args (shell words; empty: none)
  std::vector<std::string> decisions;                        ///< what was done and why (shown with -v)
};

/// --executable-cache-path DIR: POPDIST_EXECUTABLE_CACHE_PATH=DIR (PopRun's variable, read by IPU
/// TensorFlow). --num-ilds N: POPLAR_TARGET_OPTIONS={"ipuLinkDomainSize":"<IPUs / N>"}, the
/// link-domain size of PopRun's partition, unless `env` already has POPLAR_TARGET_OPTIONS (then
/// the user's value stands). --host-subnet CIDR: Open MPI's TCP transports use that subnet.
/// Expects options that passed option_problems().
[[nodiscard]] PopRunEffects poprun_effects(const RunOptions& options, const EnvLookup& env);

}  // namespace popdist::cli
