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
  /// Set together with local_size, or alone for the families whose launchers may omit the
  /// local count (the PyTorch environment, LSF); local_size never without local_rank.
  std::optional<Field> local_rank;
  std::optional<Field> local_size;
  std::optional<Field> node;  ///< the node index, when the family has one

  /// e.g. "openmpi rank 2 of 4 (OMPI_COMM_WORLD_RANK=2, OMPI_COMM_WORLD_SIZE=4)".
  [[nodiscard]] std::string summary() const;
};

/// A variable that states part of a launch's identity, for "never a silent singleton".
struct StatedVariable {
  std::string name;
  /// A rank, local rank or node index: a value > 0 says the process is not the job's first.
  bool index = false;
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
  /// The variables that state this family's rank, size, local rank/size or node.
  std::vector<StatedVariable> stated;
  /// What forms the family, for "these variables are set but form no launch" (e.g. "needs
  /// SLURM_STEP_ID").
  std::string needs;
};

/// Every launcher family except singleton and popdist, highest priority first:
/// torchrun, horovod, openmpi, mvapich2, pals, mpich, pytorch, lsf, slurm.
[[nodiscard]] const std::vector<LauncherProbe>& launcher_probes();

/// The probe for `launcher`, or nullptr for singleton and popdist (which have none).
[[nodiscard]] const LauncherProbe* find_probe(Launcher launcher);

/// Variables that state a rank or size but belong to no family popdist can form (PMIx without
/// a size, Cray ALPS, submitit's local executor), with the reason each cannot form one.
struct FamilylessVariable {
  StatedVariable variable;
  std::string why;
};
[[nodiscard]] const std::vector<FamilylessVariable>& familyless_variables();

/// The unlaunched identity: rank 0 of 1, node 0, all "default"; no local rank/size.
[[nodiscard]] Identity singleton_identity();

}  // namespace popdist::detail
