# Every launcher layout of design.md §3.2 through `popdist topology --json --env-file`.
# The expected values follow from how each environment was made (tests/unit/envdumps/README.md for the
# captured ones, the comment at the top of each hand-written file), not from popdist's output.

# --- Open MPI, captured: `mpirun -np 3` on one host (no node index: host_index null)
popdist_layout_test(ompi.rank0.env
  launcher=openmpi instance_index=0 num_instances=3 local_instance_index=0 num_local_instances=3
  host_index=null num_local_replicas=1 num_total_replicas=3 replica_index_offset=0 ipus_per_replica=1
  uniform_replicas_per_instance=true popdist_env_set=true device_id=0 warnings=[])
popdist_layout_test(ompi.rank1.env
  launcher=openmpi instance_index=1 num_instances=3 local_instance_index=1 num_local_instances=3
  host_index=null num_local_replicas=1 num_total_replicas=3 replica_index_offset=1 ipus_per_replica=1
  uniform_replicas_per_instance=true popdist_env_set=true device_id=1 warnings=[]
  provenance.instance_index=OMPI_COMM_WORLD_RANK provenance.num_instances=OMPI_COMM_WORLD_SIZE
  provenance.local_instance_index=OMPI_COMM_WORLD_LOCAL_RANK
  provenance.num_local_instances=OMPI_COMM_WORLD_LOCAL_SIZE
  provenance.num_total_replicas=derived provenance.replica_index_offset=derived)
# --- Open MPI with fake hosts hostA:3,hostB:1
popdist_layout_test(ompi_fake.rank2.env
  launcher=openmpi instance_index=2 num_instances=4 local_instance_index=2 num_local_instances=3
  host_index=null replica_index_offset=2 num_total_replicas=4 device_id=2)
popdist_layout_test(ompi_fake.rank3.env
  launcher=openmpi instance_index=3 num_instances=4 local_instance_index=0 num_local_instances=1
  host_index=null replica_index_offset=3 num_total_replicas=4 device_id=3 warnings=[])
# --- MPICH hydra: one host, then fake hosts hostA:3,hostB:1
popdist_layout_test(hydra.rank2.env
  launcher=mpich instance_index=2 num_instances=3 local_instance_index=2 num_local_instances=3
  host_index=null num_total_replicas=3 replica_index_offset=2 popdist_env_set=true
  provenance.instance_index=PMI_RANK provenance.num_instances=PMI_SIZE
  provenance.local_instance_index=MPI_LOCALRANKID provenance.num_local_instances=MPI_LOCALNRANKS)
popdist_layout_test(hydra_fake.rank0.env
  launcher=mpich instance_index=0 num_instances=4 local_instance_index=0 num_local_instances=3 host_index=null)
popdist_layout_test(hydra_fake.rank3.env
  launcher=mpich instance_index=3 num_instances=4 local_instance_index=0 num_local_instances=1 host_index=null
  warnings=[])
# --- Slurm steps: srun -N2 -n4 (3,1)
popdist_layout_test(srun_N2n4.rank0.env
  launcher=slurm instance_index=0 num_instances=4 local_instance_index=0 num_local_instances=3 host_index=0)
popdist_layout_test(srun_N2n4.rank3.env
  launcher=slurm instance_index=3 num_instances=4 local_instance_index=0 num_local_instances=1 host_index=1
  num_total_replicas=4 replica_index_offset=3 popdist_env_set=true warnings=[]
  provenance.instance_index=SLURM_PROCID provenance.num_instances=SLURM_STEP_NUM_TASKS
  provenance.local_instance_index=SLURM_LOCALID provenance.host_index=SLURM_NODEID
  "provenance.num_local_instances~=SLURM_STEP_TASKS_PER_NODE")
# --- srun -N2 -n4 --ntasks-per-node=2: 2(x2)
popdist_layout_test(srun_N2n4_tpn2.rank1.env
  launcher=slurm instance_index=1 num_instances=4 local_instance_index=1 num_local_instances=2 host_index=0)
popdist_layout_test(srun_N2n4_tpn2.rank2.env
  launcher=slurm instance_index=2 num_instances=4 local_instance_index=0 num_local_instances=2 host_index=1)
# --- srun --mpi=pmix: PMIX_RANK + SLURM_* (PMIX_RANK alone names no family)
popdist_layout_test(srun_pmix.rank2.env
  launcher=slurm instance_index=2 num_instances=4 local_instance_index=2 num_local_instances=3 host_index=0
  provenance.instance_index=SLURM_PROCID)
popdist_layout_test(srun_pmix.rank3.env
  launcher=slurm instance_index=3 num_instances=4 local_instance_index=0 num_local_instances=1 host_index=1)
# --- mpirun inside salloc: Open MPI wins over the daemons' SLURM_* step, which disagrees (a warning)
popdist_layout_test(salloc_mpirun.rank2.env
  launcher=openmpi instance_index=2 num_instances=4 local_instance_index=2 num_local_instances=3 host_index=null
  provenance.instance_index=OMPI_COMM_WORLD_RANK "warnings#=1" "warnings~=slurm.*SLURM_PROCID=0.*disagrees")
popdist_layout_test(salloc_mpirun.rank3.env
  launcher=openmpi instance_index=3 num_instances=4 local_instance_index=0 num_local_instances=1 host_index=null
  "warnings~=SLURM_PROCID=1")
# --- salloc shell and sbatch script: no step, so not a launch (singleton, with a warning)
popdist_layout_test(salloc_shell.env
  launcher=singleton instance_index=0 num_instances=1 num_total_replicas=1 popdist_env_set=false device_id=0
  "warnings~=SLURM_STEP_ID")
