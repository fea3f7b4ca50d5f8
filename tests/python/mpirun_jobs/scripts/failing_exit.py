"""Instance 1 leaves with sys.exit(3) while the others wait in a barrier. Finalizing at exit
would wait for them while they wait for it: popdist's exit handler sees the failing status and
ends the whole job with it instead."""

import sys

import popdist

popdist.init()
if popdist.getInstanceIndex() == 1:
    # One write per line (its "\n" with it): the instances share mpirun's output, and print() under
    # PYTHONUNBUFFERED writes the text and the "\n" apart, so another instance's line could come between.
    print("instance 1: leaving with status 3\n", end="", flush=True)
    sys.exit(3)
popdist.synchronize()  # never completes: instance 1 never arrives
print("unreachable: the barrier completed without instance 1\n", end="", flush=True)
