# `popdist topology --all` under the real mpirun (label mpi too): init(), every instance's view
# gathered, the job printed once by instance 0. Standard output must be exactly one JSON
# document, so the other instances printing anything fails the test.

popdist_mpi_environment(mpi_env)
set(mpirun ${MPIEXEC_EXECUTABLE} --oversubscribe --bind-to none)

# popdist_all_test(<name> RANKS n [STATUS s] [STDOUT ...] [STDERR ...] [EXPECT ...] COMMAND <mpirun args and program>)
function(popdist_all_test name)
  cmake_parse_arguments(ARG "" "RANKS" "" ${ARGN})
  popdist_cli_test(${name} TIMEOUT 90 ${ARG_UNPARSED_ARGUMENTS})
  set_tests_properties(cli.${name} PROPERTIES LABELS "cli;mpi" PROCESSORS ${ARG_RANKS} ENVIRONMENT "${mpi_env}")
endfunction()

# --- one host
popdist_all_test(all.one_host.4ranks RANKS 4
  EXPECT num_instances=4 num_hosts=1 "instances#=4" anomalies=[] hosts.0.host_index=0 hosts.0.instances=[0,1,2,3]
         instances.0.launcher=openmpi instances.0.provenance.host_index=mpi
         instances.0.provenance.instance_index=OMPI_COMM_WORLD_RANK
         instances.1.instance_index=1 instances.1.local_instance_index=1 instances.1.num_local_instances=4
         instances.3.instance_index=3 instances.3.local_instance_index=3 instances.3.host_index=0
         instances.3.replica_index_offset=3 instances.3.num_total_replicas=4 instances.3.device_id=3
         "instances.3.hostname~=."
  COMMAND ${mpirun} -np 4 ${popdist} topology --all --json)
popdist_all_test(all.one_host.1rank RANKS 1
  EXPECT num_instances=1 num_hosts=1 anomalies=[] instances.0.launcher=openmpi instances.0.num_instances=1
  COMMAND ${mpirun} -np 1 ${popdist} topology --all --json)
# Without a launcher: one instance (a singleton MPI process).
popdist_all_test(all.without_launcher RANKS 1
  EXPECT num_instances=1 instances.0.launcher=singleton instances.0.host_index=0 anomalies=[]
         instances.0.warnings=[]
  COMMAND ${popdist} topology --all --json)
popdist_all_test(all.table.3ranks RANKS 3
  STDOUT "popdist topology: 3 instances on 1 host"
         "^\\| instances +\\| +0 +\\| +1 +\\| +2 +\\|$"
         "^2 +\\S+ +0 +2/3 +\\x5b2, 3\\) +3 +1 +2 +openmpi$"  # \x5b: a bare [ would break CMake's list
  COUNT "1:^Anomalies: none$" "1:popdist topology: 3 instances"  # printed once, by instance 0
  COMMAND ${mpirun} -np 3 ${popdist} topology --all)

# --- non-uniform replicas (1 and 3 of 4), one program context per instance
set(nonuniform POPDIST_NUM_TOTAL_REPLICAS=4 POPDIST_UNIFORM_REPLICAS_PER_INSTANCE=0)
popdist_all_test(all.nonuniform_replicas RANKS 2
  EXPECT anomalies=[] instances.0.num_local_replicas=1 instances.0.replica_index_offset=0
         instances.1.num_local_replicas=3 instances.1.replica_index_offset=1
         instances.1.uniform_replicas_per_instance=false
  COMMAND ${mpirun} -np 1 env ${nonuniform} POPDIST_NUM_LOCAL_REPLICAS=1 POPDIST_REPLICA_INDEX_OFFSET=0
                    ${popdist} topology --all --json
                  : -np 1 env ${nonuniform} POPDIST_NUM_LOCAL_REPLICAS=3 POPDIST_REPLICA_INDEX_OFFSET=1
                    ${popdist} topology --all --json)

# --- a job that breaks the cross-instance rules is still shown: every instance's view and the
# job check's findings (the same check init() runs), exit 3
popdist_all_test(all.instances_disagree RANKS 2 STATUS 3
  STDOUT "the instances disagree about the total number of replicas" "instance 0 says 2" "instance 1 says 3"
         "\"num_instances\": 2"
  STDERR "popdist topology: error: the job breaks the cross-instance rules"
  COMMAND ${mpirun} -np 1 env POPDIST_NUM_TOTAL_REPLICAS=2 POPDIST_UNIFORM_REPLICAS_PER_INSTANCE=0
                    POPDIST_REPLICA_INDEX_OFFSET=0 ${popdist} topology --all --json
                  : -np 1 env POPDIST_NUM_TOTAL_REPLICAS=3 POPDIST_UNIFORM_REPLICAS_PER_INSTANCE=0
                    POPDIST_REPLICA_INDEX_OFFSET=1 ${popdist} topology --all --json)
