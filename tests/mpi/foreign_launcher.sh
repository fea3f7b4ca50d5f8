#!/bin/sh
# popdist built against Open MPI, started by MPICH's hydra: each process is an Open MPI job of one
# ("MPI makes it rank 0 of 1"), and init()'s TopologyError must name both MPIs -- the library's
# and the launcher's -- and what to do (src/runtime/launcher_mismatch.hpp). Skips (77), naming
# what is missing, without mpiexec.hydra.
# usage: foreign_launcher.sh <init fault program (tests/mpi/init_fault_main.cpp)>
hydra=$(command -v mpiexec.hydra) ||
  { echo "SKIP: mpiexec.hydra (MPICH's launcher, Debian's mpich package) is not installed"; exit 77; }
output=$("$hydra" -n 2 "$1" "and MPICH's hydra or Intel MPI started this process" 2>&1)
status=$?
printf '%s\n' "$output"
[ "$status" -eq 0 ] || { echo "FAILED: $hydra -n 2 $1 ended with status $status"; exit 1; }
for instance in 0 1; do
  printf '%s\n' "$output" | grep -q "instance $instance of 2 .*but MPI makes it rank 0 of 1; popdist is built against \
Open MPI v.* (MPI_Get_library_version), and MPICH's hydra or Intel MPI started this process (PMI_RANK=$instance, \
PMI_SIZE=2): .*Build popdist against the MPI whose launcher you use .*launch with the MPI popdist was built \
against: Open MPI's mpirun (or popdist run)$" ||
    { echo "FAILED: instance $instance's error does not name both MPIs and what to do"; exit 1; }
done
echo "both instances' errors name Open MPI, hydra and what to do"
