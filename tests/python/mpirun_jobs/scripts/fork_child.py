"""A fork() child of an instance (after init()): the getters answer, MPI-using calls raise a
UsageError saying that it is a fork child, and however it ends (argv[1]: exit0, exit3, raise)
its exit handlers leave the parent's MPI alone, so the job goes on and ends cleanly."""

import json
import os
import sys

import popdist

popdist.init()
me = popdist.getInstanceIndex()
pid = os.fork()
if pid == 0:
    found = {"instance": popdist.getInstanceIndex(), "count": popdist.getNumInstances(),
             "initialized": popdist.isBackendInitialized()}
    for name, call in [("execute", lambda: popdist.execute_on_instances({0, 1}, print, "child ran it")),
                       ("synchronize", popdist.synchronize),
                       ("synchronize_timed", lambda: popdist.synchronize(timeout=5)),
                       ("register", lambda: popdist.registerCommunicator({0, 1}, "in-child")),
                       ("init", popdist.init)]:
        try:
            call()
            found[name] = None
        except popdist.UsageError as error:
            found[name] = str(error)
    # One write per line (its "\n" with it): the instances share mpirun's output, and print() under
    # PYTHONUNBUFFERED writes the text and the "\n" apart, so another instance's line could come between.
    print(f"child of {me}: " + json.dumps(found) + "\n", end="", flush=True)
    mode = sys.argv[1]
    if mode == "raise":
        raise RuntimeError(f"child of instance {me} fails")
    sys.exit(3 if mode == "exit3" else 0)
_, status = os.waitpid(pid, 0)
popdist.synchronize()  # the parents still meet: the child broke nothing
popdist.synchronize(timeout=30)
print(f"instance {me}: child status {os.waitstatus_to_exitcode(status)}; job ok\n", end="", flush=True)
