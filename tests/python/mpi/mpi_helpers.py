"""Shared by the multi-rank tests: this rank, the job size, and a rank-count skip."""

import pytest
from mpi4py import MPI

RANK = MPI.COMM_WORLD.Get_rank()
SIZE = MPI.COMM_WORLD.Get_size()

# Filled in by the conftest's session fixture just before it calls popdist.init().
STARTUP = {}


def needs_ranks(n):
    return pytest.mark.skipif(SIZE < n, reason=f"needs at least {n} ranks (running {SIZE})")
