#pragma once
// One small probe per launcher family (DESIGN.md 3.2; the shape of HPX's batch_environments):
// `present` says whether the family started this process, `read` returns its whole identity
// (rank, size, local rank/size, node) with the variable behind each field, validated.

#include <optional>
#include <string>
#include <vector>

#include "popdist/environment.hpp"
#include "popdist/topology.hpp"

namespace popdist::detail {

/// One identity field and the variable that supplied it ("default" for the singleton).
struct Field {
  int value = 0;
  std::string source;
};

/// A process's identity as one launcher family describes it. Fields never mix families.
struct Identity {
  Launcher launcher = Launcher::Singleton;
  std::string detected_by = "default";  ///< the variable that identified the family
  Field rank{0, "default"};
  Field size{1, "default"};
  std::optional<Field> local_rank;  ///< set together with local_size, or neither
  std::optional<Field> local_size;
  std::optional<Field> node;  ///< the node index, when the family has one

  /// e.g. "openmpi rank 2 of 4 (OMPI_COMM_WORLD_RANK=2, OMPI_COMM_WORLD_SIZE=4)".
  [[nodiscard]] std::string summary() const;
};

/// A launcher family's probe.
struct LauncherProbe {
  Launcher launcher;
  /// The variables whose presence identifies the family (what `present` looks for), for
  /// "POPDIST_LAUNCHER=x but none of ... is set".
  std::vector<std::string> markers;
  /// The variable whose presence shows the family started this process, or std::nullopt.
  std::optional<std::string> (*present)(const EnvLookup& env);
  /// The identity; throws EnvironmentError (naming variables, values, expectations) when the
  /// family's variables are incomplete, malformed or inconsistent.
  Identity (*read)(const EnvLookup& env);
};

/// Every launcher family except singleton and popdist, highest priority first:
/// torchrun, openmpi, mvapich2, pals, mpich, slurm.
[[nodiscard]] const std::vector<LauncherProbe>& launcher_probes();

/// The probe for `launcher`, or nullptr for singleton and popdist (which have none).
[[nodiscard]] const LauncherProbe* find_probe(Launcher launcher);

/// The unlaunched identity: rank 0 of 1, node 0, all "default"; no local rank/size.
[[nodiscard]] Identity singleton_identity();

}  // namespace popdist::detail
