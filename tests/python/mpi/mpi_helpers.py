"""Shared by the multi-rank tests: this rank, the job size, and a rank-count skip."""

import threading
import time

import pytest
from mpi4py import MPI

RANK = MPI.COMM_WORLD.Get_rank()
SIZE = MPI.COMM_WORLD.Get_size()

# Filled in by the conftest's session fixture just before it calls popdist.init().
STARTUP = {}


def needs_ranks(n):
    return pytest.mark.skipif(SIZE < n, reason=f"needs at least {n} ranks (running {SIZE})")


def run_while_ticking(call):
    """Runs call() (where instance 0 arrives late) and returns how often another Python thread ran
    meanwhile: blocking in MPI must release the GIL."""
    waiting = threading.Event()
    stop = threading.Event()
    ticks = []

    def ticker():
        while not stop.is_set():
            if waiting.is_set():
                ticks.append(1)
            time.sleep(0.001)

    thread = threading.Thread(target=ticker)
    thread.start()
    try:
        if RANK == 0:
            time.sleep(0.5)  # the others wait for us in MPI meanwhile
        waiting.set()
        call()
        waiting.clear()
    finally:
        stop.set()
        thread.join()
    return len(ticks)
