# Exit statuses: 3 for an invalid environment (the message names the variable and its value),
# 2 for usage errors (arguments, an unreadable or malformed --env-file), 0 for --help/--version.

# popdist_bad_env_test(<file> <stderr regex>...): exit 3, nothing on stdout, the regexes on stderr.
function(popdist_bad_env_test file)
  string(REGEX REPLACE "\\.env$" "" name ${file})
  popdist_cli_test(${name} STATUS 3 NO_STDOUT STDERR "^popdist topology: error: " ${ARGN}
                   COMMAND ${popdist} topology --env-file ${envs}/${file})
  # --json changes nothing about errors: still exit 3 and no half-written document on stdout.
  popdist_cli_test(${name}.json STATUS 3 NO_STDOUT STDERR ${ARGN}
                   COMMAND ${popdist} topology --json --env-file ${envs}/${file})
endfunction()

popdist_bad_env_test(bad_half_pair.env "OMPI_COMM_WORLD_RANK=1" "OMPI_COMM_WORLD_SIZE")
popdist_bad_env_test(bad_non_decimal.env "OMPI_COMM_WORLD_RANK='1x'")
popdist_bad_env_test(bad_rank_ge_size.env "SLURM_PROCID=4" "SLURM_STEP_NUM_TASKS=4")
popdist_bad_env_test(bad_popdist_contradicts_launcher.env "POPDIST_REPLICA_INDEX_OFFSET=0" "expected")
popdist_bad_env_test(bad_nonuniform_without_launcher.env "POPDIST_NUM_TOTAL_REPLICAS=4" "launcher")
popdist_bad_env_test(bad_empty_value.env "POPDIST_NUM_LOCAL_REPLICAS" "empty")
popdist_bad_env_test(bad_overflow.env "PMI_SIZE='99999999999'")
popdist_bad_env_test(bad_negative.env "MV2_COMM_WORLD_SIZE='-2'")
popdist_bad_env_test(bad_launcher_name.env "POPDIST_LAUNCHER='jsrun'" "lsf")
popdist_bad_env_test(bad_zero_ipus.env "POPDIST_NUM_IPUS_PER_REPLICA='0'")
popdist_bad_env_test(bad_offset_does_not_fit.env "POPDIST_REPLICA_INDEX_OFFSET" "exceeds")

# The live environment is checked the same way.
popdist_cli_test(live.bad_environment STATUS 3 NO_STDOUT STDERR "PMI_RANK='two'"
                 COMMAND env -i PMI_RANK=two PMI_SIZE=4 ${popdist} topology)

# --- usage errors: exit 2
popdist_cli_test(usage.env_file_missing STATUS 2 NO_STDOUT STDERR "no/such/file\\.env"
                 COMMAND ${popdist} topology --env-file ${CMAKE_CURRENT_BINARY_DIR}/no/such/file.env)
popdist_cli_test(usage.env_file_is_a_directory STATUS 2 NO_STDOUT STDERR "envs"
                 COMMAND ${popdist} topology --env-file ${envs})
popdist_cli_test(usage.env_file_line_without_equals STATUS 2 NO_STDOUT
                 STDERR "malformed_no_equals\\.env:3" "OMPI_COMM_WORLD_SIZE 2"
                 COMMAND ${popdist} topology --json --env-file ${envs}/malformed_no_equals.env)
popdist_cli_test(usage.env_file_bad_name STATUS 2 NO_STDOUT STDERR "malformed_bad_name\\.env:2" "1BAD NAME"
                 COMMAND ${popdist} topology --env-file ${envs}/malformed_bad_name.env)
popdist_cli_test(usage.env_file_without_value STATUS 2 NO_STDOUT STDERR "env-file"
                 COMMAND ${popdist} topology --env-file)
popdist_cli_test(usage.all_with_env_file STATUS 2 NO_STDOUT STDERR "--all" "--env-file"
                 COMMAND ${popdist} topology --all --env-file ${captured}/ompi.rank0.env)
popdist_cli_test(usage.unknown_option STATUS 2 NO_STDOUT STDERR "--bogus"
                 COMMAND ${popdist} topology --bogus)
popdist_cli_test(usage.stray_argument STATUS 2 NO_STDOUT STDERR "extra"
                 COMMAND ${popdist} topology extra)
popdist_cli_test(usage.no_subcommand STATUS 2 NO_STDOUT STDERR "subcommand"
                 COMMAND ${popdist})

# --- --help and --version: anywhere, even where the environment is invalid (nothing is detected)
popdist_cli_test(help.popdist STDOUT "topology" "run" "--version"
                 COMMAND env -i OMPI_COMM_WORLD_RANK=x ${popdist} --help)
popdist_cli_test(help.topology STDOUT "--json" "--env-file" "--all" "Exit status"
                 COMMAND env -i OMPI_COMM_WORLD_RANK=x ${popdist} topology --help)
popdist_cli_test(help.version STDOUT "^popdist ${PROJECT_VERSION}$"
                 COMMAND env -i OMPI_COMM_WORLD_RANK=x ${popdist} --version)

# --- the live environment (no --env-file)
popdist_cli_test(live.openmpi
  EXPECT launcher=openmpi instance_index=2 num_instances=4 local_instance_index=0 num_local_instances=2
         provenance.instance_index=OMPI_COMM_WORLD_RANK
  COMMAND env -i OMPI_COMM_WORLD_RANK=2 OMPI_COMM_WORLD_SIZE=4 OMPI_COMM_WORLD_LOCAL_RANK=0
              OMPI_COMM_WORLD_LOCAL_SIZE=2 ${popdist} topology --json)
popdist_cli_test(live.singleton
  EXPECT launcher=singleton instance_index=0 num_instances=1 popdist_env_set=false warnings=[]
  COMMAND env -i ${popdist} topology --json)
# Without --all nothing starts MPI: with a PML that does not exist, MPI_Init would fail (as
# `popdist topology --all` does in this environment), but plain `popdist topology` succeeds.
popdist_cli_test(live.no_mpi_without_all
  EXPECT launcher=singleton
  COMMAND env -i OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_pml=no_such_pml
              ${popdist} topology --json)
