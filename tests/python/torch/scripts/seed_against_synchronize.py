"""Instance 0 builds a popdist.torch.DataLoader (its seed agreement: an allgather of bytes) while
every other instance calls popdist.synchronize(): two different popdist operations meet. Run
with POPDIST_SYNC_TIMEOUT. Each instance prints what its call did and exits 0, so that the job
ends by itself and the test reads every instance's line."""

import popdist
import popdist.torch

popdist.init()
me = popdist.getInstanceIndex()
try:
    if me == 0:
        popdist.torch.DataLoader(list(range(8)), batch_size=2)
    else:
        popdist.synchronize()
    # One write per line (its "\n" with it): the instances share mpirun's output, and print() under
    # PYTHONUNBUFFERED writes the text and the "\n" apart, so another instance's line could come between.
    print(f"instance {me}: returned\n", end="", flush=True)
except Exception as error:  # noqa: BLE001 -- the test reads whichever error it was
    print(f"instance {me}: {type(error).__name__}: {error}\n", end="", flush=True)
