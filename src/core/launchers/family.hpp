#pragma once
// A launcher family (design.md §3.2; the shape of HPX's batch_environments, one small struct per
// launcher): what identifies it, how its identity is read, and its quirks. Each family's file
// (src/core/launchers/<name>.cpp) fills one in; the table (launcher_families.hpp, table.cpp) adds
// its name and priority and collects them.

#include <functional>
#include <optional>
#include <string>
#include <string_view>
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

/// One launcher family. A launch family (one a launcher starts processes under) has `present`
/// and `read`; popdist has only `present` (PopRun's variables, read by detect(), state the
/// instance); singleton and mpi have only `forced`.
struct LauncherFamily {
  // From the family's row in the table.
  Launcher launcher = Launcher::Singleton;
  std::string_view name;
  int priority = 0;  ///< detection order, lowest first; 0: only forced

  // From the family's file.
  /// The variables whose presence identifies the family (what `present` looks for), for
  /// "POPDIST_LAUNCHER=x but none of ... is set".
  std::vector<std::string> markers;
  /// The variable whose presence shows the family started this process, or std::nullopt.
  std::function<std::optional<std::string>(const EnvLookup&)> present;
  /// The identity; throws EnvironmentError (naming variables, values, expectations, and starting
  /// with the family's name) when the family's variables are incomplete, malformed or inconsistent.
  std::function<Identity(const EnvLookup&)> read;
  /// The variables that state this family's rank, size, local rank/size or node.
  std::vector<StatedVariable> stated;
  /// What forms the family, for "these variables are set but form no launch" (e.g. "needs
  /// SLURM_STEP_ID").
  std::string needs;

  // Quirks, each empty for most families.
  /// The identity when POPDIST_LAUNCHER forces a family with no variables of its own (singleton;
  /// mpi, whose identity is MPI's `world` once init() supplies it), with any warnings to add.
  std::function<Identity(const std::optional<MpiWorld>& world, std::vector<std::string>& warnings)> forced;
  /// Added to the error when the family is forced but its variables are missing.
  std::string forced_hint;
  /// Families whose variables this family's launcher sets as its own: present beside it, they
  /// are not a second launch to compare (PALS's PMI_RANK is MPICH's; torchrun's RANK is PyTorch's).
  std::vector<Launcher> sets_variables_of;
  /// For a scheduler whose allocation is no launch (Slurm: salloc's shell, sbatch's script):
  /// the sentence saying this environment is such an allocation, or std::nullopt. Its unused
  /// variables are reported with that sentence.
  std::function<std::optional<std::string>(const EnvLookup&)> allocation_without_launch;

  [[nodiscard]] bool is_launch() const { return present && read; }
};

/// Every family, highest priority first (the forced-only ones last).
[[nodiscard]] const std::vector<LauncherFamily>& launcher_families();

/// The launch families (those with `present` and `read`), highest priority first.
[[nodiscard]] const std::vector<const LauncherFamily*>& launch_families();

/// The family of `launcher` (every Launcher has one).
[[nodiscard]] const LauncherFamily& find_family(Launcher launcher);

/// Every family's name in table order, ", "-separated, for "expected one of ...".
[[nodiscard]] const std::string& family_names();

/// Variables that state a rank or size but belong to no family popdist can form (PMIx without
/// a size, Cray ALPS, submitit's local executor), with the reason each cannot form one.
struct FamilylessVariable {
  StatedVariable variable;
  std::string why;
};
[[nodiscard]] const std::vector<FamilylessVariable>& familyless_variables();

/// The unlaunched identity: rank 0 of 1, node 0, all "default"; no local rank/size.
[[nodiscard]] Identity singleton_identity();

// One per row of the table, each defined in its family's file.
#define POPDIST_DECLARE_FAMILY(enumerator, name, priority) LauncherFamily name##_family();
POPDIST_LAUNCHER_FAMILIES(POPDIST_DECLARE_FAMILY)
#undef POPDIST_DECLARE_FAMILY

}  // namespace popdist::detail
