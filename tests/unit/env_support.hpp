#pragma once
// Shared helpers for the detection tests: the real captured environments, and checks that an
// error names what it must.

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "popdist/environment.hpp"
#include "popdist/error.hpp"
#include "popdist/topology.hpp"

namespace popdist::testing {

/// A real environment captured on this machine with a real launcher (tests/unit/envdumps,
/// described in its README.md), e.g. dump("srun_N2n4.rank3").
inline EnvMap dump(const std::string& name) {
  return read_env_file(std::string(POPDIST_ENVDUMP_DIR) + "/" + name + ".env");
}

/// `base` with `extra` added (and overriding).
inline EnvMap with(EnvMap base, const EnvMap& extra) {
  for (const auto& [name, value] : extra) base[name] = value;
  return base;
}

/// Runs detect() on `env`, which must throw EnvironmentError whose message contains every
/// fragment of `fragments` (the variable, its value, what was expected, ...).
inline void require_environment_error(const EnvMap& env, const std::vector<std::string>& fragments) {
  try {
    const auto topology = detect(lookup_in(env));
    FAIL("detect() accepted the environment and returned:\n" << describe(topology));
  } catch (const EnvironmentError& error) {
    const std::string message = error.what();
    INFO("message: " << message);
    for (const auto& fragment : fragments) {
      INFO("expected fragment: " << fragment);
      CHECK(message.find(fragment) != std::string::npos);
    }
  }
}

}  // namespace popdist::testing
