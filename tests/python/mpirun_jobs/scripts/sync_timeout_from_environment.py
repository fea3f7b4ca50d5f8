"""POPDIST_SYNC_TIMEOUT bounds a synchronize() that has no timeout argument."""

import sys

import popdist

popdist.init()
late = popdist.getNumInstances() - 1
if popdist.getInstanceIndex() != late:
    try:
        popdist.synchronize(participants=range(popdist.getNumInstances()))
    except popdist.TimeoutError as error:
        # One write per line (its "\n" with it): the instances share mpirun's output, and print() under
        # PYTHONUNBUFFERED writes the text and the "\n" apart, so another instance's line could come between.
        print(f"instance {popdist.getInstanceIndex()}: timed out, missing {error.missing_instances}\n", end="", flush=True)
        sys.exit(0)
    sys.exit("synchronize returned although an instance never came")
print(f"instance {late}: stayed away\n", end="", flush=True)
