# The launcher families added after the first six, and "never a silent singleton", through the
# command: --json keys and the table's warnings; a stated rank > 0 without a family is exit 3.
# The environments are the real ones of tests/unit/envdumps (each names its source).
set(envdumps ${PROJECT_SOURCE_DIR}/tests/unit/envdumps)

popdist_cli_test(layout.family.kubeflow_pytorchjob
  EXPECT launcher=pytorch instance_index=1 num_instances=20 local_instance_index=0 num_local_instances=1
         host_index=null provenance.launcher=WORLD_SIZE provenance.instance_index=RANK warnings=[]
  COMMAND ${popdist} topology --json --env-file ${envdumps}/kubeflow_lightning.env)
popdist_cli_test(layout.family.deepspeed_launch
  EXPECT launcher=pytorch instance_index=5 num_instances=8 local_instance_index=1 num_local_instances=4
         host_index=1 provenance.host_index=CROSS_RANK provenance.num_local_instances=LOCAL_SIZE warnings=[]
  COMMAND ${popdist} topology --json --env-file ${envdumps}/deepspeed_launch.rank5.env)
popdist_cli_test(layout.family.torch_distributed_launch
  EXPECT launcher=torchrun instance_index=1 num_instances=2 local_instance_index=1 num_local_instances=2
         host_index=0 warnings=[]
  COMMAND ${popdist} topology --json --env-file ${envdumps}/torch_launch.rank1.env)
popdist_cli_test(layout.family.lsf_jsrun
  EXPECT launcher=lsf instance_index=3 num_instances=4 local_instance_index=1 num_local_instances=2
         host_index=null provenance.local_instance_index=JSM_NAMESPACE_LOCAL_RANK warnings=[]
  COMMAND ${popdist} topology --json --env-file ${envdumps}/lsf_lightning.env)
popdist_cli_test(layout.family.horovod_gloo
  EXPECT launcher=horovod instance_index=3 num_instances=4 local_instance_index=1 num_local_instances=2
         host_index=1 provenance.host_index=HOROVOD_CROSS_RANK warnings=[]
  COMMAND ${popdist} topology --json --env-file ${envdumps}/horovod_gloo_2x2.rank3.env)
popdist_cli_test(table.family.horovod_gloo
  STDOUT "^Instance 3 of 4 \\(launcher horovod\\): "
         "^host_index +1 +HOROVOD_CROSS_RANK$"
         "^Warnings: none$"
  COMMAND ${popdist} topology --env-file ${envdumps}/horovod_gloo_2x2.rank3.env)

# --- unused launch variables: a warning in the JSON and in the table
popdist_cli_test(layout.unused.sbatch_script_step_variables
  EXPECT launcher=singleton "warnings#=1" "warnings~=SLURM_STEP_ID.*SLURM_PROCID=0.*not used"
  COMMAND ${popdist} topology --json --env-file ${envdumps}/sbatch_script.env)
popdist_cli_test(layout.unused.lightning_rank_zero
  EXPECT launcher=singleton instance_index=0 num_instances=1 "warnings#=1"
         "warnings~=WORLD_SIZE=4, LOCAL_RANK=0, NODE_RANK=0 are set but form no launch"
  COMMAND env -i NODE_RANK=0 LOCAL_RANK=0 WORLD_SIZE=4 ${popdist} topology --json)
popdist_cli_test(table.unused.lightning_rank_zero
  STDOUT "^Warnings:$"
         "^  - WORLD_SIZE=4, LOCAL_RANK=0, NODE_RANK=0 are set but form no launch \\(the PyTorch environment"
  COMMAND env -i NODE_RANK=0 LOCAL_RANK=0 WORLD_SIZE=4 ${popdist} topology)
popdist_cli_test(layout.unused.forced_singleton_over_a_stated_rank
  EXPECT launcher=singleton provenance.launcher=POPDIST_LAUNCHER "warnings#=1" "warnings~=ALPS_APP_PE=3"
  COMMAND env -i POPDIST_LAUNCHER=singleton ALPS_APP_PE=3 ALPS_APP_DEPTH=2 ${popdist} topology --json)

# --- a stated rank > 0 without a family: exit 3, in the table and in --json alike
function(popdist_stated_rank_test name file)
  popdist_cli_test(bad_stated_rank.${name} STATUS 3 NO_STDOUT
                   STDERR "^popdist topology: error: " "not the job's first" "POPDIST_LAUNCHER=singleton" ${ARGN}
                   COMMAND ${popdist} topology --env-file ${envdumps}/${file})
  popdist_cli_test(bad_stated_rank.${name}.json STATUS 3 NO_STDOUT STDERR "not the job's first" ${ARGN}
                   COMMAND ${popdist} topology --json --env-file ${envdumps}/${file})
endfunction()
popdist_stated_rank_test(lightning_child lightning_ddp_child.env "LOCAL_RANK=1, NODE_RANK=1")
popdist_stated_rank_test(alps alps_aprun.rank3.env "ALPS_APP_PE=3")

# --- POPDIST_LAUNCHER=<family> without its marker
popdist_cli_test(layout.forced.torchrun_without_run_id
  EXPECT launcher=torchrun instance_index=2 num_instances=4 provenance.launcher=POPDIST_LAUNCHER "warnings#=1"
         "warnings~=TORCHELASTIC_RUN_ID.*reading its identity anyway"
  COMMAND env -i POPDIST_LAUNCHER=torchrun RANK=2 WORLD_SIZE=4 ${popdist} topology --json)
popdist_cli_test(bad_forced_family_without_identity STATUS 3 NO_STDOUT
  STDERR "POPDIST_LAUNCHER=horovod but none of the horovod launcher's variables is set"
  COMMAND env -i POPDIST_LAUNCHER=horovod ${popdist} topology)
