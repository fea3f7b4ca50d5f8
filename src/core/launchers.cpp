// The launcher probes (DESIGN.md 3.2): each reads one family's variables strictly and validates
// them; errors start with the family's name.

#include "core/launchers.hpp"

#include <fmt/format.h>

#include <utility>

#include "core/numbers.hpp"
#include "core/slurm_tasks.hpp"
#include "popdist/error.hpp"

namespace popdist::detail {
namespace {

std::string show(const Field& field) { return fmt::format("{}={}", field.source, field.value); }

[[noreturn]] void fail(Launcher launcher, const std::string& message) {
  throw EnvironmentError(fmt::format("{}: {}", launcher_name(launcher), message));
}

std::optional<Field> read_field(const EnvLookup& env, const std::string& name, Expect expect) {
  const auto number = read_number(env, name, expect);
  if (!number) return std::nullopt;
  return Field{number->value, number->source};
}

/// An index/count pair that must be set together ("a pair set by half is an error").
struct Pair {
  std::optional<Field> index;
  std::optional<Field> count;
};

Pair read_pair(Launcher launcher, const EnvLookup& env, const std::string& index_name,
               const std::string& count_name) {
  Pair pair{read_field(env, index_name, Expect::NonNegative), read_field(env, count_name, Expect::Positive)};
  if (pair.index && !pair.count) {
    fail(launcher, fmt::format("{} is set but {} is not; expected both or neither", show(*pair.index), count_name));
  }
  if (pair.count && !pair.index) {
    fail(launcher, fmt::format("{} is set but {} is not; expected both or neither", show(*pair.count), index_name));
  }
  return pair;
}

/// The rank/size pair, which the family cannot do without.
void read_rank_and_size(Identity& identity, const EnvLookup& env, const std::string& rank_name,
                        const std::string& size_name) {
  const auto pair = read_pair(identity.launcher, env, rank_name, size_name);
  if (!pair.index) {
    fail(identity.launcher, fmt::format("{} is set but neither {} nor {} is; expected the process's rank and the "
                                        "job's size",
                                        identity.detected_by, rank_name, size_name));
  }
  identity.rank = *pair.index;
  identity.size = *pair.count;
}

void read_local(Identity& identity, const EnvLookup& env, const std::string& rank_name,
                const std::string& size_name) {
  auto pair = read_pair(identity.launcher, env, rank_name, size_name);
  identity.local_rank = std::move(pair.index);
  identity.local_size = std::move(pair.count);
}

/// The checks every family shares: indices within their counts, the host within the job.
Identity validated(Identity identity) {
  const auto launcher = identity.launcher;
  if (identity.rank.value >= identity.size.value) {
    fail(launcher, fmt::format("{} is not less than {}; expected a rank in 0..{}", show(identity.rank),
                               show(identity.size), identity.size.value - 1));
  }
  if (identity.local_rank && identity.local_size) {
    if (identity.local_rank->value >= identity.local_size->value) {
      fail(launcher, fmt::format("{} is not less than {}; expected a local rank in 0..{}", show(*identity.local_rank),
                                 show(*identity.local_size), identity.local_size->value - 1));
    }
    if (identity.local_size->value > identity.size.value) {
      fail(launcher, fmt::format("{} is larger than {}; expected at most as many processes on a node as in the job",
                                 show(*identity.local_size), show(identity.size)));
    }
  }
  if (identity.node && identity.node->value >= identity.size.value) {
    fail(launcher, fmt::format("{} is not less than {}; expected a node index in 0..{} (every node runs at least "
                               "one process)",
                               show(*identity.node), show(identity.size), identity.size.value - 1));
  }
  return identity;
}

std::optional<std::string> first_set(const EnvLookup& env, std::initializer_list<const char*> names) {
  for (const char* name : names) {
    if (env(name)) return std::string(name);
  }
  return std::nullopt;
}

// ---- torchrun -----------------------------------------------------------------------------------

std::optional<std::string> torchrun_present(const EnvLookup& env) { return first_set(env, {"TORCHELASTIC_RUN_ID"}); }

Identity torchrun_read(const EnvLookup& env) {
  Identity identity;
  identity.launcher = Launcher::Torchrun;
  identity.detected_by = "TORCHELASTIC_RUN_ID";
  read_rank_and_size(identity, env, "RANK", "WORLD_SIZE");
  read_local(identity, env, "LOCAL_RANK", "LOCAL_WORLD_SIZE");
  const auto group = read_pair(identity.launcher, env, "GROUP_RANK", "GROUP_WORLD_SIZE");
  if (group.index && group.index->value >= group.count->value) {
    fail(identity.launcher, fmt::format("{} is not less than {}; expected a node index in 0..{}", show(*group.index),
                                        show(*group.count), group.count->value - 1));
  }
  identity.node = group.index;
  return validated(std::move(identity));
}

// ---- Open MPI -----------------------------------------------------------------------------------

std::optional<std::string> openmpi_present(const EnvLookup& env) {
  return first_set(env, {"OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK"});
}

Identity openmpi_read(const EnvLookup& env) {
  Identity identity;
  identity.launcher = Launcher::OpenMpi;
  identity.detected_by = openmpi_present(env).value_or("OMPI_COMM_WORLD_SIZE");
  read_rank_and_size(identity, env, "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE");
  read_local(identity, env, "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE");
  // No node index: OMPI_COMM_WORLD_NODE_RANK is the rank among the node's processes.
  return validated(std::move(identity));
}

// ---- MVAPICH2 -----------------------------------------------------------------------------------

std::optional<std::string> mvapich2_present(const EnvLookup& env) {
  return first_set(env, {"MV2_COMM_WORLD_SIZE", "MV2_COMM_WORLD_RANK"});
}

Identity mvapich2_read(const EnvLookup& env) {
  Identity identity;
  identity.launcher = Launcher::Mvapich2;
  identity.detected_by = mvapich2_present(env).value_or("MV2_COMM_WORLD_SIZE");
  read_rank_and_size(identity, env, "MV2_COMM_WORLD_RANK", "MV2_COMM_WORLD_SIZE");
  read_local(identity, env, "MV2_COMM_WORLD_LOCAL_RANK", "MV2_COMM_WORLD_LOCAL_SIZE");
  return validated(std::move(identity));
}

// ---- Cray PALS ----------------------------------------------------------------------------------

std::optional<std::string> pals_present(const EnvLookup& env) {
  if (auto name = first_set(env, {"PALS_RANKID", "PALS_LOCAL_RANKID", "PALS_NODEID", "PALS_APID"})) return name;
  // PMI_LOCAL_RANK is PALS's; Hydra sets MPI_LOCALRANKID instead.
  if (env("PMI_LOCAL_RANK") && env("PMI_RANK")) return std::string("PMI_LOCAL_RANK");
  return std::nullopt;
}

/// The first of two variables that mean the same thing; both set and different is an error.
std::optional<Field> read_either(Launcher launcher, const EnvLookup& env, const std::string& preferred,
                                 const std::string& alternative, Expect expect) {
  auto first = read_field(env, preferred, expect);
  const auto second = read_field(env, alternative, expect);
  if (first && second && first->value != second->value) {
    fail(launcher, fmt::format("{} and {} disagree; expected the same value", show(*first), show(*second)));
  }
  return first ? first : second;
}

Identity pals_read(const EnvLookup& env) {
  Identity identity;
  identity.launcher = Launcher::Pals;
  identity.detected_by = pals_present(env).value_or("PALS_RANKID");
  const auto rank = read_either(identity.launcher, env, "PMI_RANK", "PALS_RANKID", Expect::NonNegative);
  const auto size = read_field(env, "PMI_SIZE", Expect::Positive);
  if (!rank || !size) {
    fail(identity.launcher,
         fmt::format("{} is set but {}; expected PMI_RANK (or PALS_RANKID) and PMI_SIZE", identity.detected_by,
                     !rank && !size ? "neither PMI_RANK/PALS_RANKID nor PMI_SIZE is"
                     : !rank        ? fmt::format("{} is set without PMI_RANK or PALS_RANKID", show(*size))
                                    : fmt::format("{} is set without PMI_SIZE", show(*rank))));
  }
  identity.rank = *rank;
  identity.size = *size;
  const auto local_rank =
      read_either(identity.launcher, env, "PMI_LOCAL_RANK", "PALS_LOCAL_RANKID", Expect::NonNegative);
  const auto local_size = read_field(env, "PMI_LOCAL_SIZE", Expect::Positive);
  if (local_rank && !local_size) {
    fail(identity.launcher, fmt::format("{} is set but PMI_LOCAL_SIZE is not; expected both or neither",
                                        show(*local_rank)));
  }
  if (local_size && !local_rank) {
    fail(identity.launcher, fmt::format("{} is set but neither PMI_LOCAL_RANK nor PALS_LOCAL_RANKID is; expected "
                                        "both or neither",
                                        show(*local_size)));
  }
  identity.local_rank = local_rank;
  identity.local_size = local_size;
  identity.node = read_field(env, "PALS_NODEID", Expect::NonNegative);
  return validated(std::move(identity));
}

// ---- MPICH Hydra / Intel MPI --------------------------------------------------------------------

std::optional<std::string> mpich_present(const EnvLookup& env) { return first_set(env, {"PMI_SIZE", "PMI_RANK"}); }

Identity mpich_read(const EnvLookup& env) {
  Identity identity;
  identity.launcher = Launcher::Mpich;
  identity.detected_by = mpich_present(env).value_or("PMI_SIZE");
  read_rank_and_size(identity, env, "PMI_RANK", "PMI_SIZE");
  read_local(identity, env, "MPI_LOCALRANKID", "MPI_LOCALNRANKS");
  return validated(std::move(identity));
}

// ---- Slurm srun (a step) ------------------------------------------------------------------------

// Only a step is a launch: salloc's shell and sbatch's batch script have no SLURM_STEP_ID.
std::optional<std::string> slurm_present(const EnvLookup& env) { return first_set(env, {"SLURM_STEP_ID"}); }

Identity slurm_read(const EnvLookup& env) {
  Identity identity;
  identity.launcher = Launcher::Slurm;
  identity.detected_by = "SLURM_STEP_ID";
  // The step's size, never the job-level SLURM_NTASKS (srun --preserve-env leaves it stale).
  read_rank_and_size(identity, env, "SLURM_PROCID", "SLURM_STEP_NUM_TASKS");
  identity.node = read_field(env, "SLURM_NODEID", Expect::NonNegative);
  const auto local_rank = read_field(env, "SLURM_LOCALID", Expect::NonNegative);
  const auto tasks_text = env("SLURM_STEP_TASKS_PER_NODE");
  if (local_rank && !tasks_text) {
    fail(identity.launcher, fmt::format("{} is set but SLURM_STEP_TASKS_PER_NODE is not; expected both or neither",
                                        show(*local_rank)));
  }
  if (tasks_text) {
    const SlurmTasksPerNode tasks("SLURM_STEP_TASKS_PER_NODE", *tasks_text);
    if (tasks.num_tasks() != identity.size.value) {
      fail(identity.launcher, fmt::format("SLURM_STEP_TASKS_PER_NODE='{}' adds up to {} tasks but {}; expected the "
                                          "same number of tasks",
                                          *tasks_text, tasks.num_tasks(), show(identity.size)));
    }
    if (const auto nodes = read_field(env, "SLURM_STEP_NUM_NODES", Expect::Positive);
        nodes && nodes->value != tasks.num_nodes()) {
      fail(identity.launcher, fmt::format("SLURM_STEP_TASKS_PER_NODE='{}' describes {} node(s) but {}; expected the "
                                          "same number of nodes",
                                          *tasks_text, tasks.num_nodes(), show(*nodes)));
    }
    if (!local_rank) {
      fail(identity.launcher, fmt::format("SLURM_STEP_TASKS_PER_NODE='{}' is set but SLURM_LOCALID is not; expected "
                                          "both or neither",
                                          *tasks_text));
    }
    if (!identity.node) {
      fail(identity.launcher, fmt::format("SLURM_STEP_TASKS_PER_NODE='{}' is set but SLURM_NODEID is not; expected "
                                          "the node index to find this node's task count",
                                          *tasks_text));
    }
    if (identity.node->value >= tasks.num_nodes()) {
      fail(identity.launcher, fmt::format("{} is not less than the {} node(s) of SLURM_STEP_TASKS_PER_NODE='{}'; "
                                          "expected a node index in 0..{}",
                                          show(*identity.node), tasks.num_nodes(), *tasks_text,
                                          tasks.num_nodes() - 1));
    }
    identity.local_rank = local_rank;
    identity.local_size = Field{tasks.tasks_on_node(identity.node->value), "SLURM_STEP_TASKS_PER_NODE"};
  }
  return validated(std::move(identity));
}

/// Every error of a family's variables starts with the family's name, including the number and
/// tasks-list errors raised below the probe.
template <Identity (*Read)(const EnvLookup&), Launcher Family>
Identity read_named(const EnvLookup& env) {
  try {
    return Read(env);
  } catch (const EnvironmentError& error) {
    const std::string prefix = fmt::format("{}: ", launcher_name(Family));
    const std::string message = error.what();
    if (message.rfind(prefix, 0) == 0) throw;
    throw EnvironmentError(prefix + message);
  }
}

}  // namespace

std::string Identity::summary() const {
  return fmt::format("{} rank {} of {} ({}, {})", launcher_name(launcher), rank.value, size.value, show(rank),
                     show(size));
}

const std::vector<LauncherProbe>& launcher_probes() {
  // Priority (DESIGN.md 3.2): torchrun runs inside MPI/Slurm allocations; the MPI launchers win
  // over Slurm because mpirun inside salloc leaves SLURM_* describing its daemon step. PALS
  // comes before MPICH since both set PMI_RANK/PMI_SIZE; MVAPICH2 before both for the same reason.
  static const std::vector<LauncherProbe> probes = {
      {Launcher::Torchrun,
       {"TORCHELASTIC_RUN_ID"},
       torchrun_present,
       read_named<torchrun_read, Launcher::Torchrun>},
      {Launcher::OpenMpi,
       {"OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK"},
       openmpi_present,
       read_named<openmpi_read, Launcher::OpenMpi>},
      {Launcher::Mvapich2,
       {"MV2_COMM_WORLD_SIZE", "MV2_COMM_WORLD_RANK"},
       mvapich2_present,
       read_named<mvapich2_read, Launcher::Mvapich2>},
      {Launcher::Pals,
       {"PALS_RANKID", "PALS_LOCAL_RANKID", "PALS_NODEID", "PALS_APID", "PMI_LOCAL_RANK with PMI_RANK"},
       pals_present,
       read_named<pals_read, Launcher::Pals>},
      {Launcher::Mpich, {"PMI_SIZE", "PMI_RANK"}, mpich_present, read_named<mpich_read, Launcher::Mpich>},
      {Launcher::Slurm,
       {"SLURM_STEP_ID"},
       slurm_present,
       read_named<slurm_read, Launcher::Slurm>},
  };
  return probes;
}

const LauncherProbe* find_probe(Launcher launcher) {
  for (const auto& probe : launcher_probes()) {
    if (probe.launcher == launcher) return &probe;
  }
  return nullptr;
}

Identity singleton_identity() {
  Identity identity;
  // No local rank/size: the singleton's 0 of 1 are defaults, not a launcher's statement, so
  // POPDIST_LOCAL_INSTANCE_INDEX is not checked against them.
  identity.node = Field{0, "default"};
  return identity;
}

}  // namespace popdist::detail
