"""Instance 0 waits in synchronize() (argv[2]: untimed, or timed with 60 s) for instance 1, which
comes only after argv[1] seconds; the test sends instance 0 SIGINT meanwhile. KeyboardInterrupt
must come at once (not when instance 1 arrives, nor never), and the job must end."""

import os
import sys
import time

import popdist

popdist.init()
me = popdist.getInstanceIndex()
late = float(sys.argv[1])
timed = sys.argv[2] == "timed"
if me == 1:
    time.sleep(late)
else:
    print(f"waiting pid {os.getpid()}", flush=True)
try:
    popdist.synchronize(timeout=60) if timed else popdist.synchronize()
    print(f"instance {me}: synchronize returned at {time.time()}", flush=True)
except KeyboardInterrupt:
    print(f"instance {me}: KeyboardInterrupt at {time.time()!r}", flush=True)
    raise
