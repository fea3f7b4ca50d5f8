"""Instance 1 dies of an uncaught exception while the others wait in a barrier: the abort hook
popdist installed (it initialized MPI) must end the whole job instead of leaving them waiting."""

import popdist

popdist.init()
if popdist.getInstanceIndex() == 1:
    raise RuntimeError("boom on instance 1")
popdist.synchronize()  # never completes: instance 1 never arrives
# One write per line (its "\n" with it): the instances share mpirun's output, and print() under
# PYTHONUNBUFFERED writes the text and the "\n" apart, so another instance's line could come between.
print("unreachable: the barrier completed without instance 1\n", end="", flush=True)
