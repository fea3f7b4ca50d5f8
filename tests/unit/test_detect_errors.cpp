// detect() on bad environments: one test case per rule of design.md §3.2/§3.3. Each must throw
// EnvironmentError whose message names the variable(s), the value(s) and what was expected.

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "env_support.hpp"
#include "table_case.hpp"

namespace popdist::testing {
namespace {

struct BadInput {
  std::string name;
  std::string from_dump;  ///< a captured environment to start from ("" for none)
  EnvMap env;
  std::vector<std::string> fragments;  ///< all must appear in the message
};

const EnvMap kOmpi = {{"OMPI_COMM_WORLD_RANK", "1"}, {"OMPI_COMM_WORLD_SIZE", "4"},
                      {"OMPI_COMM_WORLD_LOCAL_RANK", "1"}, {"OMPI_COMM_WORLD_LOCAL_SIZE", "2"}};
const EnvMap kTorch = {{"TORCHELASTIC_RUN_ID", "r"}, {"RANK", "1"}, {"WORLD_SIZE", "4"}, {"LOCAL_RANK", "1"},
                       {"LOCAL_WORLD_SIZE", "2"}, {"GROUP_RANK", "0"}, {"GROUP_WORLD_SIZE", "2"}};
const EnvMap kStep = {{"SLURM_STEP_ID", "0"}, {"SLURM_PROCID", "1"}, {"SLURM_STEP_NUM_TASKS", "4"},
                      {"SLURM_LOCALID", "1"}, {"SLURM_NODEID", "0"}, {"SLURM_STEP_TASKS_PER_NODE", "2(x2)"}};

std::vector<BadInput> bad_inputs() {
  const std::string expected_count = "expected a decimal integer >= 1";
  const std::string expected_index = "expected a decimal integer >= 0";
  std::vector<BadInput> rows = {
      // ---- malformed numbers, through the variables that carry them -------------------------
      {"POPDIST_NUM_LOCAL_REPLICAS empty", "", {{"POPDIST_NUM_LOCAL_REPLICAS", ""}},
       {"POPDIST_NUM_LOCAL_REPLICAS=''", "is empty", expected_count}},
      {"POPDIST_NUM_LOCAL_REPLICAS non-decimal", "", {{"POPDIST_NUM_LOCAL_REPLICAS", "two"}},
       {"POPDIST_NUM_LOCAL_REPLICAS='two'", "not a decimal number", expected_count}},
      {"POPDIST_NUM_LOCAL_REPLICAS zero", "", {{"POPDIST_NUM_LOCAL_REPLICAS", "0"}},
       {"POPDIST_NUM_LOCAL_REPLICAS='0'", "is zero", expected_count}},
      {"POPDIST_NUM_LOCAL_REPLICAS negative", "", {{"POPDIST_NUM_LOCAL_REPLICAS", "-2"}},
       {"POPDIST_NUM_LOCAL_REPLICAS='-2'", "is negative", expected_count}},
      {"POPDIST_NUM_LOCAL_REPLICAS overflow", "", {{"POPDIST_NUM_LOCAL_REPLICAS", "2147483648"}},
       {"POPDIST_NUM_LOCAL_REPLICAS='2147483648'", "too large", "2147483647"}},
      {"POPDIST_NUM_LOCAL_REPLICAS trailing garbage", "", {{"POPDIST_NUM_LOCAL_REPLICAS", "2x"}},
       {"POPDIST_NUM_LOCAL_REPLICAS='2x'", "trailing characters 'x'"}},
      {"POPDIST_NUM_LOCAL_REPLICAS with a CRLF line ending shows the carriage return", "",
       {{"POPDIST_NUM_LOCAL_REPLICAS", "2\r"}},
       {"POPDIST_NUM_LOCAL_REPLICAS='2\\r'", "trailing characters '\\r'"}},
      {"POPDIST_NUM_LOCAL_REPLICAS leading plus", "", {{"POPDIST_NUM_LOCAL_REPLICAS", "+2"}},
       {"POPDIST_NUM_LOCAL_REPLICAS='+2'", "not a decimal number"}},
      {"POPDIST_NUM_LOCAL_REPLICAS leading space", "", {{"POPDIST_NUM_LOCAL_REPLICAS", " 2"}},
       {"POPDIST_NUM_LOCAL_REPLICAS=' 2'", "not a decimal number"}},
      {"POPDIST_NUM_TOTAL_REPLICAS zero", "", {{"POPDIST_NUM_TOTAL_REPLICAS", "0"}},
       {"POPDIST_NUM_TOTAL_REPLICAS='0'", "is zero", expected_count}},
      {"POPDIST_NUM_TOTAL_REPLICAS float", "", {{"POPDIST_NUM_TOTAL_REPLICAS", "4.0"}},
       {"POPDIST_NUM_TOTAL_REPLICAS='4.0'", "trailing characters '.0'"}},
      {"POPDIST_REPLICA_INDEX_OFFSET negative", "", {{"POPDIST_REPLICA_INDEX_OFFSET", "-1"}},
       {"POPDIST_REPLICA_INDEX_OFFSET='-1'", "is negative", expected_index}},
      {"POPDIST_REPLICA_INDEX_OFFSET hexadecimal", "", {{"POPDIST_REPLICA_INDEX_OFFSET", "0x4"}},
       {"POPDIST_REPLICA_INDEX_OFFSET='0x4'", "trailing characters 'x4'"}},
      {"POPDIST_NUM_IPUS_PER_REPLICA zero", "", {{"POPDIST_NUM_IPUS_PER_REPLICA", "0"}},
       {"POPDIST_NUM_IPUS_PER_REPLICA='0'", "is zero", expected_count}},
      {"POPDIST_NUM_IPUS_PER_REPLICA negative", "", {{"POPDIST_NUM_IPUS_PER_REPLICA", "-4"}},
       {"POPDIST_NUM_IPUS_PER_REPLICA='-4'", "is negative"}},
      {"POPDIST_NUM_IPUS_PER_REPLICA empty", "", {{"POPDIST_NUM_IPUS_PER_REPLICA", ""}},
       {"POPDIST_NUM_IPUS_PER_REPLICA=''", "is empty"}},
      {"POPDIST_LOCAL_INSTANCE_INDEX negative", "", {{"POPDIST_LOCAL_INSTANCE_INDEX", "-1"}},
       {"POPDIST_LOCAL_INSTANCE_INDEX='-1'", "is negative", expected_index}},
      {"POPDIST_UNIFORM_REPLICAS_PER_INSTANCE word", "", {{"POPDIST_UNIFORM_REPLICAS_PER_INSTANCE", "true"}},
       {"POPDIST_UNIFORM_REPLICAS_PER_INSTANCE='true'", "not a decimal number"}},
      {"POPDIST_UNIFORM_REPLICAS_PER_INSTANCE two", "", {{"POPDIST_UNIFORM_REPLICAS_PER_INSTANCE", "2"}},
       {"POPDIST_UNIFORM_REPLICAS_PER_INSTANCE=2", "neither 0 nor 1", "expected 0"}},
      {"OMPI_COMM_WORLD_RANK non-decimal", "", with(kOmpi, {{"OMPI_COMM_WORLD_RANK", "one"}}),
       {"openmpi: OMPI_COMM_WORLD_RANK='one'", "not a decimal number", expected_index}},
      {"OMPI_COMM_WORLD_RANK negative", "", with(kOmpi, {{"OMPI_COMM_WORLD_RANK", "-1"}}),
       {"OMPI_COMM_WORLD_RANK='-1'", "is negative"}},
      {"OMPI_COMM_WORLD_SIZE zero", "", with(kOmpi, {{"OMPI_COMM_WORLD_SIZE", "0"}}),
       {"OMPI_COMM_WORLD_SIZE='0'", "is zero", expected_count}},
      {"OMPI_COMM_WORLD_SIZE empty", "", with(kOmpi, {{"OMPI_COMM_WORLD_SIZE", ""}}),
       {"OMPI_COMM_WORLD_SIZE=''", "is empty"}},
      {"OMPI_COMM_WORLD_SIZE overflow", "", with(kOmpi, {{"OMPI_COMM_WORLD_SIZE", "4294967296"}}),
       {"OMPI_COMM_WORLD_SIZE='4294967296'", "too large"}},
      {"OMPI_COMM_WORLD_LOCAL_RANK trailing garbage", "", with(kOmpi, {{"OMPI_COMM_WORLD_LOCAL_RANK", "1 "}}),
       {"OMPI_COMM_WORLD_LOCAL_RANK='1 '", "trailing characters"}},
      {"PMI_RANK non-decimal", "hydra.rank1", {{"PMI_RANK", "1a"}}, {"mpich: PMI_RANK='1a'", "trailing"}},
      {"SLURM_PROCID non-decimal", "srun_N2n4.rank1", {{"SLURM_PROCID", "x"}}, {"slurm: SLURM_PROCID='x'"}},
      {"SLURM_STEP_NUM_TASKS zero", "srun_N2n4.rank1", {{"SLURM_STEP_NUM_TASKS", "0"}},
       {"SLURM_STEP_NUM_TASKS='0'", "is zero"}},
      {"SLURM_NODEID negative", "srun_N2n4.rank1", {{"SLURM_NODEID", "-1"}}, {"SLURM_NODEID='-1'", "is negative"}},
      {"RANK of torchrun non-decimal", "", with(kTorch, {{"RANK", "r1"}}), {"torchrun: RANK='r1'"}},
      {"MV2_COMM_WORLD_SIZE garbage", "",
       {{"MV2_COMM_WORLD_RANK", "0"}, {"MV2_COMM_WORLD_SIZE", "2,"}},
       {"mvapich2: MV2_COMM_WORLD_SIZE='2,'", "trailing characters ','"}},
      {"PALS_NODEID non-decimal", "",
       {{"PMI_RANK", "0"}, {"PMI_SIZE", "2"}, {"PALS_NODEID", "nid001"}},
       {"pals: PALS_NODEID='nid001'", "not a decimal number"}},

      // ---- pairs set by half --------------------------------------------------------------
      {"openmpi rank without size", "", {{"OMPI_COMM_WORLD_RANK", "1"}},
       {"openmpi: OMPI_COMM_WORLD_RANK=1 is set but OMPI_COMM_WORLD_SIZE is not", "expected both or neither"}},
      {"openmpi size without rank", "", {{"OMPI_COMM_WORLD_SIZE", "4"}},
       {"OMPI_COMM_WORLD_SIZE=4 is set but OMPI_COMM_WORLD_RANK is not"}},
      {"openmpi local rank without local size", "",
       {{"OMPI_COMM_WORLD_RANK", "1"}, {"OMPI_COMM_WORLD_SIZE", "4"}, {"OMPI_COMM_WORLD_LOCAL_RANK", "1"}},
       {"OMPI_COMM_WORLD_LOCAL_RANK=1 is set but OMPI_COMM_WORLD_LOCAL_SIZE is not"}},
      {"openmpi local size without local rank", "",
       {{"OMPI_COMM_WORLD_RANK", "1"}, {"OMPI_COMM_WORLD_SIZE", "4"}, {"OMPI_COMM_WORLD_LOCAL_SIZE", "2"}},
       {"OMPI_COMM_WORLD_LOCAL_SIZE=2 is set but OMPI_COMM_WORLD_LOCAL_RANK is not"}},
      {"mpich rank without size", "", {{"PMI_RANK", "0"}}, {"mpich: PMI_RANK=0 is set but PMI_SIZE is not"}},
      {"mpich size without rank", "", {{"PMI_SIZE", "2"}}, {"PMI_SIZE=2 is set but PMI_RANK is not"}},
      {"mpich MPI_LOCALNRANKS empty", "hydra.rank1", {{"MPI_LOCALNRANKS", ""}},
       {"MPI_LOCALNRANKS=''", "is empty"}},
      {"mpich MPI_LOCALRANKID without MPI_LOCALNRANKS", "",
       {{"PMI_RANK", "0"}, {"PMI_SIZE", "2"}, {"MPI_LOCALRANKID", "0"}},
       {"MPI_LOCALRANKID=0 is set but MPI_LOCALNRANKS is not"}},
      {"mvapich2 rank without size", "", {{"MV2_COMM_WORLD_RANK", "0"}},
       {"mvapich2: MV2_COMM_WORLD_RANK=0 is set but MV2_COMM_WORLD_SIZE is not"}},
      {"mvapich2 local rank without local size", "",
       {{"MV2_COMM_WORLD_RANK", "0"}, {"MV2_COMM_WORLD_SIZE", "2"}, {"MV2_COMM_WORLD_LOCAL_RANK", "0"}},
       {"MV2_COMM_WORLD_LOCAL_RANK=0 is set but MV2_COMM_WORLD_LOCAL_SIZE is not"}},
      {"pals without PMI_SIZE", "", {{"PALS_RANKID", "1"}, {"PMI_RANK", "1"}},
       {"pals: PMI_RANK=1 is set but PMI_SIZE is not; expected PMI_RANK (or PALS_RANKID) and PMI_SIZE"}},
      {"pals with PALS_RANKID alone", "", {{"PALS_RANKID", "1"}},
       {"pals: PALS_RANKID=1 is set but PMI_SIZE is not; expected PMI_RANK (or PALS_RANKID) and PMI_SIZE"}},
      {"pals without rank", "", {{"PALS_APID", "x"}, {"PMI_SIZE", "2"}},
       {"pals: PMI_SIZE=2 is set but neither PMI_RANK nor PALS_RANKID is"}},
      {"pals without rank and size", "", {{"PALS_APID", "x"}},
       {"pals: PALS_APID is set but neither PMI_RANK/PALS_RANKID nor PMI_SIZE is"}},
      {"pals local rank without local size", "", {{"PALS_RANKID", "1"}, {"PMI_SIZE", "2"}, {"PALS_LOCAL_RANKID", "0"}},
       {"PALS_LOCAL_RANKID=0 is set but PMI_LOCAL_SIZE is not"}},
      {"pals local size without local rank", "", {{"PALS_RANKID", "1"}, {"PMI_SIZE", "2"}, {"PMI_LOCAL_SIZE", "1"}},
       {"PMI_LOCAL_SIZE=1 is set but neither PMI_LOCAL_RANK nor PALS_LOCAL_RANKID is"}},
      {"torchrun without RANK and WORLD_SIZE", "", {{"TORCHELASTIC_RUN_ID", "r"}},
       {"torchrun: TORCHELASTIC_RUN_ID is set but neither RANK nor WORLD_SIZE is"}},
      {"torchrun RANK without WORLD_SIZE", "", {{"TORCHELASTIC_RUN_ID", "r"}, {"RANK", "0"}},
       {"torchrun: RANK=0 is set but WORLD_SIZE is not"}},
      {"torchrun LOCAL_RANK without LOCAL_WORLD_SIZE", "",
       {{"TORCHELASTIC_RUN_ID", "r"}, {"RANK", "0"}, {"WORLD_SIZE", "2"}, {"LOCAL_RANK", "0"}},
       {"LOCAL_RANK=0 is set but LOCAL_WORLD_SIZE is not"}},
      {"slurm step without rank and size", "", {{"SLURM_STEP_ID", "0"}},
       {"slurm: SLURM_STEP_ID is set but neither SLURM_PROCID nor SLURM_STEP_NUM_TASKS is"}},
      {"slurm step without SLURM_STEP_NUM_TASKS despite SLURM_NTASKS", "",
       {{"SLURM_STEP_ID", "0"}, {"SLURM_PROCID", "1"}, {"SLURM_NTASKS", "4"}},
       {"SLURM_PROCID=1 is set but SLURM_STEP_NUM_TASKS is not"}},
      {"slurm SLURM_LOCALID without the tasks list", "",
       {{"SLURM_STEP_ID", "0"}, {"SLURM_PROCID", "1"}, {"SLURM_STEP_NUM_TASKS", "4"}, {"SLURM_LOCALID", "1"}},
       {"SLURM_LOCALID=1 is set but SLURM_STEP_TASKS_PER_NODE is not"}},
      {"slurm tasks list without SLURM_LOCALID", "",
       {{"SLURM_STEP_ID", "0"}, {"SLURM_PROCID", "1"}, {"SLURM_STEP_NUM_TASKS", "4"}, {"SLURM_NODEID", "0"},
        {"SLURM_STEP_TASKS_PER_NODE", "2(x2)"}},
       {"SLURM_STEP_TASKS_PER_NODE='2(x2)' is set but SLURM_LOCALID is not"}},
      {"slurm tasks list without SLURM_NODEID", "",
       {{"SLURM_STEP_ID", "0"}, {"SLURM_PROCID", "1"}, {"SLURM_STEP_NUM_TASKS", "4"}, {"SLURM_LOCALID", "1"},
        {"SLURM_STEP_TASKS_PER_NODE", "2(x2)"}},
       {"SLURM_STEP_TASKS_PER_NODE='2(x2)' is set but SLURM_NODEID is not"}},

      // ---- indices out of range -----------------------------------------------------------
      {"openmpi rank equal to size", "", with(kOmpi, {{"OMPI_COMM_WORLD_RANK", "4"}}),
       {"openmpi: OMPI_COMM_WORLD_RANK=4 is not less than OMPI_COMM_WORLD_SIZE=4", "expected a rank in 0..3"}},
      {"openmpi rank above size", "", with(kOmpi, {{"OMPI_COMM_WORLD_RANK", "9"}}),
       {"OMPI_COMM_WORLD_RANK=9 is not less than OMPI_COMM_WORLD_SIZE=4"}},
      {"openmpi local rank equal to local size", "", with(kOmpi, {{"OMPI_COMM_WORLD_LOCAL_RANK", "2"}}),
       {"OMPI_COMM_WORLD_LOCAL_RANK=2 is not less than OMPI_COMM_WORLD_LOCAL_SIZE=2", "expected a local rank in 0..1"}},
      {"openmpi local size above size", "",
       with(kOmpi, {{"OMPI_COMM_WORLD_LOCAL_SIZE", "5"}, {"OMPI_COMM_WORLD_LOCAL_RANK", "0"}}),
       {"OMPI_COMM_WORLD_LOCAL_SIZE=5 is larger than OMPI_COMM_WORLD_SIZE=4"}},
      {"mpich rank equal to size", "hydra.rank2", {{"PMI_SIZE", "2"}, {"MPI_LOCALNRANKS", "2"}},
       {"mpich: PMI_RANK=2 is not less than PMI_SIZE=2"}},
      {"mpich local rank above local size", "hydra.rank2", {{"MPI_LOCALNRANKS", "1"}},
       {"MPI_LOCALRANKID=2 is not less than MPI_LOCALNRANKS=1"}},
      {"mvapich2 rank above size", "", {{"MV2_COMM_WORLD_RANK", "2"}, {"MV2_COMM_WORLD_SIZE", "2"}},
       {"mvapich2: MV2_COMM_WORLD_RANK=2 is not less than MV2_COMM_WORLD_SIZE=2"}},
      {"pals node index not less than size", "", {{"PMI_RANK", "0"}, {"PMI_SIZE", "2"}, {"PALS_NODEID", "2"}},
       {"pals: PALS_NODEID=2 is not less than PMI_SIZE=2", "expected a node index in 0..1"}},
      {"pals PMI_RANK and PALS_RANKID disagree", "", {{"PMI_RANK", "0"}, {"PALS_RANKID", "1"}, {"PMI_SIZE", "2"}},
       {"pals: PMI_RANK=0 and PALS_RANKID=1 disagree"}},
      {"pals local ranks disagree", "",
       {{"PMI_RANK", "0"}, {"PMI_SIZE", "2"}, {"PMI_LOCAL_RANK", "0"}, {"PALS_LOCAL_RANKID", "1"},
        {"PMI_LOCAL_SIZE", "2"}},
       {"PMI_LOCAL_RANK=0 and PALS_LOCAL_RANKID=1 disagree"}},
      {"torchrun rank above world size", "", with(kTorch, {{"RANK", "4"}}),
       {"torchrun: RANK=4 is not less than WORLD_SIZE=4"}},
      {"torchrun local rank above local world size", "", with(kTorch, {{"LOCAL_RANK", "2"}}),
       {"LOCAL_RANK=2 is not less than LOCAL_WORLD_SIZE=2"}},
      {"torchrun group rank above group world size", "", with(kTorch, {{"GROUP_RANK", "2"}}),
       {"GROUP_RANK=2 is not less than GROUP_WORLD_SIZE=2", "expected a node index in 0..1"}},
      {"torchrun more groups than workers", "",
       with(kTorch, {{"GROUP_RANK", "4"}, {"GROUP_WORLD_SIZE", "8"}}),
       {"GROUP_RANK=4 is not less than WORLD_SIZE=4", "node index"}},
      {"slurm rank above step size", "srun_N2n4.rank3", {{"SLURM_PROCID", "4"}},
       {"slurm: SLURM_PROCID=4 is not less than SLURM_STEP_NUM_TASKS=4"}},
      {"slurm local rank not less than this node's count", "srun_N2n4.rank3", {{"SLURM_LOCALID", "1"}},
       {"SLURM_LOCALID=1 is not less than SLURM_STEP_TASKS_PER_NODE=1"}},
      {"slurm node index outside the tasks list", "srun_N2n4.rank3", {{"SLURM_NODEID", "2"}},
       {"SLURM_NODEID=2 is not less than the 2 node(s) of SLURM_STEP_TASKS_PER_NODE='3,1'", "0..1"}},
      {"slurm tasks list disagrees with step size", "srun_N2n4.rank1", {{"SLURM_STEP_TASKS_PER_NODE", "3,2"}},
       {"SLURM_STEP_TASKS_PER_NODE='3,2' adds up to 5 tasks but SLURM_STEP_NUM_TASKS=4"}},
      {"slurm tasks list disagrees with node count", "srun_N2n4.rank1",
       {{"SLURM_STEP_TASKS_PER_NODE", "2(x2)"}, {"SLURM_STEP_NUM_NODES", "3"}},
       {"SLURM_STEP_TASKS_PER_NODE='2(x2)' describes 2 node(s) but SLURM_STEP_NUM_NODES=3"}},
      {"slurm tasks list malformed", "srun_N2n4.rank1", {{"SLURM_STEP_TASKS_PER_NODE", "3(x1"}},
       {"slurm: SLURM_STEP_TASKS_PER_NODE='3(x1'", "malformed repeat", "2(x3),1"}},
      {"slurm tasks list empty", "srun_N2n4.rank1", {{"SLURM_STEP_TASKS_PER_NODE", ""}},
       {"SLURM_STEP_TASKS_PER_NODE='' is empty"}},
      {"slurm tasks list with a zero", "srun_N2n4.rank1", {{"SLURM_STEP_TASKS_PER_NODE", "4,0"}},
       {"SLURM_STEP_TASKS_PER_NODE='4,0'", "item '0'", "bad task count '0'"}},

      // ---- never a silent singleton: a stated rank > 0 that forms no family ----------------------
      {"RANK 3 alone", "", {{"RANK", "3"}},
       {"RANK=3 states that this process is not the job's first", "no launcher family is formed from it",
        "the PyTorch environment needs both RANK and WORLD_SIZE", "POPDIST_LAUNCHER=singleton"}},
      {"Lightning's child process (LOCAL_RANK, NODE_RANK, WORLD_SIZE, no RANK)", "lightning_ddp_child", {},
       {"LOCAL_RANK=1, NODE_RANK=1 state that this process is not the job's first",
        "the PyTorch environment needs both RANK and WORLD_SIZE", "singleton"}},
      {"GROUP_RANK without TORCHELASTIC_RUN_ID or RANK", "", {{"GROUP_RANK", "2"}, {"LOCAL_RANK", "0"}},
       {"GROUP_RANK=2 states"}},
      {"Slurm step variables without SLURM_STEP_ID", "", {{"SLURM_JOB_ID", "9"}, {"SLURM_PROCID", "2"},
                                                           {"SLURM_STEP_NUM_TASKS", "4"}},
       {"SLURM_PROCID=2 states that this process is not the job's first",
        "slurm needs SLURM_STEP_ID: salloc and sbatch allocate but do not launch; run under srun"}},
      {"PMIX_RANK 3 alone", "", {{"PMIX_RANK", "3"}},
       {"PMIX_RANK=3 states that this process is not the job's first", "PMIx sets no size beside it"}},
      {"Cray ALPS aprun rank 3", "alps_aprun.rank3", {},
       {"ALPS_APP_PE=3 states", "Cray ALPS (aprun) sets no size beside it", "POPDIST_LAUNCHER=singleton"}},
      {"jsrun local rank without rank and size", "", {{"JSM_NAMESPACE_LOCAL_RANK", "1"}},
       {"JSM_NAMESPACE_LOCAL_RANK=1 states", "lsf needs JSM_NAMESPACE_RANK and JSM_NAMESPACE_SIZE"}},
      {"Horovod local rank without rank and size", "", {{"HOROVOD_LOCAL_RANK", "1"}, {"HOROVOD_LOCAL_SIZE", "2"}},
       {"HOROVOD_LOCAL_RANK=1 states", "horovod needs HOROVOD_RANK and HOROVOD_SIZE"}},
      {"Open MPI local rank without rank and size", "", {{"OMPI_COMM_WORLD_LOCAL_RANK", "1"},
                                                          {"OMPI_COMM_WORLD_LOCAL_SIZE", "2"}},
       {"OMPI_COMM_WORLD_LOCAL_RANK=1 states"}},
      {"submitit local executor task 1", "", {{"SUBMITIT_LOCAL_GLOBALID", "1"}, {"SUBMITIT_LOCAL_NTASKS", "2"}},
       {"SUBMITIT_LOCAL_GLOBALID=1 states", "submitit's local executor"}},

      // ---- the families added later: malformed or inconsistent ------------------------------
      {"lsf rank not less than size", "", {{"JSM_NAMESPACE_RANK", "4"}, {"JSM_NAMESPACE_SIZE", "4"}},
       {"lsf: JSM_NAMESPACE_RANK=4 is not less than JSM_NAMESPACE_SIZE=4"}},
      {"lsf size without rank", "", {{"JSM_NAMESPACE_SIZE", "4"}},
       {"lsf: JSM_NAMESPACE_SIZE=4 is set but JSM_NAMESPACE_RANK is not"}},
      {"lsf local size without local rank", "lsf_lightning", {{"JSM_NAMESPACE_LOCAL_RANK", ""}},
       {"lsf: JSM_NAMESPACE_LOCAL_RANK=''", "is empty"}},
      {"lsf local rank not less than size", "lsf_lightning", {{"JSM_NAMESPACE_LOCAL_RANK", "4"}},
       {"lsf: JSM_NAMESPACE_LOCAL_RANK=4 is not less than JSM_NAMESPACE_SIZE=4"}},
      {"horovod local rank without local size", "", {{"HOROVOD_RANK", "1"}, {"HOROVOD_SIZE", "2"},
                                                      {"HOROVOD_LOCAL_RANK", "1"}},
       {"horovod: HOROVOD_LOCAL_RANK=1 is set but HOROVOD_LOCAL_SIZE is not"}},
      {"horovod cross rank not less than cross size", "horovod_gloo_2x2.rank2", {{"HOROVOD_CROSS_SIZE", "1"}},
       {"horovod: HOROVOD_CROSS_RANK=1 is not less than HOROVOD_CROSS_SIZE=1", "expected a cross rank in 0..0"}},
      {"horovod rank non-decimal", "horovod_gloo_2x2.rank2", {{"HOROVOD_RANK", "two"}},
       {"horovod: HOROVOD_RANK='two'", "not a decimal number"}},
      {"pytorch node variables disagree", "deepspeed_launch.rank5", {{"NODE_RANK", "0"}},
       {"pytorch: NODE_RANK=0 and CROSS_RANK=1 disagree"}},
      {"pytorch local sizes disagree", "deepspeed_launch.rank5", {{"LOCAL_WORLD_SIZE", "2"}},
       {"pytorch: LOCAL_WORLD_SIZE=2 and LOCAL_SIZE=4 disagree"}},
      {"pytorch local size without local rank", "", {{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"LOCAL_WORLD_SIZE", "2"}},
       {"pytorch: LOCAL_WORLD_SIZE=2 is set but LOCAL_RANK is not"}},
      {"pytorch node count without node", "", {{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"GROUP_WORLD_SIZE", "2"}},
       {"pytorch: GROUP_WORLD_SIZE=2 is set but GROUP_RANK or NODE_RANK or CROSS_RANK is not"}},
      {"pytorch node not less than node count", "deepspeed_launch.rank5", {{"CROSS_SIZE", "1"}},
       {"pytorch: CROSS_RANK=1 is not less than CROSS_SIZE=1"}},
      {"pytorch local rank without count above the size", "", {{"RANK", "0"}, {"WORLD_SIZE", "2"},
                                                                {"LOCAL_RANK", "2"}},
       {"pytorch: LOCAL_RANK=2 is not less than WORLD_SIZE=2"}},
      {"pytorch local rank disagrees with POPDIST_LOCAL_INSTANCE_INDEX", "kubeflow_lightning",
       {{"LOCAL_RANK", "1"}, {"POPDIST_LOCAL_INSTANCE_INDEX", "0"}},
       {"POPDIST_LOCAL_INSTANCE_INDEX=0 and LOCAL_RANK=1 disagree"}},

      // ---- POPDIST_LAUNCHER -----------------------------------------------------------------
      {"POPDIST_LAUNCHER unknown name", "", {{"POPDIST_LAUNCHER", "ompi"}},
       {"POPDIST_LAUNCHER='ompi' is not a launcher name",
        "expected one of singleton, popdist, openmpi, mpich, pals, mvapich2, slurm, torchrun"}},
      {"POPDIST_LAUNCHER empty", "", {{"POPDIST_LAUNCHER", ""}}, {"POPDIST_LAUNCHER='' is not a launcher name"}},
      {"POPDIST_LAUNCHER wrong case", "ompi.rank0", {{"POPDIST_LAUNCHER", "OpenMPI"}},
       {"POPDIST_LAUNCHER='OpenMPI'", "expected one of"}},
      {"POPDIST_LAUNCHER with spaces", "", {{"POPDIST_LAUNCHER", " slurm"}}, {"POPDIST_LAUNCHER=' slurm'"}},
      {"POPDIST_LAUNCHER openmpi without its variables", "hydra.rank0", {{"POPDIST_LAUNCHER", "openmpi"}},
       {"POPDIST_LAUNCHER=openmpi but none of the openmpi launcher's variables is set",
        "OMPI_COMM_WORLD_SIZE, OMPI_COMM_WORLD_RANK"}},
      {"POPDIST_LAUNCHER slurm in a salloc shell", "salloc_shell", {{"POPDIST_LAUNCHER", "slurm"}},
       {"POPDIST_LAUNCHER=slurm but none of the slurm launcher's variables is set (SLURM_STEP_ID)", "srun"}},
      {"POPDIST_LAUNCHER slurm in an sbatch script", "sbatch_script", {{"POPDIST_LAUNCHER", "slurm"}},
       {"POPDIST_LAUNCHER=slurm", "SLURM_STEP_ID"}},
      {"POPDIST_LAUNCHER torchrun without TORCHELASTIC_RUN_ID or RANK", "", {{"POPDIST_LAUNCHER", "torchrun"},
                                                                              {"WORLD_SIZE", "2"}},
       {"POPDIST_LAUNCHER=torchrun but none of the torchrun launcher's variables is set (TORCHELASTIC_RUN_ID)",
        "its identity cannot be read without them", "WORLD_SIZE=2 is set but RANK is not"}},
      {"POPDIST_LAUNCHER torchrun with nothing", "", {{"POPDIST_LAUNCHER", "torchrun"}},
       {"POPDIST_LAUNCHER=torchrun but none", "POPDIST_LAUNCHER=torchrun is set but neither RANK nor WORLD_SIZE is"}},
      {"POPDIST_LAUNCHER lsf without jsrun", "", {{"POPDIST_LAUNCHER", "lsf"}},
       {"POPDIST_LAUNCHER=lsf but none of the lsf launcher's variables is set (JSM_NAMESPACE_SIZE, "
        "JSM_NAMESPACE_RANK)"}},
      {"POPDIST_LAUNCHER horovod without horovodrun", "ompi.rank1", {{"POPDIST_LAUNCHER", "horovod"}},
       {"POPDIST_LAUNCHER=horovod but none", "HOROVOD_SIZE, HOROVOD_RANK"}},
      {"POPDIST_LAUNCHER pytorch in an sbatch script", "sbatch_script", {{"POPDIST_LAUNCHER", "pytorch"}},
       {"POPDIST_LAUNCHER=pytorch but none", "RANK with WORLD_SIZE"}},
      {"POPDIST_LAUNCHER mpich without PMI variables", "", {{"POPDIST_LAUNCHER", "mpich"}},
       {"POPDIST_LAUNCHER=mpich", "PMI_SIZE, PMI_RANK"}},
      {"POPDIST_LAUNCHER mvapich2 without its variables", "", {{"POPDIST_LAUNCHER", "mvapich2"}},
       {"POPDIST_LAUNCHER=mvapich2", "MV2_COMM_WORLD_SIZE"}},
      {"POPDIST_LAUNCHER forced family malformed", "", {{"POPDIST_LAUNCHER", "openmpi"}, {"OMPI_COMM_WORLD_RANK", "0"}},
       {"OMPI_COMM_WORLD_RANK=0 is set but OMPI_COMM_WORLD_SIZE is not"}},

      // ---- the POPDIST_* contract under a launcher ----------------------------------------
      {"uniform variable 1 but total is not local x instances", "ompi.rank0",
       {{"POPDIST_UNIFORM_REPLICAS_PER_INSTANCE", "1"}, {"POPDIST_NUM_TOTAL_REPLICAS", "7"},
        {"POPDIST_NUM_LOCAL_REPLICAS", "2"}},
       {"POPDIST_UNIFORM_REPLICAS_PER_INSTANCE=1", "POPDIST_NUM_TOTAL_REPLICAS=7", "POPDIST_NUM_LOCAL_REPLICAS=2",
        "OMPI_COMM_WORLD_SIZE=3", "= 6"}},
      {"offset contradicts the launcher's rank under uniform replicas", "ompi.rank2",
       {{"POPDIST_NUM_LOCAL_REPLICAS", "2"}, {"POPDIST_REPLICA_INDEX_OFFSET", "2"}},
       {"POPDIST_REPLICA_INDEX_OFFSET=2", "OMPI_COMM_WORLD_RANK=2", "POPDIST_NUM_LOCAL_REPLICAS=2",
        "expected POPDIST_REPLICA_INDEX_OFFSET=4"}},
      {"offset contradicts derived uniformity and the error says how to declare non-uniform replicas", "ompi.rank1",
       {{"POPDIST_NUM_TOTAL_REPLICAS", "6"}, {"POPDIST_NUM_LOCAL_REPLICAS", "2"},
        {"POPDIST_REPLICA_INDEX_OFFSET", "1"}},
       {"POPDIST_REPLICA_INDEX_OFFSET=1", "OMPI_COMM_WORLD_RANK=1", "expected POPDIST_REPLICA_INDEX_OFFSET=2",
        "derived: 6 = POPDIST_NUM_LOCAL_REPLICAS=2 x OMPI_COMM_WORLD_SIZE=3",
        "set POPDIST_UNIFORM_REPLICAS_PER_INSTANCE=0"}},
      {"offset contradicts stated uniformity", "ompi.rank1",
       {{"POPDIST_UNIFORM_REPLICAS_PER_INSTANCE", "1"}, {"POPDIST_REPLICA_INDEX_OFFSET", "0"}},
       {"POPDIST_REPLICA_INDEX_OFFSET=0", "OMPI_COMM_WORLD_RANK=1", "expected POPDIST_REPLICA_INDEX_OFFSET=1",
        "under POPDIST_UNIFORM_REPLICAS_PER_INSTANCE=1"}},
      {"offset contradicts the Slurm rank", "srun_N2n4.rank1", {{"POPDIST_REPLICA_INDEX_OFFSET", "0"}},
       {"POPDIST_REPLICA_INDEX_OFFSET=0", "SLURM_PROCID=1", "expected POPDIST_REPLICA_INDEX_OFFSET=1"}},
      {"PopRun total for fewer instances than the launcher started", "ompi_fake.rank3",
       {{"POPDIST_NUM_TOTAL_REPLICAS", "2"}, {"POPDIST_REPLICA_INDEX_OFFSET", "1"}},
       {"POPDIST_NUM_TOTAL_REPLICAS=2 is less than the 4 instances (OMPI_COMM_WORLD_SIZE=4)"}},
      {"non-uniform replicas without an offset", "ompi.rank1", {{"POPDIST_NUM_TOTAL_REPLICAS", "5"}},
       {"POPDIST_NUM_TOTAL_REPLICAS=5 is not", "OMPI_COMM_WORLD_SIZE=3", "POPDIST_REPLICA_INDEX_OFFSET is needed"}},
      {"non-uniform offset plus local beyond total", "ompi.rank2",
       {{"POPDIST_NUM_TOTAL_REPLICAS", "5"}, {"POPDIST_NUM_LOCAL_REPLICAS", "2"},
        {"POPDIST_REPLICA_INDEX_OFFSET", "4"}},
       {"replica_index_offset 4 (POPDIST_REPLICA_INDEX_OFFSET) + num_local_replicas 2 (POPDIST_NUM_LOCAL_REPLICAS) = 6",
        "exceeds num_total_replicas 5 (POPDIST_NUM_TOTAL_REPLICAS)"}},
      {"derived total overflows", "",
       {{"OMPI_COMM_WORLD_RANK", "0"}, {"OMPI_COMM_WORLD_SIZE", "65536"}, {"POPDIST_NUM_LOCAL_REPLICAS", "65536"}},
       {"POPDIST_NUM_LOCAL_REPLICAS=65536 x OMPI_COMM_WORLD_SIZE=65536 = 4294967296", "more than 2147483647"}},
      {"POPDIST_LOCAL_INSTANCE_INDEX not less than the launcher's local size", "ompi.rank0",
       {{"POPDIST_LOCAL_INSTANCE_INDEX", "3"}},
       {"POPDIST_LOCAL_INSTANCE_INDEX=3 is not less than OMPI_COMM_WORLD_LOCAL_SIZE=3", "0..2"}},
      {"POPDIST_LOCAL_INSTANCE_INDEX against the Slurm node's count", "srun_N2n4.rank3",
       {{"POPDIST_LOCAL_INSTANCE_INDEX", "1"}},
       {"POPDIST_LOCAL_INSTANCE_INDEX=1 is not less than SLURM_STEP_TASKS_PER_NODE=1"}},
      {"POPDIST_LOCAL_INSTANCE_INDEX beyond the job without local size", "",
       {{"OMPI_COMM_WORLD_RANK", "0"}, {"OMPI_COMM_WORLD_SIZE", "2"}, {"POPDIST_LOCAL_INSTANCE_INDEX", "2"}},
       {"POPDIST_LOCAL_INSTANCE_INDEX=2 is not less than the job's 2 instance(s) (OMPI_COMM_WORLD_SIZE)"}},

      // ---- the POPDIST_* contract without a launcher ----------------------------------------
      {"no launcher: uniform variable 0", "", {{"POPDIST_UNIFORM_REPLICAS_PER_INSTANCE", "0"}},
       {"POPDIST_UNIFORM_REPLICAS_PER_INSTANCE=0 says replicas are not uniform", "needs uniform replicas",
        "a launcher"}},
      {"no launcher: total not a multiple of local", "",
       {{"POPDIST_NUM_TOTAL_REPLICAS", "7"}, {"POPDIST_NUM_LOCAL_REPLICAS", "2"}},
       {"POPDIST_NUM_TOTAL_REPLICAS=7 is not a multiple of POPDIST_NUM_LOCAL_REPLICAS=2", "a launcher"}},
      {"no launcher: offset not a multiple of local", "",
       {{"POPDIST_NUM_TOTAL_REPLICAS", "8"}, {"POPDIST_NUM_LOCAL_REPLICAS", "2"},
        {"POPDIST_REPLICA_INDEX_OFFSET", "3"}},
       {"POPDIST_REPLICA_INDEX_OFFSET=3 is not a multiple of POPDIST_NUM_LOCAL_REPLICAS=2", "a launcher"}},
      {"no launcher: offset beyond total", "",
       {{"POPDIST_NUM_TOTAL_REPLICAS", "4"}, {"POPDIST_REPLICA_INDEX_OFFSET", "4"}},
       {"replica_index_offset 4 (POPDIST_REPLICA_INDEX_OFFSET)", "exceeds num_total_replicas 4"}},
      {"no launcher: offset without total", "", {{"POPDIST_REPLICA_INDEX_OFFSET", "2"}},
       {"replica_index_offset 2 (POPDIST_REPLICA_INDEX_OFFSET)", "num_total_replicas 1 (derived)"}},
      {"no launcher: local above total", "",
       {{"POPDIST_NUM_TOTAL_REPLICAS", "2"}, {"POPDIST_NUM_LOCAL_REPLICAS", "4"}},
       {"POPDIST_NUM_TOTAL_REPLICAS=2 is not a multiple of POPDIST_NUM_LOCAL_REPLICAS=4"}},
      {"no launcher: local instance index beyond the instances", "",
       {{"POPDIST_NUM_TOTAL_REPLICAS", "2"}, {"POPDIST_LOCAL_INSTANCE_INDEX", "2"}},
       {"POPDIST_LOCAL_INSTANCE_INDEX=2 is not less than the job's 2 instance(s) (derived)"}},
      {"singleton: local instance index 1", "", {{"POPDIST_LOCAL_INSTANCE_INDEX", "1"}},
       {"POPDIST_LOCAL_INSTANCE_INDEX=1 is not less than the job's 1 instance(s)"}},
      {"forced singleton with PopRun's total for more instances", "",
       {{"POPDIST_LAUNCHER", "singleton"}, {"POPDIST_NUM_TOTAL_REPLICAS", "4"}},
       {"POPDIST_NUM_TOTAL_REPLICAS=4 is not", "POPDIST_REPLICA_INDEX_OFFSET is needed"}},
  };
  // Pairs set by half, made by removing one variable from a complete launch.
  // GROUP_RANK alone is the host index; a node count without the index is the half pair.
  EnvMap torch_half = kTorch;
  torch_half.erase("GROUP_RANK");
  rows.push_back({"torchrun GROUP_WORLD_SIZE without GROUP_RANK", "", torch_half,
                  {"torchrun: GROUP_WORLD_SIZE=2 is set but GROUP_RANK is not"}});
  EnvMap step_half = kStep;
  step_half.erase("SLURM_STEP_NUM_TASKS");
  rows.push_back({"slurm SLURM_PROCID without SLURM_STEP_NUM_TASKS", "", step_half,
                  {"slurm: SLURM_PROCID=1 is set but SLURM_STEP_NUM_TASKS is not"}});
  return rows;
}

const bool registered = [] {
  for (const auto& row : bad_inputs()) {
    register_case("detect.rejects " + row.name, "[detect][error]", [row] {
      const EnvMap env = row.from_dump.empty() ? row.env : with(dump(row.from_dump), row.env);
      require_environment_error(env, row.fragments);
    }, __FILE__, __LINE__);
  }
  return true;
}();

}  // namespace

TEST_CASE("detect.errors never escape as anything but EnvironmentError", "[detect][error]") {
  // A crude fuzz: every variable detect() reads, set to each kind of bad value in turn, on top of
  // a valid launch; detect() either succeeds or throws EnvironmentError, never anything else.
  const std::vector<std::string> names = {
      "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE",
      "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID", "MPI_LOCALNRANKS", "PMI_LOCAL_RANK", "PMI_LOCAL_SIZE",
      "PALS_RANKID", "PALS_LOCAL_RANKID", "PALS_NODEID", "MV2_COMM_WORLD_RANK", "MV2_COMM_WORLD_SIZE",
      "MV2_COMM_WORLD_LOCAL_RANK", "MV2_COMM_WORLD_LOCAL_SIZE", "RANK", "WORLD_SIZE", "LOCAL_RANK",
      "LOCAL_WORLD_SIZE", "GROUP_RANK", "GROUP_WORLD_SIZE", "SLURM_PROCID", "SLURM_STEP_NUM_TASKS",
      "SLURM_LOCALID", "SLURM_NODEID", "SLURM_STEP_TASKS_PER_NODE", "SLURM_STEP_NUM_NODES",
      "JSM_NAMESPACE_RANK", "JSM_NAMESPACE_SIZE", "JSM_NAMESPACE_LOCAL_RANK", "JSM_NAMESPACE_LOCAL_SIZE",
      "HOROVOD_RANK", "HOROVOD_SIZE", "HOROVOD_LOCAL_RANK", "HOROVOD_LOCAL_SIZE", "HOROVOD_CROSS_RANK",
      "HOROVOD_CROSS_SIZE", "LOCAL_SIZE", "NODE_RANK", "CROSS_RANK", "CROSS_SIZE", "PMIX_RANK", "ALPS_APP_PE",
      "POPDIST_NUM_TOTAL_REPLICAS", "POPDIST_NUM_LOCAL_REPLICAS", "POPDIST_REPLICA_INDEX_OFFSET",
      "POPDIST_NUM_IPUS_PER_REPLICA", "POPDIST_UNIFORM_REPLICAS_PER_INSTANCE", "POPDIST_LOCAL_INSTANCE_INDEX",
      "POPDIST_LAUNCHER"};
  const std::vector<std::string> values = {"", "-1", "0", "1", "2147483647", "2147483648", "x", "1(x2)", "3,1",
                                           "99999999999999999999999"};
  const std::vector<std::string> bases = {"ompi_fake.rank3",          "srun_pmix.rank2",        "hydra.rank1",
                                          "salloc_mpirun.rank0",      "horovod_gloo_2x2.rank3", "lsf_lightning",
                                          "deepspeed_launch.rank5",   "sbatch_script"};
  int accepted = 0;
  int rejected = 0;
  for (const auto& base : bases) {
    const EnvMap env = dump(base);
    for (const auto& name : names) {
      for (const auto& value : values) {
        try {
          (void)detect(lookup_in(with(env, {{name, value}})));
          ++accepted;
        } catch (const EnvironmentError&) {
          ++rejected;
        }
      }
    }
  }
  CHECK(accepted > 0);
  CHECK(rejected > 0);
}

}  // namespace popdist::testing
