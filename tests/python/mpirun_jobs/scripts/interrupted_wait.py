"""Instance 0 waits in a blocking popdist call (argv[2], see CALLS) for instance 1, which comes
only after argv[1] seconds; the test sends instance 0 SIGINT meanwhile. KeyboardInterrupt must
come at once (not when instance 1 arrives, nor never), and the job must end. Instances beyond 1
(the subset forms run 3) only start MPI and leave."""

import os
import sys
import time

import popdist


def execute():
    # Instance 0's function returns at once: it then waits for instance 1's result agreement.
    popdist.execute_on_instances({0, 1}, time.sleep, late if me == 1 else 0)


def torch_group():
    import popdist.torch

    popdist.torch.init_process_group(timeout=60)


CALLS = {
    "untimed": lambda: popdist.synchronize(),
    "timed": lambda: popdist.synchronize(timeout=60),
    "subset": lambda: popdist.synchronize(participants={0, 1}),
    "subset-timed": lambda: popdist.synchronize(participants={0, 1}, timeout=60),
    "register": lambda: popdist.registerCommunicator({0, 1}, "pair"),
    "execute": execute,
    "init": popdist.init,
    "torch": torch_group,
}

late = float(sys.argv[1])
form = sys.argv[2]
me = popdist.getInstanceIndex()
if form == "torch":
    import torch  # noqa: F401 - before the wait: importing it takes seconds
if form != "init":
    popdist.init()
if me >= 2:
    sys.exit(0)
if me == 1 and form != "execute":
    time.sleep(late)
elif me == 0:
    # One write per line (its "\n" with it): the instances share mpirun's output, and print() under
    # PYTHONUNBUFFERED writes the text and the "\n" apart, so another instance's line could come between.
    print(f"waiting pid {os.getpid()}\n", end="", flush=True)
try:
    CALLS[form]()
    print(f"instance {me}: {form} returned at {time.time()}\n", end="", flush=True)
except KeyboardInterrupt:
    print(f"instance {me}: KeyboardInterrupt at {time.time()!r}\n", end="", flush=True)
    raise
