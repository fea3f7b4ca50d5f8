// detect() on one environment per launcher layout: every family, every environment captured
// with the real launchers on this machine (tests/unit/envdumps), priorities and conflict
// warnings, POPDIST_LAUNCHER overrides, PopRun's variables, allocations that are not launches.

#include <catch2/catch.hpp>

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "env_support.hpp"
#include "popdist/topology.hpp"
#include "table_case.hpp"

namespace popdist::testing {
namespace {

/// What detect() must return for one layout.
struct Layout {
  std::string name;
  std::string from_dump;  ///< a captured environment to start from ("" for none)
  EnvMap env;             ///< variables added to (or overriding) the dump
  Launcher launcher = Launcher::Singleton;
  int instance = 0;
  int instances = 1;
  int local_instance = 0;
  int local_instances = 1;
  std::optional<int> host;
  int local_replicas = 1;
  int total = 1;
  int offset = 0;
  int ipus = 1;
  bool uniform = true;
  bool env_set = true;
  std::vector<std::string> warnings;              ///< one fragment per expected warning
  std::map<std::string, std::string> provenance;  ///< entries that must match
};

/// A launched process with one replica per instance (the common case).
Layout launched(std::string name, std::string from_dump, EnvMap env, Launcher launcher, int instance, int instances,
                int local_instance, int local_instances, std::optional<int> host) {
  Layout layout;
  layout.name = std::move(name);
  layout.from_dump = std::move(from_dump);
  layout.env = std::move(env);
  layout.launcher = launcher;
  layout.instance = instance;
  layout.instances = instances;
  layout.local_instance = local_instance;
  layout.local_instances = local_instances;
  layout.host = host;
  layout.total = instances;
  layout.offset = instance;
  return layout;
}

Layout unlaunched(std::string name, EnvMap env) {
  Layout layout = launched(std::move(name), "", std::move(env), Launcher::Singleton, 0, 1, 0, 1, 0);
  layout.env_set = false;
  return layout;
}

const char* const kProvenanceKeys[] = {"launcher",
                                       "instance_index",
                                       "num_instances",
                                       "local_instance_index",
                                       "num_local_instances",
                                       "host_index",
                                       "num_local_replicas",
                                       "num_total_replicas",
                                       "replica_index_offset",
                                       "ipus_per_replica",
                                       "uniform_replicas_per_instance"};

void check(const Layout& layout) {
  const EnvMap env = layout.from_dump.empty() ? layout.env : with(dump(layout.from_dump), layout.env);
  const Topology t = detect(lookup_in(env));
  INFO(describe(t));
  CHECK(launcher_name(t.launcher) == launcher_name(layout.launcher));
  CHECK(t.instance_index == layout.instance);
  CHECK(t.num_instances == layout.instances);
  CHECK(t.local_instance_index == layout.local_instance);
  CHECK(t.num_local_instances == layout.local_instances);
  CHECK(t.host_index == layout.host);
  CHECK(t.num_local_replicas == layout.local_replicas);
  CHECK(t.num_total_replicas == layout.total);
  CHECK(t.replica_index_offset == layout.offset);
  CHECK(t.ipus_per_replica == layout.ipus);
  CHECK(t.uniform_replicas_per_instance == layout.uniform);
  CHECK(t.popdist_env_set == layout.env_set);
  CHECK(t.ipus_per_replica_set == (env.count("POPDIST_NUM_IPUS_PER_REPLICA") == 1));
  for (const char* key : kProvenanceKeys) {
    INFO("provenance of " << key);
    CHECK(t.provenance.count(key) == 1);
  }
  for (const auto& [key, source] : layout.provenance) {
    INFO("provenance of " << key);
    CHECK(t.provenance.count(key) == 1);
    if (t.provenance.count(key) == 1) CHECK(t.provenance.at(key) == source);
  }
  REQUIRE(t.warnings.size() == layout.warnings.size());
  for (std::size_t i = 0; i < layout.warnings.size(); ++i) {
    INFO("warning " << i << ": " << t.warnings[i]);
    CHECK(t.warnings[i].find(layout.warnings[i]) != std::string::npos);
  }
  // Detection is a function of the environment: the same lookup gives an equal value.
  CHECK(detect(lookup_in(env)) == t);
}

std::vector<Layout> captured_layouts() {
  std::vector<Layout> rows;
  const std::map<std::string, std::string> ompi_provenance = {{"launcher", "OMPI_COMM_WORLD_SIZE"},
                                                              {"instance_index", "OMPI_COMM_WORLD_RANK"},
                                                              {"num_instances", "OMPI_COMM_WORLD_SIZE"},
                                                              {"local_instance_index", "OMPI_COMM_WORLD_LOCAL_RANK"},
                                                              {"num_local_instances", "OMPI_COMM_WORLD_LOCAL_SIZE"},
                                                              {"host_index", "default"},
                                                              {"num_total_replicas", "derived"},
                                                              {"replica_index_offset", "derived"}};
  const std::map<std::string, std::string> hydra_provenance = {{"launcher", "PMI_SIZE"},
                                                               {"instance_index", "PMI_RANK"},
                                                               {"num_instances", "PMI_SIZE"},
                                                               {"local_instance_index", "MPI_LOCALRANKID"},
                                                               {"num_local_instances", "MPI_LOCALNRANKS"}};
  const std::map<std::string, std::string> slurm_provenance = {{"launcher", "SLURM_STEP_ID"},
                                                               {"instance_index", "SLURM_PROCID"},
                                                               {"num_instances", "SLURM_STEP_NUM_TASKS"},
                                                               {"local_instance_index", "SLURM_LOCALID"},
                                                               {"num_local_instances", "SLURM_STEP_TASKS_PER_NODE"},
                                                               {"host_index", "SLURM_NODEID"}};
  // mpirun -np 3 on one host.
  for (int r = 0; r < 3; ++r) {
    auto row = launched("captured ompi rank " + std::to_string(r), "ompi.rank" + std::to_string(r), {},
                        Launcher::OpenMpi, r, 3, r, 3, std::nullopt);
    row.provenance = ompi_provenance;
    rows.push_back(row);
  }
  // mpirun over fake hosts hostA:3,hostB:1; and the same with hydra. No node index from either.
  for (int r = 0; r < 4; ++r) {
    auto row = launched("captured ompi_fake rank " + std::to_string(r), "ompi_fake.rank" + std::to_string(r), {},
                        Launcher::OpenMpi, r, 4, r < 3 ? r : 0, r < 3 ? 3 : 1, std::nullopt);
    row.provenance = ompi_provenance;
    rows.push_back(row);
    auto hydra = launched("captured hydra_fake rank " + std::to_string(r), "hydra_fake.rank" + std::to_string(r), {},
                          Launcher::Mpich, r, 4, r < 3 ? r : 0, r < 3 ? 3 : 1, std::nullopt);
    hydra.provenance = hydra_provenance;
    rows.push_back(hydra);
  }
  for (int r = 0; r < 3; ++r) {
    auto row = launched("captured hydra rank " + std::to_string(r), "hydra.rank" + std::to_string(r), {},
                        Launcher::Mpich, r, 3, r, 3, std::nullopt);
    row.provenance = hydra_provenance;
    rows.push_back(row);
  }
  // srun -N2 -n4 (3,1), --ntasks-per-node=2 (2(x2)) and --mpi=pmix (PMIX_RANK + SLURM_*).
  for (int r = 0; r < 4; ++r) {
    auto row = launched("captured srun_N2n4 rank " + std::to_string(r), "srun_N2n4.rank" + std::to_string(r), {},
                        Launcher::Slurm, r, 4, r < 3 ? r : 0, r < 3 ? 3 : 1, r < 3 ? 0 : 1);
    row.provenance = slurm_provenance;
    rows.push_back(row);
    auto pmix = launched("captured srun_pmix rank " + std::to_string(r), "srun_pmix.rank" + std::to_string(r), {},
                         Launcher::Slurm, r, 4, r < 3 ? r : 0, r < 3 ? 3 : 1, r < 3 ? 0 : 1);
    pmix.provenance = slurm_provenance;
    rows.push_back(pmix);
    auto tpn2 = launched("captured srun_N2n4_tpn2 rank " + std::to_string(r),
                         "srun_N2n4_tpn2.rank" + std::to_string(r), {}, Launcher::Slurm, r, 4, r % 2, 2, r / 2);
    tpn2.provenance = slurm_provenance;
    rows.push_back(tpn2);
  }
  // mpirun -np 4 inside salloc: Open MPI wins; SLURM_* describe mpirun's daemon step.
  const int daemon_rank[] = {0, 0, 0, 1};
  for (int r = 0; r < 4; ++r) {
    auto row = launched("captured salloc_mpirun rank " + std::to_string(r), "salloc_mpirun.rank" + std::to_string(r),
                        {}, Launcher::OpenMpi, r, 4, r < 3 ? r : 0, r < 3 ? 3 : 1, std::nullopt);
    row.provenance = ompi_provenance;
    row.warnings = {"slurm rank " + std::to_string(daemon_rank[r]) + " of 2 (SLURM_PROCID=" +
                    std::to_string(daemon_rank[r]) + ", SLURM_STEP_NUM_TASKS=2) disagrees with openmpi instance " +
                    std::to_string(r) + " of 4; using openmpi, which has priority"};
    rows.push_back(row);
  }
  // salloc's shell and sbatch's batch script: allocations, not launches (no SLURM_STEP_ID), even
  // though the batch script has SLURM_PROCID=0 and SLURM_NTASKS=4.
  auto salloc = unlaunched("captured salloc shell is not a launch", {});
  salloc.from_dump = "salloc_shell";
  salloc.warnings = {"SLURM_JOB_ID=4 is set but SLURM_STEP_ID is not"};
  rows.push_back(salloc);
  auto sbatch = unlaunched("captured sbatch script is not a launch", {});
  sbatch.from_dump = "sbatch_script";
  sbatch.warnings = {"SLURM_JOB_ID=6 is set but SLURM_STEP_ID is not"};
  rows.push_back(sbatch);
  for (int r = 0; r < 2; ++r) {
    // srun -n2 in the batch job; srun --preserve-env -n2 in salloc -n4 (SLURM_NTASKS=4 is stale).
    auto row = launched("captured sbatch_srun_n2 rank " + std::to_string(r), "sbatch_srun_n2.rank" + std::to_string(r),
                        {}, Launcher::Slurm, r, 2, 0, 1, r);
    row.provenance = slurm_provenance;
    rows.push_back(row);
    auto preserve = launched("captured srun --preserve-env rank " + std::to_string(r) + " ignores stale SLURM_NTASKS",
                             "salloc_srun_preserve.rank" + std::to_string(r), {}, Launcher::Slurm, r, 2, 0, 1, r);
    preserve.provenance = slurm_provenance;
    rows.push_back(preserve);
  }
  return rows;
}

std::vector<Layout> synthetic_layouts() {
  std::vector<Layout> rows;
  // ---- no launcher --------------------------------------------------------------------------
  {
    auto row = unlaunched("singleton: empty environment", {});
    row.provenance = {{"launcher", "default"}, {"instance_index", "default"}, {"num_instances", "default"},
                      {"host_index", "default"}, {"num_local_replicas", "default"}, {"ipus_per_replica", "default"}};
    rows.push_back(row);
  }
  rows.push_back(unlaunched("singleton: unrelated variables", {{"PATH", "/usr/bin"}, {"HOME", "/root"},
                                                               {"RANK_OF_SOMETHING", "3"}, {"SIZE", "9"}}));
  {
    // Without TORCHELASTIC_RUN_ID the same variables are the PyTorch environment (Kubeflow, ...).
    auto row = launched("pytorch: RANK and WORLD_SIZE without TORCHELASTIC_RUN_ID", "",
                        {{"RANK", "1"}, {"WORLD_SIZE", "2"}}, Launcher::PyTorch, 1, 2, 0, 1, std::nullopt);
    row.provenance = {{"launcher", "WORLD_SIZE"}, {"instance_index", "RANK"}, {"num_instances", "WORLD_SIZE"}};
    rows.push_back(row);
  }
  // OMPI_COMM_WORLD_NODE_RANK is a rank among a node's processes that mpirun only sets beside
  // OMPI_COMM_WORLD_RANK/SIZE; alone it states nothing popdist reads.
  rows.push_back(unlaunched("singleton: OMPI_COMM_WORLD_NODE_RANK alone is no launch",
                            {{"OMPI_COMM_WORLD_NODE_RANK", "1"}}));
  {
    auto row = unlaunched("singleton: PMIX_RANK 0 alone warns", {{"PMIX_RANK", "0"}});
    row.warnings = {"PMIX_RANK=0 is set but forms no launch (PMIx sets no size beside it"};
    rows.push_back(row);
  }
  {
    auto row = unlaunched("singleton: POPDIST_NUM_IPUS_PER_REPLICA alone", {{"POPDIST_NUM_IPUS_PER_REPLICA", "4"}});
    row.ipus = 4;
    row.env_set = true;
    row.provenance = {{"launcher", "default"}, {"ipus_per_replica", "POPDIST_NUM_IPUS_PER_REPLICA"}};
    rows.push_back(row);
  }
  {
    auto row = unlaunched("singleton: POPDIST_LOCAL_INSTANCE_INDEX 0 alone", {{"POPDIST_LOCAL_INSTANCE_INDEX", "0"}});
    row.env_set = true;
    row.provenance = {{"local_instance_index", "POPDIST_LOCAL_INSTANCE_INDEX"}, {"num_local_instances", "derived"}};
    rows.push_back(row);
  }
  {
    auto row = launched("popdist: PopRun variables without a launcher",
                        "", {{"POPDIST_NUM_TOTAL_REPLICAS", "8"}, {"POPDIST_NUM_LOCAL_REPLICAS", "2"},
                             {"POPDIST_REPLICA_INDEX_OFFSET", "4"}},
                        Launcher::PopDist, 2, 4, 0, 1, std::nullopt);
    row.local_replicas = 2;
    row.total = 8;
    row.offset = 4;
    row.provenance = {{"launcher", "POPDIST_NUM_TOTAL_REPLICAS"}, {"instance_index", "derived"},
                      {"num_instances", "derived"}, {"num_total_replicas", "POPDIST_NUM_TOTAL_REPLICAS"},
                      {"replica_index_offset", "POPDIST_REPLICA_INDEX_OFFSET"}, {"host_index", "default"}};
    rows.push_back(row);
  }
  {
    auto row = launched("popdist: every PopRun variable without a launcher", "",
                        {{"POPDIST_NUM_TOTAL_REPLICAS", "8"}, {"POPDIST_NUM_LOCAL_REPLICAS", "2"},
                         {"POPDIST_REPLICA_INDEX_OFFSET", "6"}, {"POPDIST_NUM_IPUS_PER_REPLICA", "4"},
                         {"POPDIST_UNIFORM_REPLICAS_PER_INSTANCE", "1"}, {"POPDIST_LOCAL_INSTANCE_INDEX", "1"}},
                        Launcher::PopDist, 3, 4, 1, 2, std::nullopt);
    row.local_replicas = 2;
    row.total = 8;
    row.offset = 6;
    row.ipus = 4;
    row.provenance = {{"uniform_replicas_per_instance", "POPDIST_UNIFORM_REPLICAS_PER_INSTANCE"},
                      {"ipus_per_replica", "POPDIST_NUM_IPUS_PER_REPLICA"},
                      {"local_instance_index", "POPDIST_LOCAL_INSTANCE_INDEX"},
                      {"num_local_instances", "derived"}};
    rows.push_back(row);
  }
  {
    auto row = launched("popdist: local replicas only", "", {{"POPDIST_NUM_LOCAL_REPLICAS", "4"}}, Launcher::PopDist,
                        0, 1, 0, 1, std::nullopt);
    row.local_replicas = 4;
    row.total = 4;
    row.provenance = {{"launcher", "POPDIST_NUM_LOCAL_REPLICAS"}, {"num_total_replicas", "derived"}};
    rows.push_back(row);
  }
  {
    auto row = launched("popdist: total replicas only", "", {{"POPDIST_NUM_TOTAL_REPLICAS", "4"}}, Launcher::PopDist,
                        0, 4, 0, 1, std::nullopt);
    row.offset = 0;
    row.provenance = {{"replica_index_offset", "default"}, {"instance_index", "default"}};
    rows.push_back(row);
  }
  {
    auto row = launched("popdist: last instance of four", "",
                        {{"POPDIST_NUM_TOTAL_REPLICAS", "4"}, {"POPDIST_REPLICA_INDEX_OFFSET", "3"}},
                        Launcher::PopDist, 3, 4, 0, 1, std::nullopt);
    rows.push_back(row);
  }
  {
    auto row = launched("popdist: POPDIST_UNIFORM_REPLICAS_PER_INSTANCE alone", "",
                        {{"POPDIST_UNIFORM_REPLICAS_PER_INSTANCE", "1"}}, Launcher::PopDist, 0, 1, 0, 1,
                        std::nullopt);
    row.provenance = {{"launcher", "POPDIST_UNIFORM_REPLICAS_PER_INSTANCE"}};
    rows.push_back(row);
  }
  {
    auto row = launched("popdist: PMIX_RANK with PopRun variables warns", "",
                        {{"PMIX_RANK", "1"}, {"POPDIST_NUM_TOTAL_REPLICAS", "2"},
                         {"POPDIST_REPLICA_INDEX_OFFSET", "1"}},
                        Launcher::PopDist, 1, 2, 0, 1, std::nullopt);
    row.warnings = {"PMIX_RANK=1 is set but forms no launch (PMIx sets no size beside it"};
    rows.push_back(row);
  }
  // ---- Open MPI -----------------------------------------------------------------------------
  {
    auto row = launched("openmpi: PopRun-style uniform job", "",
                        {{"OMPI_COMM_WORLD_RANK", "5"}, {"OMPI_COMM_WORLD_SIZE", "8"},
                         {"OMPI_COMM_WORLD_LOCAL_RANK", "1"}, {"OMPI_COMM_WORLD_LOCAL_SIZE", "4"},
                         {"POPDIST_NUM_TOTAL_REPLICAS", "16"}, {"POPDIST_NUM_LOCAL_REPLICAS", "2"},
                         {"POPDIST_REPLICA_INDEX_OFFSET", "10"}, {"POPDIST_NUM_IPUS_PER_REPLICA", "2"},
                         {"POPDIST_UNIFORM_REPLICAS_PER_INSTANCE", "1"}, {"POPDIST_LOCAL_INSTANCE_INDEX", "1"}},
                        Launcher::OpenMpi, 5, 8, 1, 4, std::nullopt);
    row.local_replicas = 2;
    row.total = 16;
    row.offset = 10;
    row.ipus = 2;
    row.provenance = {{"launcher", "OMPI_COMM_WORLD_SIZE"}, {"instance_index", "OMPI_COMM_WORLD_RANK"},
                      {"num_local_instances", "OMPI_COMM_WORLD_LOCAL_SIZE"},
                      {"local_instance_index", "POPDIST_LOCAL_INSTANCE_INDEX"},
                      {"num_total_replicas", "POPDIST_NUM_TOTAL_REPLICAS"},
                      {"replica_index_offset", "POPDIST_REPLICA_INDEX_OFFSET"}};
    rows.push_back(row);
  }
  rows.push_back(launched("openmpi: without local variables", "",
                          {{"OMPI_COMM_WORLD_RANK", "1"}, {"OMPI_COMM_WORLD_SIZE", "2"}}, Launcher::OpenMpi, 1, 2, 0,
                          1, std::nullopt));
  {
    auto row = launched("openmpi: POPDIST_LOCAL_INSTANCE_INDEX overrides the local rank", "ompi.rank0",
                        {{"POPDIST_LOCAL_INSTANCE_INDEX", "2"}}, Launcher::OpenMpi, 0, 3, 2, 3, std::nullopt);
    row.provenance = {{"local_instance_index", "POPDIST_LOCAL_INSTANCE_INDEX"}};
    rows.push_back(row);
  }
  {
    auto row = launched("openmpi: local replicas multiply the total", "ompi.rank2",
                        {{"POPDIST_NUM_LOCAL_REPLICAS", "4"}}, Launcher::OpenMpi, 2, 3, 2, 3, std::nullopt);
    row.local_replicas = 4;
    row.total = 12;
    row.offset = 8;
    row.provenance = {{"num_total_replicas", "derived"}, {"replica_index_offset", "derived"}};
    rows.push_back(row);
  }
  {
    // Instances 0, 1, 2 drive 1, 3 and 2 replicas: [0,1), [1,4), [4,6).
    auto row = launched("openmpi: non-uniform replicas", "ompi.rank1",
                        {{"POPDIST_NUM_TOTAL_REPLICAS", "6"}, {"POPDIST_NUM_LOCAL_REPLICAS", "3"},
                         {"POPDIST_REPLICA_INDEX_OFFSET", "1"}},
                        Launcher::OpenMpi, 1, 3, 1, 3, std::nullopt);
    row.local_replicas = 3;
    row.total = 6;
    row.offset = 1;
    row.uniform = false;
    row.provenance = {{"uniform_replicas_per_instance", "derived"}};
    rows.push_back(row);
  }
  {
    // Instances 0, 1, 2 drive 1, 2 and 3 replicas: instance 1's 2 x 3 == 6 looks uniform, so
    // PopRun must say otherwise.
    auto row = launched("openmpi: non-uniform replicas where local x instances happens to equal total", "ompi.rank1",
                        {{"POPDIST_NUM_TOTAL_REPLICAS", "6"}, {"POPDIST_NUM_LOCAL_REPLICAS", "2"},
                         {"POPDIST_REPLICA_INDEX_OFFSET", "1"}, {"POPDIST_UNIFORM_REPLICAS_PER_INSTANCE", "0"}},
                        Launcher::OpenMpi, 1, 3, 1, 3, std::nullopt);
    row.local_replicas = 2;
    row.total = 6;
    row.offset = 1;
    row.uniform = false;
    rows.push_back(row);
  }
  {
    auto row = launched("openmpi: non-uniform replicas said by the variable", "",
                        {{"OMPI_COMM_WORLD_RANK", "0"}, {"OMPI_COMM_WORLD_SIZE", "2"},
                         {"POPDIST_NUM_TOTAL_REPLICAS", "4"}, {"POPDIST_NUM_LOCAL_REPLICAS", "2"},
                         {"POPDIST_REPLICA_INDEX_OFFSET", "0"}, {"POPDIST_UNIFORM_REPLICAS_PER_INSTANCE", "0"}},
                        Launcher::OpenMpi, 0, 2, 0, 1, std::nullopt);
    row.local_replicas = 2;
    row.total = 4;
    row.uniform = false;
    row.provenance = {{"uniform_replicas_per_instance", "POPDIST_UNIFORM_REPLICAS_PER_INSTANCE"}};
    rows.push_back(row);
  }
  {
    auto row = launched("openmpi: agreeing MPICH variables give no warning", "",
                        {{"OMPI_COMM_WORLD_RANK", "1"}, {"OMPI_COMM_WORLD_SIZE", "2"}, {"PMI_RANK", "1"},
                         {"PMI_SIZE", "2"}},
                        Launcher::OpenMpi, 1, 2, 0, 1, std::nullopt);
    rows.push_back(row);
  }
  {
    auto row = launched("openmpi: disagreeing MPICH variables warn", "",
                        {{"OMPI_COMM_WORLD_RANK", "1"}, {"OMPI_COMM_WORLD_SIZE", "2"}, {"PMI_RANK", "0"},
                         {"PMI_SIZE", "1"}},
                        Launcher::OpenMpi, 1, 2, 0, 1, std::nullopt);
    row.warnings = {"mpich rank 0 of 1 (PMI_RANK=0, PMI_SIZE=1) disagrees with openmpi instance 1 of 2"};
    rows.push_back(row);
  }
  {
    auto row = launched("openmpi: a malformed Slurm step is ignored with a warning", "ompi.rank1",
                        {{"SLURM_STEP_ID", "0"}, {"SLURM_PROCID", "abc"}, {"SLURM_STEP_NUM_TASKS", "2"}},
                        Launcher::OpenMpi, 1, 3, 1, 3, std::nullopt);
    row.warnings = {"ignoring malformed slurm variables (slurm: SLURM_PROCID='abc' is not a decimal number"};
    rows.push_back(row);
  }
  // ---- MPICH Hydra / Intel MPI --------------------------------------------------------------
  rows.push_back(launched("mpich: without MPI_LOCALRANKID", "", {{"PMI_RANK", "2"}, {"PMI_SIZE", "4"}},
                          Launcher::Mpich, 2, 4, 0, 1, std::nullopt));
  {
    auto row = launched("mpich: srun --mpi=pmi2 sets PMI_RANK inside the step, agreeing", "srun_N2n4.rank3",
                        {{"PMI_RANK", "3"}, {"PMI_SIZE", "4"}, {"PMI_FD", "5"}}, Launcher::Mpich, 3, 4, 0, 1,
                        std::nullopt);
    row.provenance = {{"launcher", "PMI_SIZE"}, {"local_instance_index", "default"}};
    rows.push_back(row);
  }
  {
    auto row = launched("mpich: PopRun variables over hydra", "hydra_fake.rank3",
                        {{"POPDIST_NUM_TOTAL_REPLICAS", "8"}, {"POPDIST_NUM_LOCAL_REPLICAS", "2"},
                         {"POPDIST_REPLICA_INDEX_OFFSET", "6"}},
                        Launcher::Mpich, 3, 4, 0, 1, std::nullopt);
    row.local_replicas = 2;
    row.total = 8;
    row.offset = 6;
    rows.push_back(row);
  }
  // ---- Cray PALS ----------------------------------------------------------------------------
  {
    auto row = launched("pals: every PALS variable", "",
                        {{"PMI_RANK", "5"}, {"PMI_SIZE", "8"}, {"PMI_LOCAL_RANK", "1"}, {"PMI_LOCAL_SIZE", "4"},
                         {"PALS_RANKID", "5"}, {"PALS_LOCAL_RANKID", "1"}, {"PALS_NODEID", "1"},
                         {"PALS_APID", "a1b2c3"}},
                        Launcher::Pals, 5, 8, 1, 4, 1);
    row.provenance = {{"launcher", "PALS_RANKID"}, {"instance_index", "PMI_RANK"}, {"num_instances", "PMI_SIZE"},
                      {"local_instance_index", "PMI_LOCAL_RANK"}, {"num_local_instances", "PMI_LOCAL_SIZE"},
                      {"host_index", "PALS_NODEID"}};
    rows.push_back(row);
  }
  {
    auto row = launched("pals: PMI_LOCAL_RANK with PMI_RANK and no PALS variable", "",
                        {{"PMI_RANK", "1"}, {"PMI_SIZE", "2"}, {"PMI_LOCAL_RANK", "1"}, {"PMI_LOCAL_SIZE", "2"}},
                        Launcher::Pals, 1, 2, 1, 2, std::nullopt);
    row.provenance = {{"launcher", "PMI_LOCAL_RANK"}, {"host_index", "default"}};
    rows.push_back(row);
  }
  {
    auto row = launched("pals: PALS_RANKID and PALS_LOCAL_RANKID without PMI_RANK", "",
                        {{"PALS_RANKID", "3"}, {"PMI_SIZE", "4"}, {"PALS_LOCAL_RANKID", "0"}, {"PMI_LOCAL_SIZE", "1"}},
                        Launcher::Pals, 3, 4, 0, 1, std::nullopt);
    row.provenance = {{"instance_index", "PALS_RANKID"}, {"local_instance_index", "PALS_LOCAL_RANKID"}};
    rows.push_back(row);
  }
  {
    auto row = launched("pals: forcing mpich reads only the PMI pair and agrees", "",
                        {{"POPDIST_LAUNCHER", "mpich"}, {"PMI_RANK", "1"}, {"PMI_SIZE", "2"}, {"PALS_NODEID", "1"},
                         {"PMI_LOCAL_RANK", "0"}, {"PMI_LOCAL_SIZE", "1"}},
                        Launcher::Mpich, 1, 2, 0, 1, std::nullopt);
    row.provenance = {{"launcher", "POPDIST_LAUNCHER"}, {"local_instance_index", "default"}};
    rows.push_back(row);
  }
  // ---- MVAPICH2 -----------------------------------------------------------------------------
  {
    auto row = launched("mvapich2: world variables", "",
                        {{"MV2_COMM_WORLD_RANK", "3"}, {"MV2_COMM_WORLD_SIZE", "4"},
                         {"MV2_COMM_WORLD_LOCAL_RANK", "1"}, {"MV2_COMM_WORLD_LOCAL_SIZE", "2"}},
                        Launcher::Mvapich2, 3, 4, 1, 2, std::nullopt);
    row.provenance = {{"launcher", "MV2_COMM_WORLD_SIZE"}, {"instance_index", "MV2_COMM_WORLD_RANK"},
                      {"num_local_instances", "MV2_COMM_WORLD_LOCAL_SIZE"}};
    rows.push_back(row);
  }
  rows.push_back(launched("mvapich2: with agreeing PMI variables", "",
                          {{"MV2_COMM_WORLD_RANK", "0"}, {"MV2_COMM_WORLD_SIZE", "2"}, {"PMI_RANK", "0"},
                           {"PMI_SIZE", "2"}},
                          Launcher::Mvapich2, 0, 2, 0, 1, std::nullopt));
  // ---- torchrun -----------------------------------------------------------------------------
  const EnvMap torchrun = {{"TORCHELASTIC_RUN_ID", "job42"}, {"RANK", "5"}, {"WORLD_SIZE", "8"},
                           {"LOCAL_RANK", "1"}, {"LOCAL_WORLD_SIZE", "4"}, {"GROUP_RANK", "1"},
                           {"GROUP_WORLD_SIZE", "2"}, {"ROLE_RANK", "5"}, {"ROLE_WORLD_SIZE", "8"},
                           {"ROLE_NAME", "default"}, {"MASTER_ADDR", "node0"}, {"MASTER_PORT", "29500"}};
  {
    auto row = launched("torchrun: every variable", "", torchrun, Launcher::Torchrun, 5, 8, 1, 4, 1);
    row.provenance = {{"launcher", "TORCHELASTIC_RUN_ID"}, {"instance_index", "RANK"}, {"num_instances", "WORLD_SIZE"},
                      {"local_instance_index", "LOCAL_RANK"}, {"num_local_instances", "LOCAL_WORLD_SIZE"},
                      {"host_index", "GROUP_RANK"}};
    rows.push_back(row);
  }
  rows.push_back(launched("torchrun: without GROUP_RANK", "",
                          {{"TORCHELASTIC_RUN_ID", "x"}, {"RANK", "0"}, {"WORLD_SIZE", "2"}, {"LOCAL_RANK", "0"},
                           {"LOCAL_WORLD_SIZE", "2"}},
                          Launcher::Torchrun, 0, 2, 0, 2, std::nullopt));
  {
    // srun torchrun: the Slurm step has one task per node; torchrun's workers win.
    auto row = launched("torchrun: inside a Slurm step", "sbatch_srun_n2.rank1", torchrun, Launcher::Torchrun, 5, 8,
                        1, 4, 1);
    row.warnings = {"slurm rank 1 of 2 (SLURM_PROCID=1, SLURM_STEP_NUM_TASKS=2) disagrees with torchrun instance 5 "
                    "of 8; using torchrun, which has priority"};
    rows.push_back(row);
  }
  {
    auto row = launched("torchrun: under mpirun too", "ompi.rank2", torchrun, Launcher::Torchrun, 5, 8, 1, 4, 1);
    row.warnings = {"openmpi rank 2 of 3"};
    rows.push_back(row);
  }
  // popdist run's own run id (for Lightning) is no torchrun: its instances are Open MPI's, and the
  // torchrun variables it exports agree with them.
  rows.push_back(launched("torchrun: popdist run's run id is Open MPI's", "ompi.rank2",
                          {{"TORCHELASTIC_RUN_ID", "popdist-run-29500"}, {"RANK", "2"}, {"WORLD_SIZE", "3"},
                           {"LOCAL_RANK", "2"}, {"LOCAL_WORLD_SIZE", "3"}},
                          Launcher::OpenMpi, 2, 3, 2, 3, std::nullopt));
  rows.push_back(launched("torchrun: a run id that only contains popdist-run- is torchrun's", "",
                          {{"TORCHELASTIC_RUN_ID", "my-popdist-run-1"}, {"RANK", "0"}, {"WORLD_SIZE", "2"},
                           {"LOCAL_RANK", "0"}, {"LOCAL_WORLD_SIZE", "2"}},
                          Launcher::Torchrun, 0, 2, 0, 2, std::nullopt));
  // ---- Slurm steps --------------------------------------------------------------------------
  const EnvMap step = {{"SLURM_JOB_ID", "9"}, {"SLURM_STEP_ID", "0"}, {"SLURM_STEP_NUM_TASKS", "7"},
                       {"SLURM_STEP_TASKS_PER_NODE", "2(x3),1"}, {"SLURM_NTASKS", "64"}, {"SLURM_STEP_NUM_NODES", "4"}};
  rows.push_back(launched("slurm: 2(x3)+1 last node", "",
                          with(step, {{"SLURM_PROCID", "6"}, {"SLURM_LOCALID", "0"}, {"SLURM_NODEID", "3"}}),
                          Launcher::Slurm, 6, 7, 0, 1, 3));
  rows.push_back(launched("slurm: 2(x3)+1 second node", "",
                          with(step, {{"SLURM_PROCID", "3"}, {"SLURM_LOCALID", "1"}, {"SLURM_NODEID", "1"}}),
                          Launcher::Slurm, 3, 7, 1, 2, 1));
  {
    auto row = launched("slurm: a step without local variables", "",
                        {{"SLURM_STEP_ID", "3"}, {"SLURM_PROCID", "1"}, {"SLURM_STEP_NUM_TASKS", "2"}},
                        Launcher::Slurm, 1, 2, 0, 1, std::nullopt);
    row.provenance = {{"local_instance_index", "default"}, {"host_index", "default"}};
    rows.push_back(row);
  }
  rows.push_back(launched("slurm: SLURM_NODEID without the tasks list", "",
                          {{"SLURM_STEP_ID", "3"}, {"SLURM_PROCID", "1"}, {"SLURM_STEP_NUM_TASKS", "2"},
                           {"SLURM_NODEID", "1"}},
                          Launcher::Slurm, 1, 2, 0, 1, 1));
  {
    auto row = launched("slurm: PopRun variables over srun", "srun_N2n4_tpn2.rank3",
                        {{"POPDIST_NUM_LOCAL_REPLICAS", "2"}, {"POPDIST_NUM_IPUS_PER_REPLICA", "2"}}, Launcher::Slurm,
                        3, 4, 1, 2, 1);
    row.local_replicas = 2;
    row.total = 8;
    row.offset = 6;
    row.ipus = 2;
    rows.push_back(row);
  }
  {
    auto row = unlaunched("slurm: job variables of a batch script without a step",
                          {{"SLURM_JOB_ID", "6"}, {"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "4"}, {"SLURM_LOCALID", "0"},
                           {"SLURM_NODEID", "0"}});
    row.warnings = {"SLURM_JOB_ID=6 is set but SLURM_STEP_ID is not"};
    rows.push_back(row);
  }
  // ---- POPDIST_LAUNCHER overrides -----------------------------------------------------------
  {
    auto row = launched("override: slurm inside salloc_mpirun", "salloc_mpirun.rank2", {{"POPDIST_LAUNCHER", "slurm"}},
                        Launcher::Slurm, 0, 2, 0, 1, 0);
    row.provenance = {{"launcher", "POPDIST_LAUNCHER"}, {"instance_index", "SLURM_PROCID"}};
    row.warnings = {"openmpi rank 2 of 4 (OMPI_COMM_WORLD_RANK=2, OMPI_COMM_WORLD_SIZE=4) disagrees with slurm "
                    "instance 0 of 2; using slurm, forced by POPDIST_LAUNCHER"};
    rows.push_back(row);
  }
  {
    auto row = launched("override: openmpi named explicitly", "salloc_mpirun.rank3", {{"POPDIST_LAUNCHER", "openmpi"}},
                        Launcher::OpenMpi, 3, 4, 0, 1, std::nullopt);
    row.provenance = {{"launcher", "POPDIST_LAUNCHER"}, {"instance_index", "OMPI_COMM_WORLD_RANK"}};
    row.warnings = {"slurm rank 1 of 2"};
    rows.push_back(row);
  }
  {
    auto row = launched("override: mpich on a hydra environment", "hydra.rank2", {{"POPDIST_LAUNCHER", "mpich"}},
                        Launcher::Mpich, 2, 3, 2, 3, std::nullopt);
    row.provenance = {{"launcher", "POPDIST_LAUNCHER"}};
    rows.push_back(row);
  }
  {
    auto row = unlaunched("override: singleton under mpirun", {{"POPDIST_LAUNCHER", "singleton"}});
    row.from_dump = "ompi.rank1";
    row.provenance = {{"launcher", "POPDIST_LAUNCHER"}, {"instance_index", "default"}};
    row.warnings = {"openmpi rank 1 of 3 (OMPI_COMM_WORLD_RANK=1, OMPI_COMM_WORLD_SIZE=3) disagrees with singleton "
                    "instance 0 of 1; using singleton, forced by POPDIST_LAUNCHER"};
    rows.push_back(row);
  }
  {
    auto row = unlaunched("override: singleton alone", {{"POPDIST_LAUNCHER", "singleton"}});
    row.provenance = {{"launcher", "POPDIST_LAUNCHER"}};
    rows.push_back(row);
  }
  {
    auto row = launched("override: popdist alone", "", {{"POPDIST_LAUNCHER", "popdist"}}, Launcher::PopDist, 0, 1, 0,
                        1, std::nullopt);
    row.provenance = {{"launcher", "POPDIST_LAUNCHER"}};
    rows.push_back(row);
  }
  {
    auto row = launched("override: popdist under mpirun agreeing gives no warning", "ompi.rank1",
                        {{"POPDIST_LAUNCHER", "popdist"}, {"POPDIST_NUM_TOTAL_REPLICAS", "3"},
                         {"POPDIST_REPLICA_INDEX_OFFSET", "1"}},
                        Launcher::PopDist, 1, 3, 0, 1, std::nullopt);
    rows.push_back(row);
  }
  {
    auto row = launched("override: popdist under mpirun disagreeing warns", "ompi.rank1",
                        {{"POPDIST_LAUNCHER", "popdist"}}, Launcher::PopDist, 0, 1, 0, 1, std::nullopt);
    row.warnings = {"openmpi rank 1 of 3 (OMPI_COMM_WORLD_RANK=1, OMPI_COMM_WORLD_SIZE=3) disagrees with popdist "
                    "instance 0 of 1; using popdist, forced by POPDIST_LAUNCHER"};
    rows.push_back(row);
  }
  {
    auto row = launched("override: torchrun under mpirun", "ompi.rank0",
                        with(torchrun, {{"POPDIST_LAUNCHER", "torchrun"}}), Launcher::Torchrun, 5, 8, 1, 4, 1);
    row.warnings = {"openmpi rank 0 of 3"};
    rows.push_back(row);
  }
  {
    auto row = launched("override: pals on a PMI_LOCAL_RANK environment", "",
                        {{"POPDIST_LAUNCHER", "pals"}, {"PMI_RANK", "0"}, {"PMI_SIZE", "1"}, {"PMI_LOCAL_RANK", "0"},
                         {"PMI_LOCAL_SIZE", "1"}},
                        Launcher::Pals, 0, 1, 0, 1, std::nullopt);
    rows.push_back(row);
  }
  {
    auto row = launched("override: mvapich2", "",
                        {{"POPDIST_LAUNCHER", "mvapich2"}, {"MV2_COMM_WORLD_RANK", "1"}, {"MV2_COMM_WORLD_SIZE", "2"}},
                        Launcher::Mvapich2, 1, 2, 0, 1, std::nullopt);
    rows.push_back(row);
  }
  return rows;
}


/// The families added after the first six, each from real environments: captured here
/// (torch.distributed.launch), or taken from another project's tests or documentation, as the
/// comment at the top of each envdumps file names.
std::vector<Layout> family_layouts() {
  std::vector<Layout> rows;
  // ---- python -m torch.distributed.launch (torch 2.13, captured): elastic, so torchrun -------
  for (int r = 0; r < 2; ++r) {
    auto row = launched("torch.distributed.launch captured rank " + std::to_string(r),
                        "torch_launch.rank" + std::to_string(r), {}, Launcher::Torchrun, r, 2, r, 2, 0);
    row.provenance = {{"launcher", "TORCHELASTIC_RUN_ID"}, {"host_index", "GROUP_RANK"}};
    rows.push_back(row);
  }
  {
    // What docs/guide/launchers.md recommends for a launcher that leaves TORCHELASTIC_RUN_ID out.
    EnvMap env = dump("torch_launch.rank1");
    env.erase("TORCHELASTIC_RUN_ID");
    auto row = launched("override: torchrun without TORCHELASTIC_RUN_ID reads RANK and WORLD_SIZE", "",
                        with(env, {{"POPDIST_LAUNCHER", "torchrun"}}), Launcher::Torchrun, 1, 2, 1, 2, 0);
    row.provenance = {{"launcher", "POPDIST_LAUNCHER"}, {"instance_index", "RANK"}};
    row.warnings = {"POPDIST_LAUNCHER=torchrun but none of the torchrun launcher's variables is set "
                    "(TORCHELASTIC_RUN_ID); reading its identity anyway: torchrun rank 1 of 2"};
    rows.push_back(row);
    EnvMap unforced = env;
    auto pytorch = launched("pytorch: torch.distributed.launch without TORCHELASTIC_RUN_ID", "", unforced,
                            Launcher::PyTorch, 1, 2, 1, 2, 0);
    pytorch.provenance = {{"host_index", "GROUP_RANK"}, {"num_local_instances", "LOCAL_WORLD_SIZE"}};
    rows.push_back(pytorch);
  }
  {
    auto row = launched("torchrun: GROUP_RANK alone is the host index", "",
                        {{"TORCHELASTIC_RUN_ID", "r"}, {"RANK", "5"}, {"WORLD_SIZE", "8"}, {"LOCAL_RANK", "1"},
                         {"LOCAL_WORLD_SIZE", "4"}, {"GROUP_RANK", "1"}},
                        Launcher::Torchrun, 5, 8, 1, 4, 1);
    row.provenance = {{"host_index", "GROUP_RANK"}};
    rows.push_back(row);
  }
  {
    auto row = launched("override: pals on hydra reads PMI_RANK and PMI_SIZE", "hydra.rank1",
                        {{"POPDIST_LAUNCHER", "pals"}}, Launcher::Pals, 1, 3, 0, 1, std::nullopt);
    row.warnings = {"POPDIST_LAUNCHER=pals but none of the pals launcher's variables is set"};
    rows.push_back(row);
  }
  // ---- the PyTorch environment ---------------------------------------------------------------
  {
    auto row = launched("pytorch: Kubeflow PyTorchJob (Lightning's test)", "kubeflow_lightning", {},
                        Launcher::PyTorch, 1, 20, 0, 1, std::nullopt);
    row.provenance = {{"launcher", "WORLD_SIZE"}, {"instance_index", "RANK"}, {"num_instances", "WORLD_SIZE"},
                      {"local_instance_index", "default"}, {"host_index", "default"}};
    rows.push_back(row);
  }
  {
    auto row = launched("pytorch: DeepSpeed launcher worker", "deepspeed_launch.rank5", {}, Launcher::PyTorch, 5, 8,
                        1, 4, 1);
    row.provenance = {{"num_local_instances", "LOCAL_SIZE"}, {"host_index", "CROSS_RANK"}};
    rows.push_back(row);
  }
  {
    // Legacy torch.distributed.launch --use_env: LOCAL_RANK without a local count.
    auto row = launched("pytorch: LOCAL_RANK without a local count", "",
                        {{"RANK", "3"}, {"WORLD_SIZE", "4"}, {"LOCAL_RANK", "1"}, {"NODE_RANK", "1"}},
                        Launcher::PyTorch, 3, 4, 1, 2, 1);
    row.provenance = {{"local_instance_index", "LOCAL_RANK"}, {"num_local_instances", "derived"},
                      {"host_index", "NODE_RANK"}};
    rows.push_back(row);
  }
  {
    // DeepSpeed's MPI discovery copies the MPI identity into RANK/WORLD_SIZE: the same launch.
    auto row = launched("pytorch below openmpi: a copy of the MPI variables agrees silently", "ompi.rank2",
                        {{"RANK", "2"}, {"WORLD_SIZE", "3"}, {"LOCAL_RANK", "2"}}, Launcher::OpenMpi, 2, 3, 2, 3,
                        std::nullopt);
    rows.push_back(row);
  }
  {
    auto row = launched("pytorch above slurm: a launcher inside one srun task", "sbatch_srun_n2.rank1",
                        {{"RANK", "5"}, {"WORLD_SIZE", "8"}, {"LOCAL_RANK", "1"}, {"LOCAL_SIZE", "4"},
                         {"CROSS_RANK", "1"}, {"CROSS_SIZE", "2"}},
                        Launcher::PyTorch, 5, 8, 1, 4, 1);
    row.warnings = {"slurm rank 1 of 2 (SLURM_PROCID=1, SLURM_STEP_NUM_TASKS=2) disagrees with pytorch instance 5 "
                    "of 8; using pytorch, which has priority"};
    rows.push_back(row);
  }
  // ---- LSF jsrun -----------------------------------------------------------------------------
  {
    auto row = launched("lsf: jsrun (Lightning's test)", "lsf_lightning", {}, Launcher::Lsf, 3, 4, 1, 2,
                        std::nullopt);
    row.provenance = {{"launcher", "JSM_NAMESPACE_SIZE"}, {"instance_index", "JSM_NAMESPACE_RANK"},
                      {"num_instances", "JSM_NAMESPACE_SIZE"}, {"local_instance_index", "JSM_NAMESPACE_LOCAL_RANK"},
                      {"num_local_instances", "derived"}};
    rows.push_back(row);
  }
  {
    // Spectrum MPI sets OMPI_COMM_WORLD_* beside jsrun's variables: openmpi wins and agrees.
    auto row = launched("lsf: jsrun with Spectrum MPI reads as openmpi without a warning",
                        "lsf_jsrun_spectrum.rank5", {}, Launcher::OpenMpi, 5, 8, 1, 4, std::nullopt);
    rows.push_back(row);
    auto forced = launched("override: lsf under Spectrum MPI", "lsf_jsrun_spectrum.rank5",
                           {{"POPDIST_LAUNCHER", "lsf"}}, Launcher::Lsf, 5, 8, 1, 4, std::nullopt);
    forced.provenance = {{"launcher", "POPDIST_LAUNCHER"}, {"num_local_instances", "JSM_NAMESPACE_LOCAL_SIZE"}};
    rows.push_back(forced);
  }
  // ---- Horovod's launcher --------------------------------------------------------------------
  for (int r = 0; r < 4; ++r) {
    auto row = launched("horovod: horovodrun gloo 2x2 rank " + std::to_string(r),
                        "horovod_gloo_2x2.rank" + std::to_string(r), {}, Launcher::Horovod, r, 4, r % 2, 2, r / 2);
    row.provenance = {{"launcher", "HOROVOD_SIZE"}, {"instance_index", "HOROVOD_RANK"},
                      {"num_instances", "HOROVOD_SIZE"}, {"local_instance_index", "HOROVOD_LOCAL_RANK"},
                      {"num_local_instances", "HOROVOD_LOCAL_SIZE"}, {"host_index", "HOROVOD_CROSS_RANK"}};
    rows.push_back(row);
  }
  {
    auto row = launched("horovod: unequal hosts leave the host unknown", "horovod_gloo_3_1.rank1", {},
                        Launcher::Horovod, 1, 4, 1, 3, std::nullopt);
    row.provenance = {{"host_index", "default"}};
    rows.push_back(row);
  }
  {
    auto row = launched("horovod: horovodrun inside an srun task wins over the step", "sbatch_srun_n2.rank0",
                        with(dump("horovod_gloo_2x2.rank3"), {}), Launcher::Horovod, 3, 4, 1, 2, 1);
    row.warnings = {"slurm rank 0 of 2 (SLURM_PROCID=0, SLURM_STEP_NUM_TASKS=2) disagrees with horovod instance 3"};
    rows.push_back(row);
  }
  // ---- never a silent singleton: rank 0 variables without a family warn --------------------
  {
    auto row = unlaunched("singleton: Lightning's rank-0 process warns", {{"NODE_RANK", "0"}, {"LOCAL_RANK", "0"},
                                                                         {"WORLD_SIZE", "4"}});
    row.warnings = {"WORLD_SIZE=4, LOCAL_RANK=0, NODE_RANK=0 are set but form no launch (the PyTorch environment "
                    "needs both RANK and WORLD_SIZE"};
    rows.push_back(row);
  }
  {
    auto row = unlaunched("singleton: sbatch script names its unused step variables", {});
    row.from_dump = "sbatch_script";
    row.warnings = {"SLURM_JOB_ID=6 is set but SLURM_STEP_ID is not: this is a salloc shell or an sbatch script, not "
                    "a process started by srun (SLURM_PROCID=0, SLURM_LOCALID=0, SLURM_NODEID=0 are not used)"};
    rows.push_back(row);
  }
  {
    auto row = unlaunched("override: singleton accepts a stated rank above 0 with a warning",
                          {{"POPDIST_LAUNCHER", "singleton"}});
    row.from_dump = "lightning_ddp_child";
    row.provenance = {{"launcher", "POPDIST_LAUNCHER"}};
    row.warnings = {"WORLD_SIZE=4, LOCAL_RANK=1, NODE_RANK=1 are set but form no launch"};
    rows.push_back(row);
  }
  {
    auto row = unlaunched("override: singleton on ALPS", {{"POPDIST_LAUNCHER", "singleton"}});
    row.from_dump = "alps_aprun.rank3";
    row.warnings = {"ALPS_APP_PE=3 is set but forms no launch (Cray ALPS (aprun) sets no size beside it)"};
    rows.push_back(row);
  }
  return rows;
}

const bool registered = [] {
  for (auto rows : {captured_layouts(), synthetic_layouts(), family_layouts()}) {
    for (const auto& row : rows) {
      register_case("detect.layout " + row.name, "[detect][layout]", [row] { check(row); }, __FILE__, __LINE__);
    }
  }
  return true;
}();

/// Detects every rank of a captured job and checks the job is consistent: instance indices a
/// permutation, replica ranges tiling 0..total-1, local indices a permutation per host.
void check_captured_job(const std::string& prefix, int ranks) {
  std::set<int> indices;
  std::vector<int> owner;
  std::map<std::pair<int, int>, std::set<int>> local_by_host;  // (host key, local count) -> local indices
  for (int r = 0; r < ranks; ++r) {
    const auto t = detect(lookup_in(dump(prefix + ".rank" + std::to_string(r))));
    CHECK(t.num_instances == ranks);
    indices.insert(t.instance_index);
    owner.resize(static_cast<std::size_t>(t.num_total_replicas), -1);
    for (int replica = t.replica_index_offset; replica < t.replica_index_offset + t.num_local_replicas; ++replica) {
      CHECK(owner[static_cast<std::size_t>(replica)] == -1);
      owner[static_cast<std::size_t>(replica)] = t.instance_index;
    }
    // Without a node index, processes with the same local count group by count (the captured
    // layouts put different counts on different hosts).
    const int host_key = t.host_index.value_or(-1 - t.num_local_instances);
    CHECK(local_by_host[{host_key, t.num_local_instances}].insert(t.local_instance_index).second);
  }
  CHECK(static_cast<int>(indices.size()) == ranks);
  CHECK(*indices.begin() == 0);
  CHECK(*indices.rbegin() == ranks - 1);
  for (const int who : owner) CHECK(who >= 0);
  for (const auto& [key, locals] : local_by_host) {
    CHECK(static_cast<int>(locals.size()) == key.second);
  }
}

}  // namespace

TEST_CASE("detect.captured jobs are consistent across their ranks", "[detect][layout]") {
  const std::vector<std::pair<std::string, int>> jobs = {
      {"ompi", 3},          {"ompi_fake", 4},     {"hydra", 3},          {"hydra_fake", 4},
      {"srun_N2n4", 4},     {"srun_N2n4_tpn2", 4}, {"srun_pmix", 4},     {"salloc_mpirun", 4},
      {"sbatch_srun_n2", 2}, {"salloc_srun_preserve", 2}};
  for (const auto& [prefix, ranks] : jobs) {
    INFO(prefix);
    check_captured_job(prefix, ranks);
  }
}

}  // namespace popdist::testing
