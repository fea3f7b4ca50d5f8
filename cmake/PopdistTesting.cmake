# Helpers to register tests with CTest.
#
# popdist_mpi_environment(<out-var>) -- the environment every test that runs mpirun needs here:
#   as root Open MPI refuses to start without the two ALLOW variables; with more ranks than cores
#   busy-polling ranks starve each other unless they yield; loopback only; and `pml ^cm` skips
#   ~200 ms of probing for fabrics a single host does not have (design.md §8).
#
# popdist_add_mpi_test(NAME <name> COMMAND <exe> [args...] RANKS <n>... [TIMEOUT <s>] [LABELS ...])
#   registers <name>.<n>ranks per rank count, run as `mpirun -np <n> --oversubscribe <exe> args`.
#   (after KaMPIng's KaTestrophe.cmake and Boost.MPI's add_mpi_tests)

function(popdist_mpi_environment out)
  set(${out}
      OMPI_ALLOW_RUN_AS_ROOT=1
      OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
      OMPI_MCA_mpi_yield_when_idle=1
      OMPI_MCA_btl_tcp_if_include=lo
      OMPI_MCA_oob_tcp_if_include=lo
      OMPI_MCA_pml=^cm
      OMPI_MCA_rmaps_base_oversubscribe=1
      PARENT_SCOPE)
endfunction()

function(popdist_add_mpi_test)
  cmake_parse_arguments(ARG "" "NAME;TIMEOUT" "COMMAND;RANKS;LABELS;MPI_ARGS" ${ARGN})
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 120)
  endif()
  popdist_mpi_environment(mpi_env)
  foreach(ranks IN LISTS ARG_RANKS)
    set(test_name ${ARG_NAME}.${ranks}ranks)
    add_test(NAME ${test_name}
             COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${ranks} --oversubscribe --bind-to none
                     ${ARG_MPI_ARGS} ${ARG_COMMAND})
    set_tests_properties(${test_name} PROPERTIES
      PROCESSORS ${ranks}
      TIMEOUT ${ARG_TIMEOUT}
      LABELS "mpi;${ARG_LABELS}"
      ENVIRONMENT "${mpi_env}")
  endforeach()
endfunction()

# popdist_catch_tests(<target> PREFIX <prefix> LABELS <label>... [TIMEOUT <s>])
#   catch_discover_tests with several labels. Catch2 v2's discovery flattens a list property
#   (LABELS "a;b" becomes LABELS a, then a property named b), so the labels are set by a CTest
#   include file that runs after the discovered tests are defined.
function(popdist_catch_tests target)
  cmake_parse_arguments(ARG "" "PREFIX;TIMEOUT" "LABELS" ${ARGN})
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 60)
  endif()
  catch_discover_tests(${target} TEST_PREFIX "${ARG_PREFIX}" TEST_LIST ${target}_TESTS
                       PROPERTIES TIMEOUT ${ARG_TIMEOUT})
  set(labels_file ${CMAKE_CURRENT_BINARY_DIR}/${target}_labels.cmake)
  file(WRITE ${labels_file} "set_tests_properties(\${${target}_TESTS} PROPERTIES LABELS \"${ARG_LABELS}\")\n")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES ${labels_file})
endfunction()

# popdist_testbed_setup(<test>)
#   marks <test> as the fixture setup of a testbed that exists once per machine (the namespaces,
#   the Slurm cluster; tests/testbed/testbed_lock.py): it may wait POPDIST_TESTBED_WAIT seconds for
#   a test run of another build tree to give the testbed back, so its timeout is that wait plus
#   120 s of its own, and it takes one processor (it mostly waits). Call it after any
#   set_tests_properties that gives <test> a TIMEOUT or PROCESSORS.
set(POPDIST_TESTBED_WAIT 3600 CACHE STRING
    "Seconds a testbed's setup waits for another test run on this machine to give the testbed back")
function(popdist_testbed_setup test)
  math(EXPR timeout "${POPDIST_TESTBED_WAIT} + 120")
  set_tests_properties(${test} PROPERTIES TIMEOUT ${timeout} PROCESSORS 1
                       ENVIRONMENT "POPDIST_TESTBED_WAIT=${POPDIST_TESTBED_WAIT}")
endfunction()
