"""Shared fixtures of the Python suites.

Layout:
  tests/python/test_*.py              single process, no launcher (run by plain pytest)
  tests/python/mpirun_jobs/test_*.py  single pytest process that starts mpirun jobs (examples, scripts)
  tests/python/launch/                popdist.launch: jobs started from Python, a notebook in a real kernel
  tests/python/torch/                 popdist.torch and popdist.lightning (their own jobs included)
  tests/python/mpi/test_*.py          run by every rank: mpirun -n N python -m mpi4py -m pytest tests/python/mpi
"""

import os

import pytest

from helpers import launcher_variables

# The multi-rank suite only makes sense under a launcher; a plain `pytest` skips that directory.
_LAUNCHED = any(name in os.environ for name in ("OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"))
collect_ignore = [] if _LAUNCHED else ["mpi"]
if _LAUNCHED:
    # Under mpirun only the multi-rank suite runs (the others would start mpirun inside mpirun).
    collect_ignore += ["mpirun_jobs", "launch"]


@pytest.fixture
def env(monkeypatch):
    """A clean environment (no launcher or POPDIST_* variable); returns a setter."""
    for name in launcher_variables():
        monkeypatch.delenv(name)

    def set_vars(**variables):
        for name, value in variables.items():
            monkeypatch.setenv(name, str(value))

    return set_vars
