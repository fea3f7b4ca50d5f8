"""init() checks the instances against each other: here they disagree about the job's replicas."""

import popdist

try:
    popdist.init()
except popdist.TopologyError as error:
    # One write per line (its "\n" with it): the instances share mpirun's output, and print() under
    # PYTHONUNBUFFERED writes the text and the "\n" apart, so another instance's line could come between.
    print(f"instance {popdist.getInstanceIndex()}: TopologyError: {error}\n", end="", flush=True)
else:
    print(f"instance {popdist.getInstanceIndex()}: init() accepted inconsistent instances\n", end="", flush=True)
