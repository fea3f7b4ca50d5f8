// The launcher probes (DESIGN.md 3.2): each reads one family's variables strictly and validates
// them; errors start with the family's name.

#include "core/launchers.hpp"

#include <fmt/format.h>

#include <utility>

#include "core/numbers.hpp"
#include "popdist/slurm_tasks.hpp"
#include "popdist/error.hpp"

namespace popdist::detail {
namespace {

std::string show(const Field& field) { return fmt::format("{}={}", field.source, field.value); }

/// The family's marker when its launcher started this process; otherwise POPDIST_LAUNCHER
/// forced the family (detect() only reads an absent family when forced).
constexpr const char* kForced = "POPDIST_LAUNCHER";

/// Why the family is being read: "TORCHELASTIC_RUN_ID is set" or "POPDIST_LAUNCHER=torchrun
/// is set", the start of "... but neither RANK nor WORLD_SIZE is".
std::string cause(const Identity& identity) {
  if (identity.detected_by == kForced) return fmt::format("{}={} is set", kForced, launcher_name(identity.launcher));
  return identity.detected_by + " is set";
}

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
    fail(identity.launcher, fmt::format("{} but neither {} nor {} is; expected the process's rank and the job's "
                                        "size",
                                        cause(identity), rank_name, size_name));
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

/// The first set of several variables that mean the same thing; two set and different is an error.
std::optional<Field> read_alike(Launcher launcher, const EnvLookup& env, const std::vector<std::string>& names,
                                Expect expect) {
  std::optional<Field> first;
  for (const auto& name : names) {
    const auto field = read_field(env, name, expect);
    if (!field) continue;
    if (!first) {
      first = field;
    } else if (field->value != first->value) {
      fail(launcher, fmt::format("{} and {} disagree; expected the same value", show(*first), show(*field)));
    }
  }
  return first;
}

/// A local rank whose local count the launcher may leave out (torch.distributed.launch before
/// elastic, Lightning's children, jsrun environments reduced to JSM_NAMESPACE_LOCAL_RANK): the
/// count, when set, must come with a rank.
void read_local_rank_maybe_alone(Identity& identity, const EnvLookup& env, const std::string& rank_name,
                                 const std::vector<std::string>& size_names) {
  identity.local_rank = read_field(env, rank_name, Expect::NonNegative);
  identity.local_size = read_alike(identity.launcher, env, size_names, Expect::Positive);
  if (identity.local_size && !identity.local_rank) {
    fail(identity.launcher, fmt::format("{} is set but {} is not; expected both or neither", show(*identity.local_size),
                                        rank_name));
  }
}

/// A node index with an optional node count (GROUP_RANK alone is torchrun's documented host index).
std::optional<Field> read_node(Launcher launcher, const EnvLookup& env, const std::vector<std::string>& index_names,
                               const std::vector<std::string>& count_names) {
  const auto node = read_alike(launcher, env, index_names, Expect::NonNegative);
  const auto count = read_alike(launcher, env, count_names, Expect::Positive);
  if (count && !node) {
    std::string names;
    for (const auto& name : index_names) names += (names.empty() ? "" : " or ") + name;
    fail(launcher, fmt::format("{} is set but {} is not; expected a node index with the node count", show(*count),
                               names));
  }
  if (node && count && node->value >= count->value) {
    fail(launcher, fmt::format("{} is not less than {}; expected a node index in 0..{}", show(*node), show(*count),
                               count->value - 1));
  }
  return node;
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
  if (identity.local_rank && !identity.local_size && identity.local_rank->value >= identity.size.value) {
    fail(launcher, fmt::format("{} is not less than {}; expected a local rank in 0..{}", show(*identity.local_rank),
                               show(identity.size), identity.size.value - 1));
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
  identity.detected_by = torchrun_present(env).value_or(kForced);
  read_rank_and_size(identity, env, "RANK", "WORLD_SIZE");
  read_local(identity, env, "LOCAL_RANK", "LOCAL_WORLD_SIZE");
  // GROUP_RANK is the documented host index; GROUP_WORLD_SIZE only checks it when present.
  identity.node = read_node(identity.launcher, env, {"GROUP_RANK"}, {"GROUP_WORLD_SIZE"});
  return validated(std::move(identity));
}

// ---- Open MPI and MVAPICH2: one shape --------------------------------------------------------------
// Two marker variables (the size or the rank), rank and size, local rank and local size (both or
// neither), no node index. One description per family; one probe, one reader for both.

struct PlainFamily {
  Launcher launcher;
  const char* rank;
  const char* size;
  const char* local_rank;
  const char* local_size;
};

// No node index for Open MPI: OMPI_COMM_WORLD_NODE_RANK is the rank among the node's processes.
constexpr PlainFamily kOpenMpi{Launcher::OpenMpi, "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE",
                               "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE"};
constexpr PlainFamily kMvapich2{Launcher::Mvapich2, "MV2_COMM_WORLD_RANK", "MV2_COMM_WORLD_SIZE",
                                "MV2_COMM_WORLD_LOCAL_RANK", "MV2_COMM_WORLD_LOCAL_SIZE"};

template <const PlainFamily& Family>
std::optional<std::string> plain_present(const EnvLookup& env) {
  return first_set(env, {Family.size, Family.rank});
}

template <const PlainFamily& Family>
Identity plain_read(const EnvLookup& env) {
  Identity identity;
  identity.launcher = Family.launcher;
  identity.detected_by = plain_present<Family>(env).value_or(kForced);
  read_rank_and_size(identity, env, Family.rank, Family.size);
  read_local(identity, env, Family.local_rank, Family.local_size);
  return validated(std::move(identity));
}

// ---- Cray PALS ----------------------------------------------------------------------------------

std::optional<std::string> pals_present(const EnvLookup& env) {
  if (auto name = first_set(env, {"PALS_RANKID", "PALS_LOCAL_RANKID", "PALS_NODEID", "PALS_APID"})) return name;
  // PMI_LOCAL_RANK is PALS's; Hydra sets MPI_LOCALRANKID instead.
  if (env("PMI_LOCAL_RANK") && env("PMI_RANK")) return std::string("PMI_LOCAL_RANK");
  return std::nullopt;
}

Identity pals_read(const EnvLookup& env) {
  Identity identity;
  identity.launcher = Launcher::Pals;
  identity.detected_by = pals_present(env).value_or(kForced);
  const auto rank = read_alike(identity.launcher, env, {"PMI_RANK", "PALS_RANKID"}, Expect::NonNegative);
  const auto size = read_field(env, "PMI_SIZE", Expect::Positive);
  // Each sentence names what is set and what is missing once (the marker may be the rank itself).
  const std::string expected = "expected PMI_RANK (or PALS_RANKID) and PMI_SIZE";
  if (!rank && !size) {
    fail(identity.launcher,
         fmt::format("{} but neither PMI_RANK/PALS_RANKID nor PMI_SIZE is; {}", cause(identity), expected));
  }
  if (!size) fail(identity.launcher, fmt::format("{} is set but PMI_SIZE is not; {}", show(*rank), expected));
  if (!rank) {
    fail(identity.launcher,
         fmt::format("{} is set but neither PMI_RANK nor PALS_RANKID is; {}", show(*size), expected));
  }
  identity.rank = *rank;
  identity.size = *size;
  const auto local_rank =
      read_alike(identity.launcher, env, {"PMI_LOCAL_RANK", "PALS_LOCAL_RANKID"}, Expect::NonNegative);
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
  identity.detected_by = mpich_present(env).value_or(kForced);
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
  identity.detected_by = slurm_present(env).value_or(kForced);
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

// ---- Horovod's launcher (horovodrun with Gloo, its Spark and Ray runners) -------------------------

std::optional<std::string> horovod_present(const EnvLookup& env) {
  return first_set(env, {"HOROVOD_SIZE", "HOROVOD_RANK"});
}

Identity horovod_read(const EnvLookup& env) {
  Identity identity;
  identity.launcher = Launcher::Horovod;
  identity.detected_by = horovod_present(env).value_or(kForced);
  read_rank_and_size(identity, env, "HOROVOD_RANK", "HOROVOD_SIZE");
  read_local(identity, env, "HOROVOD_LOCAL_RANK", "HOROVOD_LOCAL_SIZE");
  const auto cross = read_pair(identity.launcher, env, "HOROVOD_CROSS_RANK", "HOROVOD_CROSS_SIZE");
  if (cross.index && cross.index->value >= cross.count->value) {
    fail(identity.launcher, fmt::format("{} is not less than {}; expected a cross rank in 0..{}", show(*cross.index),
                                        show(*cross.count), cross.count->value - 1));
  }
  // The cross rank is the rank among the processes with this local rank: the host's index when
  // every host runs the same number of processes (cross size x local size = size), and not
  // otherwise (hosts of 1 and 3 slots give host 1's second process cross rank 0). A host index
  // that is wrong for some processes is worse than none, so it is taken only in the uniform case.
  if (cross.index && identity.local_size &&
      static_cast<long long>(cross.count->value) * identity.local_size->value == identity.size.value) {
    identity.node = cross.index;
  }
  return validated(std::move(identity));
}

// ---- LSF jsrun (Job Step Manager) ---------------------------------------------------------------

std::optional<std::string> lsf_present(const EnvLookup& env) {
  return first_set(env, {"JSM_NAMESPACE_SIZE", "JSM_NAMESPACE_RANK"});
}

Identity lsf_read(const EnvLookup& env) {
  Identity identity;
  identity.launcher = Launcher::Lsf;
  identity.detected_by = lsf_present(env).value_or(kForced);
  read_rank_and_size(identity, env, "JSM_NAMESPACE_RANK", "JSM_NAMESPACE_SIZE");
  read_local_rank_maybe_alone(identity, env, "JSM_NAMESPACE_LOCAL_RANK", {"JSM_NAMESPACE_LOCAL_SIZE"});
  // jsrun exports no node index (the resource set is not a host).
  return validated(std::move(identity));
}

// ---- The PyTorch environment (torch.distributed.launch, Kubeflow, DeepSpeed, Accelerate) -------

// Both RANK and WORLD_SIZE: one alone is what a training script or Lightning's launcher writes
// into its own environment (Lightning sets WORLD_SIZE, LOCAL_RANK, NODE_RANK but no RANK), which
// is no launch and is reported as unused variables instead.
std::optional<std::string> pytorch_present(const EnvLookup& env) {
  if (env("RANK") && env("WORLD_SIZE")) return std::string("WORLD_SIZE");
  return std::nullopt;
}

Identity pytorch_read(const EnvLookup& env) {
  Identity identity;
  identity.launcher = Launcher::PyTorch;
  identity.detected_by = pytorch_present(env).value_or(kForced);
  read_rank_and_size(identity, env, "RANK", "WORLD_SIZE");
  // DeepSpeed's launcher names the local count LOCAL_SIZE and the node CROSS_RANK/CROSS_SIZE;
  // Lightning and Accelerate name the node NODE_RANK.
  read_local_rank_maybe_alone(identity, env, "LOCAL_RANK", {"LOCAL_WORLD_SIZE", "LOCAL_SIZE"});
  identity.node = read_node(identity.launcher, env, {"GROUP_RANK", "NODE_RANK", "CROSS_RANK"},
                            {"GROUP_WORLD_SIZE", "CROSS_SIZE"});
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

/// The probe of a family of the plain shape, every part of it from the family's description.
template <const PlainFamily& Family>
LauncherProbe plain_probe() {
  const auto name = std::string(launcher_name(Family.launcher));
  return {Family.launcher,
          {Family.size, Family.rank},
          plain_present<Family>,
          read_named<plain_read<Family>, Family.launcher>,
          {{Family.rank, true}, {Family.size}, {Family.local_rank, true}, {Family.local_size}},
          fmt::format("{} needs {} and {}", name, Family.rank, Family.size)};
}

}  // namespace

std::string Identity::summary() const {
  return fmt::format("{} rank {} of {} ({}, {})", launcher_name(launcher), rank.value, size.value, show(rank),
                     show(size));
}

const std::vector<LauncherProbe>& launcher_probes() {
  // Priority (DESIGN.md 3.2), the innermost launcher first: a launcher that starts its workers
  // inside another's allocation or step comes before it.
  // - torchrun runs inside MPI/Slurm allocations, and sets every variable the PyTorch family reads.
  // - horovod: horovodrun's Gloo mode starts workers itself (under sbatch, or srun -n1 horovodrun);
  //   in its MPI mode it sets no HOROVOD_RANK, so it never competes with mpirun's variables.
  // - The MPI launchers win over Slurm and LSF because mpirun inside salloc leaves SLURM_* describing
  //   its daemon step. PALS comes before MPICH since both set PMI_RANK/PMI_SIZE; MVAPICH2 before both.
  // - pytorch below the MPI launchers: DeepSpeed's MPI discovery, Accelerate and job scripts copy
  //   OMPI_COMM_WORLD_*/PMI_* into RANK/WORLD_SIZE, so under mpirun they are a copy, not the launch.
  //   Above LSF and Slurm: `srun --ntasks-per-node=1 deepspeed ...` or a launcher per node under
  //   jsrun starts the workers that RANK/WORLD_SIZE describe inside one task of the step.
  // - lsf before slurm only for a stable order: the two schedulers never run the same job.
  static const std::vector<LauncherProbe> probes = {
      {Launcher::Torchrun,
       {"TORCHELASTIC_RUN_ID"},
       torchrun_present,
       read_named<torchrun_read, Launcher::Torchrun>,
       {{"RANK", true}, {"WORLD_SIZE"}, {"LOCAL_RANK", true}, {"LOCAL_WORLD_SIZE"}, {"GROUP_RANK", true},
        {"GROUP_WORLD_SIZE"}},
       "torchrun sets TORCHELASTIC_RUN_ID"},
      {Launcher::Horovod,
       {"HOROVOD_SIZE", "HOROVOD_RANK"},
       horovod_present,
       read_named<horovod_read, Launcher::Horovod>,
       {{"HOROVOD_RANK", true}, {"HOROVOD_SIZE"}, {"HOROVOD_LOCAL_RANK", true}, {"HOROVOD_LOCAL_SIZE"},
        {"HOROVOD_CROSS_RANK", true}, {"HOROVOD_CROSS_SIZE"}},
       "horovod needs HOROVOD_RANK and HOROVOD_SIZE"},
      plain_probe<kOpenMpi>(),
      plain_probe<kMvapich2>(),
      {Launcher::Pals,
       {"PALS_RANKID", "PALS_LOCAL_RANKID", "PALS_NODEID", "PALS_APID", "PMI_LOCAL_RANK with PMI_RANK"},
       pals_present,
       read_named<pals_read, Launcher::Pals>,
       {{"PALS_RANKID", true}, {"PALS_LOCAL_RANKID", true}, {"PALS_NODEID", true}, {"PMI_LOCAL_RANK", true},
        {"PMI_LOCAL_SIZE"}},
       "pals needs PMI_RANK (or PALS_RANKID) and PMI_SIZE"},
      {Launcher::Mpich,
       {"PMI_SIZE", "PMI_RANK"},
       mpich_present,
       read_named<mpich_read, Launcher::Mpich>,
       {{"PMI_RANK", true}, {"PMI_SIZE"}, {"MPI_LOCALRANKID", true}, {"MPI_LOCALNRANKS"}},
       "mpich needs PMI_RANK and PMI_SIZE"},
      {Launcher::PyTorch,
       {"RANK with WORLD_SIZE"},
       pytorch_present,
       read_named<pytorch_read, Launcher::PyTorch>,
       {{"RANK", true}, {"WORLD_SIZE"}, {"LOCAL_RANK", true}, {"LOCAL_WORLD_SIZE"}, {"LOCAL_SIZE"},
        {"GROUP_RANK", true}, {"GROUP_WORLD_SIZE"}, {"NODE_RANK", true}, {"CROSS_RANK", true}, {"CROSS_SIZE"}},
       "the PyTorch environment needs both RANK and WORLD_SIZE (torchrun also sets TORCHELASTIC_RUN_ID)"},
      {Launcher::Lsf,
       {"JSM_NAMESPACE_SIZE", "JSM_NAMESPACE_RANK"},
       lsf_present,
       read_named<lsf_read, Launcher::Lsf>,
       {{"JSM_NAMESPACE_RANK", true}, {"JSM_NAMESPACE_SIZE"}, {"JSM_NAMESPACE_LOCAL_RANK", true},
        {"JSM_NAMESPACE_LOCAL_SIZE"}},
       "lsf needs JSM_NAMESPACE_RANK and JSM_NAMESPACE_SIZE (set by jsrun)"},
      {Launcher::Slurm,
       {"SLURM_STEP_ID"},
       slurm_present,
       read_named<slurm_read, Launcher::Slurm>,
       {{"SLURM_PROCID", true}, {"SLURM_STEP_NUM_TASKS"}, {"SLURM_LOCALID", true}, {"SLURM_NODEID", true}},
       "slurm needs SLURM_STEP_ID: salloc and sbatch allocate but do not launch; run under srun"},
  };
  return probes;
}

const std::vector<FamilylessVariable>& familyless_variables() {
  static const std::vector<FamilylessVariable> variables = {
      // PMIx exports only the rank and namespace; the size is a query to the PMIx server.
      {{"PMIX_RANK", true},
       "PMIx sets no size beside it (Open MPI's mpirun and srun --mpi=pmix set it alongside their own variables)"},
      // Cray ALPS's aprun: the processing element is the rank, but no variable gives the job's size.
      {{"ALPS_APP_PE", true}, "Cray ALPS (aprun) sets no size beside it"},
      // submitit's LocalExecutor, a stand-in for Slurm on one machine (not a cluster launcher).
      {{"SUBMITIT_LOCAL_GLOBALID", true}, "submitit's local executor is not a launcher popdist reads"},
      {{"SUBMITIT_LOCAL_LOCALID", true}, "submitit's local executor is not a launcher popdist reads"},
      {{"SUBMITIT_LOCAL_NODEID", true}, "submitit's local executor is not a launcher popdist reads"},
      {{"SUBMITIT_LOCAL_NTASKS"}, "submitit's local executor is not a launcher popdist reads"},
  };
  return variables;
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