popdist_layout_test(sbatch_script.env
  launcher=singleton instance_index=0 num_instances=1 popdist_env_set=false "warnings~=SLURM_STEP_ID")
# --- srun -n2 inside the sbatch job; srun --preserve-env -n2 inside salloc -n4 (SLURM_NTASKS=4 is stale)
popdist_layout_test(sbatch_srun_n2.rank1.env
  launcher=slurm instance_index=1 num_instances=2 local_instance_index=0 num_local_instances=1 host_index=1)
popdist_layout_test(salloc_srun_preserve.rank1.env
  launcher=slurm instance_index=1 num_instances=2 local_instance_index=0 num_local_instances=1 host_index=1
  num_total_replicas=2 provenance.num_instances=SLURM_STEP_NUM_TASKS)

# --- hand-written layouts
popdist_layout_test(torchrun.rank5.env
  launcher=torchrun instance_index=5 num_instances=8 local_instance_index=1 num_local_instances=4 host_index=1
  num_total_replicas=8 replica_index_offset=5 popdist_env_set=true warnings=[]
  provenance.instance_index=RANK provenance.num_instances=WORLD_SIZE provenance.local_instance_index=LOCAL_RANK
  provenance.num_local_instances=LOCAL_WORLD_SIZE provenance.host_index=GROUP_RANK)
popdist_layout_test(torchrun_in_srun.rank6.env
  launcher=torchrun instance_index=6 num_instances=8 local_instance_index=2 num_local_instances=4 host_index=1
  "warnings#=1" "warnings~=slurm.*disagrees with torchrun")
# PALS: PALS_NODEID is the node index when set (design.md §3.2).
popdist_layout_test(pals.rank5.env
  launcher=pals instance_index=5 num_instances=8 local_instance_index=1 num_local_instances=4
  host_index=1 provenance.host_index=PALS_NODEID
  provenance.instance_index=PMI_RANK provenance.num_instances=PMI_SIZE provenance.local_instance_index=PMI_LOCAL_RANK
  provenance.num_local_instances=PMI_LOCAL_SIZE)
popdist_layout_test(mvapich2.rank2.env
  launcher=mvapich2 instance_index=2 num_instances=4 local_instance_index=0 num_local_instances=2 host_index=null
  replica_index_offset=2 provenance.instance_index=MV2_COMM_WORLD_RANK provenance.num_instances=MV2_COMM_WORLD_SIZE
  provenance.local_instance_index=MV2_COMM_WORLD_LOCAL_RANK)
# PopRun's variables only: instance and count derived as offset / local and total / local.
popdist_layout_test(popdist_only.env
  launcher=popdist instance_index=2 num_instances=4 num_local_replicas=2 num_total_replicas=8
  replica_index_offset=4 ipus_per_replica=2 uniform_replicas_per_instance=true popdist_env_set=true
  device_id=26 provenance.instance_index=derived provenance.num_instances=derived
  provenance.num_local_replicas=POPDIST_NUM_LOCAL_REPLICAS provenance.ipus_per_replica=POPDIST_NUM_IPUS_PER_REPLICA
  provenance.local_instance_index=POPDIST_LOCAL_INSTANCE_INDEX)
# Nothing at all: PopDist's unlaunched defaults (design.md §4).
popdist_layout_test(singleton.env
  launcher=singleton instance_index=0 num_instances=1 local_instance_index=0 num_local_instances=1 host_index=0
  num_local_replicas=1 num_total_replicas=1 replica_index_offset=0 ipus_per_replica=1
  uniform_replicas_per_instance=true popdist_env_set=false device_id=0 warnings=[])
popdist_layout_test(launcher_override.env
  launcher=mpich instance_index=1 num_instances=2 local_instance_index=1 num_local_instances=2
  provenance.launcher=POPDIST_LAUNCHER provenance.instance_index=PMI_RANK
  "warnings#=1" "warnings~=openmpi.*OMPI_COMM_WORLD_RANK=3.*POPDIST_LAUNCHER")
popdist_layout_test(nonuniform_ompi.rank1.env
  launcher=openmpi instance_index=1 num_instances=2 num_local_replicas=3 num_total_replicas=4
  replica_index_offset=1 uniform_replicas_per_instance=false popdist_env_set=true
  provenance.uniform_replicas_per_instance=POPDIST_UNIFORM_REPLICAS_PER_INSTANCE)
# 4 instances x 2 replicas x 2 IPUs on 16: device ids 24..27 (design.md §4).
popdist_layout_test(ompi_ipus.rank0.env
  launcher=openmpi instance_index=0 num_local_replicas=2 num_total_replicas=8 replica_index_offset=0
  ipus_per_replica=2 device_id=24)
popdist_layout_test(ompi_ipus.rank3.env
  launcher=openmpi instance_index=3 local_instance_index=1 num_local_instances=2 num_local_replicas=2
  num_total_replicas=8 replica_index_offset=6 ipus_per_replica=2 device_id=27
  provenance.replica_index_offset=POPDIST_REPLICA_INDEX_OFFSET)

# --env-file - reads standard input.
popdist_cli_test(layout.from_standard_input
  STDIN ${captured}/srun_N2n4.rank3.env
  EXPECT launcher=slurm instance_index=3 host_index=1
  COMMAND ${popdist} topology --json --env-file -)
# Only the file's variables count: the live environment's launcher must not leak in.
popdist_cli_test(layout.only_the_files_variables_count
  ENVIRONMENT OMPI_COMM_WORLD_RANK=1 OMPI_COMM_WORLD_SIZE=2 POPDIST_NUM_LOCAL_REPLICAS=7
  EXPECT launcher=singleton num_instances=1 num_local_replicas=1
  COMMAND ${popdist} topology --json --env-file ${envs}/singleton.env)
