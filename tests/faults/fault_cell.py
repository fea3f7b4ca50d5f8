"""One cell of the fault matrix in Python, for the same driver as fault_cell_main.cpp (read its
header for the faults, phases and lines). Where Python differs:

  raise  an exception escapes the script: before init() Python exits with status 1; after it,
         popdist's excepthook prints the traceback and ends the job (MPI_Abort, status 1)
  exit   sys.exit(3): after init(), popdist's exit handler ends the job with status 3

Usage: python3 fault_cell.py <fault> <phase> <token>
"""

import os
import signal
import sys
import time

import popdist

VICTIM = 1
SURVIVOR_CAUGHT_ERROR = 5
FAULTS = ("kill", "exit", "raise", "stop")
PHASES = ("before_init", "in_init", "sync", "timed_sync", "execute", "register")


def fail(fault, phase):
    # One write per line (its "\n" with it): the instances share mpirun's output, and print() under
    # PYTHONUNBUFFERED writes the text and the "\n" apart, so another instance's line could come between.
    print(f"victim {VICTIM}: {fault} at {phase}\n", end="", flush=True)
    if fault == "kill":
        os.kill(os.getpid(), signal.SIGKILL)
    if fault == "exit":
        sys.exit(3)
    if fault == "raise":
        raise RuntimeError(f"the fault matrix's victim raises at {phase}")
    os.kill(os.getpid(), signal.SIGSTOP)
    while True:  # continued by the launcher before it signals: stay silent until the signal
        signal.pause()


def blocking_call(phase):
    popdist.init()
    everyone = range(popdist.getNumInstances())
    if phase == "sync":
        popdist.synchronize()
    elif phase == "timed_sync":
        popdist.synchronize(timeout=3)
    elif phase == "execute":
        popdist.execute_on_instances(everyone, lambda: None)
    elif phase == "register":
        popdist.registerCommunicator(everyone, "fault-matrix")


def main():
    if len(sys.argv) != 4 or sys.argv[1] not in FAULTS or sys.argv[2] not in PHASES:
        print(f"usage: {sys.argv[0]} {'|'.join(FAULTS)} {'|'.join(PHASES)} <token>", file=sys.stderr)
        return 2
    fault, phase = sys.argv[1], sys.argv[2]
    me = popdist.getInstanceIndex()  # from the launcher's variables, before init()
    if me == VICTIM:
        if phase == "in_init":
            time.sleep(0.3)
        elif phase != "before_init":
            popdist.init()
            time.sleep(0.3)
        fail(fault, phase)
    if phase == "before_init":
        time.sleep(1.0)
    status = 0
    try:
        blocking_call(phase)
        outcome = f"completed {phase}"
    except popdist.TimeoutError as error:
        outcome = f"TimeoutError missing {error.missing_instances}: {error}"
        status = SURVIVOR_CAUGHT_ERROR
    except popdist.PopDistError as error:
        outcome = f"Error: {error}"
        status = SURVIVOR_CAUGHT_ERROR
    print(f"survivor {me}: {outcome}\n", end="", flush=True)
    return status


if __name__ == "__main__":
    sys.exit(main())
