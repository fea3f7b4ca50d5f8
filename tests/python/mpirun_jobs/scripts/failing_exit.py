"""Instance 1 leaves with sys.exit(3) while the others wait in a barrier. Finalizing at exit
would wait for them while they wait for it: popdist's exit handler sees the failing status and
ends the whole job with it instead."""

import sys

import popdist

popdist.init()
if popdist.getInstanceIndex() == 1:
    print("instance 1: leaving with status 3", flush=True)
    sys.exit(3)
popdist.synchronize()  # never completes: instance 1 never arrives
print("unreachable: the barrier completed without instance 1", flush=True)
