"""popdist initializes MPI, mpi4py is imported afterwards and uses popdist's communicators."""

import sys

import popdist

assert "mpi4py" not in sys.modules
popdist.init()
from mpi4py import MPI  # noqa: E402 - imported after popdist started MPI, on purpose

assert MPI.Is_initialized() and popdist.isBackendInitialized()
rank, size = popdist.getInstanceIndex(), popdist.getNumInstances()
assert (MPI.COMM_WORLD.Get_rank(), MPI.COMM_WORLD.Get_size()) == (rank, size)
total = popdist.comm().allreduce(rank)
assert total == size * (size - 1) // 2, total
pair = popdist.comm(participants={0, size - 1})
if rank in (0, size - 1):
    assert pair.Get_size() == min(2, size)
popdist.synchronize()
mode = sys.argv[1] if len(sys.argv) > 1 else "explicit-finalize"
if mode == "explicit-finalize":
    popdist.finalize()
    assert not popdist.isBackendInitialized()
    assert MPI.Is_finalized()  # popdist started MPI, so popdist finalized it
    popdist.finalize()  # idempotent
# One write per line (its "\n" with it): the instances share mpirun's output, and print() under
# PYTHONUNBUFFERED writes the text and the "\n" apart, so another instance's line could come between.
print(f"instance {rank}: popdist-first ok ({mode})\n", end="", flush=True)
# mode "at-exit": popdist finalizes MPI at interpreter exit, after mpi4py's objects are released.
