# The table for people: the box's rows, the summary line, fields with their provenance, warnings.
# Each regex must match (check_topology.py --stdout, multi-line mode).

popdist_cli_test(table.openmpi_two_devices_per_replica
  STDOUT "^\\| hosts +\\| +host \\? "
         "^\\| instances +\\| +instance 3 \\(local 1 of 2\\) +\\|$"
         "^\\| replicas +\\| +6 +\\| +7 +\\|$"
         "^\\| devices +\\| +4 +\\| +5 +\\| +6 +\\| +7 +\\|$"
         "^Instance 3 of 4 \\(launcher openmpi\\): replicas 6-7 of 8, 2 devices per replica, device id 27$"
         "^instance_index +3 +OMPI_COMM_WORLD_RANK$"
         "^num_local_instances +2 +OMPI_COMM_WORLD_LOCAL_SIZE$"
         "^host_index +unknown "
         "^ipus_per_replica +2 +POPDIST_NUM_IPUS_PER_REPLICA$"
         "^device_id +27 "
         "^local_device_ordinals +4-7 "
         "^Warnings: none$"
  COMMAND ${popdist} topology --env-file ${envs}/ompi_ipus.rank3.env)

popdist_cli_test(table.slurm_with_host_index
  STDOUT "^\\| hosts +\\| +host 1 +\\|$"
         "^\\| instances +\\| +instance 3 \\(local 0 of 1\\) +\\|$"
         "^host_index +1 +SLURM_NODEID$"
         "^num_instances +4 +SLURM_STEP_NUM_TASKS$"
  COMMAND ${popdist} topology --env-file ${captured}/srun_N2n4.rank3.env)

popdist_cli_test(table.warnings_listed
  STDOUT "^Warnings:$"
         "^  - slurm rank 0 of 2 .*disagrees with openmpi instance 2 of 4"
  COMMAND ${popdist} topology --env-file ${captured}/salloc_mpirun.rank2.env)

popdist_cli_test(table.singleton_defaults
  STDOUT "^Instance 0 of 1 \\(launcher singleton\\): replica 0 of 1, 1 device per replica, device id 0$"
         "^launcher +singleton +default$"
         "^popdist_env_set +false "
  COMMAND ${popdist} topology --env-file ${envs}/singleton.env)
