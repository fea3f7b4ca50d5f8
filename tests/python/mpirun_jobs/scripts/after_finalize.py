"""After finalize(), calls that need MPI say that MPI cannot be started twice (not "call init()
first", advice that would fail), and init() says the same."""

import json

import popdist

popdist.init()
popdist.synchronize()
popdist.finalize()
found = {}
for name, call in [("synchronize", popdist.synchronize), ("register", lambda: popdist.registerCommunicator({0, 1})),
                   ("execute", lambda: popdist.execute_on_instances({0}, print)), ("init", popdist.init)]:
    try:
        call()
        found[name] = None
    except popdist.UsageError as error:
        found[name] = str(error)
# One write per line (its "\n" with it): the instances share mpirun's output, and print() under
# PYTHONUNBUFFERED writes the text and the "\n" apart, so another instance's line could come between.
print("after finalize: " + json.dumps(found) + "\n", end="", flush=True)
