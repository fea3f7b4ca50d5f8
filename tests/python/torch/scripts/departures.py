"""Instance 1 leaves or is late around a collective popdist.torch makes on the user's behalf
(argv[1]): "exit-before-group" (exits 0 after init() instead of init_process_group), "exit-before-
loader" (exits 0 instead of creating the DataLoader: the seed agreement), "late-to-group" (comes
to init_process_group long after instance 0's timeout), "synchronize-instead-of-loader" (calls
popdist.synchronize() and exits 0 while instance 0 creates the DataLoader: the agreement's meeting
is apart from synchronize's barrier, so neither completes the other), "exit-before-trainer-kwargs" (exits 0 while instance 0
asks popdist.lightning for the Trainer's arguments, bounded by PopdistEnvironment's timeout), "exit-before-loader-untimed"
(as exit-before-loader, with no timeout given: run with POPDIST_SYNC_TIMEOUT=5). Instance 0 must fail within its timeout
(5 s) with a TimeoutError naming instance 1, and the job must end."""

import sys
import time

import popdist
import popdist.torch

mode = sys.argv[1]
popdist.init()
me = popdist.getInstanceIndex()
if mode in ("exit-before-loader", "synchronize-instead-of-loader"):
    popdist.torch.init_process_group(timeout=5)
if mode == "exit-before-loader-untimed":
    popdist.torch.init_process_group()
if mode == "exit-before-trainer-kwargs":
    import popdist.lightning

    popdist.lightning.PopdistEnvironment(timeout=5)
if me == 1:
    if mode == "synchronize-instead-of-loader":
        popdist.synchronize()
    if mode == "late-to-group":
        time.sleep(60)  # the job is ended long before
        popdist.torch.init_process_group(timeout=5)
    sys.exit(0)
try:
    if mode in ("exit-before-loader", "exit-before-loader-untimed", "synchronize-instead-of-loader"):
        popdist.torch.DataLoader(list(range(8)), batch_size=2)
    elif mode == "exit-before-trainer-kwargs":
        popdist.lightning.trainer_kwargs()
    else:
        popdist.torch.init_process_group(timeout=5)
except popdist.TimeoutError as error:
    # One write per line (its "\n" with it): the instances share mpirun's output, and print() under
    # PYTHONUNBUFFERED writes the text and the "\n" apart, so another instance's line could come between.
    print(f"instance 0 failed: missing {error.missing_instances}: {error}\n", end="", flush=True)
    raise
print("instance 0: unreachable\n", end="", flush=True)