popdist_all_test(all.replicas_untiled RANKS 2 STATUS 3
  STDOUT "replicas 0-1 driven by both instance 0 .replicas .0, 2.. and instance 1" "replicas 2-3 driven by no instance"
  COUNT "1:popdist topology: 2 instances"
  COMMAND ${mpirun} -np 2 env POPDIST_NUM_LOCAL_REPLICAS=2 POPDIST_NUM_TOTAL_REPLICAS=4
                    POPDIST_UNIFORM_REPLICAS_PER_INSTANCE=0 POPDIST_REPLICA_INDEX_OFFSET=0 ${popdist} topology --all)
# --- an instance that cannot even detect its topology: exit 3, its message on stderr
popdist_all_test(all.bad_environment_on_one_instance RANKS 2 STATUS 3 NO_STDOUT
  # Instance 1's own message, and instance 0 told that instance 1 failed (nobody left waiting).
  STDERR "^popdist topology: error: POPDIST_NUM_LOCAL_REPLICAS='x'" "^popdist topology: error: .*instance 1 failed"
  COMMAND ${mpirun} -np 1 ${popdist} topology --all --json
                  : -np 1 env POPDIST_NUM_LOCAL_REPLICAS=x ${popdist} topology --all --json)

# --- several hosts: the testbed's fake hosts (each its own UTS namespace and hostname). The
# agent scrubs the environment like ssh, so the MPI settings go as --mca (forwarded to the
# remote daemons and ranks) instead of OMPI_MCA_* variables.
set(testbed ${POPDIST_TESTBED})
if(POPDIST_FAKE_HOSTS)
  # --noprefix: mpirun called by its absolute path implies --prefix, which prepends
  # "PATH=...; export PATH;" to the remote command, and the agent execs that command as is.
  set(fake_hosts_mpirun ${mpirun} --noprefix --mca plm_rsh_agent ${testbed}/fake_rsh.sh --mca btl_tcp_if_include lo
      --mca oob_tcp_if_include lo --mca pml ^cm --mca mpi_yield_when_idle 1)
  popdist_all_test(all.fake_hosts_2_2 RANKS 4
    EXPECT num_instances=4 num_hosts=2 anomalies=[]
           hosts.0.hostname=hostA hosts.0.host_index=0 hosts.0.instances=[0,1]
           hosts.1.hostname=hostB hosts.1.host_index=1 hosts.1.instances=[2,3]
           instances.0.hostname=hostA instances.0.host_index=0 instances.0.local_instance_index=0
           instances.0.num_local_instances=2
           instances.1.hostname=hostA instances.1.host_index=0 instances.1.local_instance_index=1
           instances.2.hostname=hostB instances.2.host_index=1 instances.2.local_instance_index=0
           instances.2.num_local_instances=2
           instances.3.hostname=hostB instances.3.host_index=1 instances.3.local_instance_index=1
    COMMAND ${fake_hosts_mpirun} --host hostA:2,hostB:2 -np 4 ${popdist} topology --all --json)
  popdist_all_test(all.fake_hosts_3_1 RANKS 4
    EXPECT num_instances=4 num_hosts=2 anomalies=[]
           hosts.0.hostname=hostA hosts.0.instances=[0,1,2] hosts.1.hostname=hostB hosts.1.instances=[3]
           instances.0.host_index=0 instances.0.local_instance_index=0 instances.0.num_local_instances=3
           instances.2.hostname=hostA instances.2.host_index=0 instances.2.local_instance_index=2
           instances.2.num_local_instances=3
           instances.3.hostname=hostB instances.3.host_index=1 instances.3.local_instance_index=0
           instances.3.num_local_instances=1 instances.3.provenance.host_index=mpi
    COMMAND ${fake_hosts_mpirun} --host hostA:3,hostB:1 -np 4 ${popdist} topology --all --json)
  popdist_all_test(all.fake_hosts_table RANKS 4
    STDOUT "4 instances on 2 hosts" "^\\| hosts +\\| +hostA \\(0\\) +\\| +hostB \\(1\\) +\\|$"
           "^3 +hostB +1 +0/1 "
    COUNT "1:^Anomalies: none$"
    COMMAND ${fake_hosts_mpirun} --host hostA:3,hostB:1 -np 4 ${popdist} topology --all)
else()
  foreach(name all.fake_hosts_2_2 all.fake_hosts_3_1 all.fake_hosts_table)
    add_test(NAME cli.${name}
             COMMAND ${CMAKE_COMMAND} -E echo "SKIP: fake hosts: ${POPDIST_FAKE_HOSTS_MISSING}")
    set_tests_properties(cli.${name} PROPERTIES LABELS "cli;mpi" SKIP_REGULAR_EXPRESSION "SKIP:")
  endforeach()
endif()
