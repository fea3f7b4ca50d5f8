#include "run/plan/job_variables.hpp"

#include <fmt/format.h>

#include <cstdint>

namespace popdist::cli {

PopRunEffects poprun_effects(const RunOptions& options, const EnvLookup& env) {
  PopRunEffects effects;
  if (options.executable_cache_path) {
    effects.exports.emplace_back("POPDIST_EXECUTABLE_CACHE_PATH", *options.executable_cache_path);
    effects.decisions.push_back(fmt::format("--executable-cache-path: every instance gets POPDIST_EXECUTABLE_CACHE_PATH={}",
                                            *options.executable_cache_path));
  }
  if (options.num_ilds && *options.num_ilds > 0) {
    const std::int64_t devices = static_cast<std::int64_t>(total_replicas(options)) * options.ipus_per_replica;
    const std::int64_t domain = devices / *options.num_ilds;
    if (const auto own = env("POPLAR_TARGET_OPTIONS")) {
      effects.decisions.push_back(fmt::format(
          "--num-ilds {}: POPLAR_TARGET_OPTIONS is set ({}), so it stands and ipuLinkDomainSize {} is not set (forward "
          "yours with --mpi-local-args \"-x POPLAR_TARGET_OPTIONS\")",
          *options.num_ilds, *own, domain));
    } else {
      const std::string value = fmt::format(R"({{"ipuLinkDomainSize":"{}"}})", domain);
      effects.exports.emplace_back("POPLAR_TARGET_OPTIONS", value);
      effects.decisions.push_back(fmt::format("--num-ilds {}: {} IPUs in {} IPU-Link domains: every instance gets "
                                              "POPLAR_TARGET_OPTIONS={}",
                                              *options.num_ilds, devices, *options.num_ilds, value));
    }
  }
  if (options.host_subnet) {
    // The subnet is checked to be a.b.c.d/n: no quoting needed.
    effects.mpi_global_args =
        fmt::format("--mca btl_tcp_if_include {0} --mca oob_tcp_if_include {0}", *options.host_subnet);
    effects.decisions.push_back(fmt::format(
        "--host-subnet {0}: added --mca btl_tcp_if_include {0} --mca oob_tcp_if_include {0}", *options.host_subnet));
  }
  return effects;
}

}  // namespace popdist::cli
