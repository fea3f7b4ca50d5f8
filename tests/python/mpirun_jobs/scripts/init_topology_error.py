"""init() checks the instances against each other: here they disagree about the job's replicas."""

import popdist

try:
    popdist.init()
except popdist.TopologyError as error:
    print(f"instance {popdist.getInstanceIndex()}: TopologyError: {error}", flush=True)
else:
    print(f"instance {popdist.getInstanceIndex()}: init() accepted inconsistent instances", flush=True)
