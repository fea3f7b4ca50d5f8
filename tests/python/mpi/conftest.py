"""The multi-rank suite: every rank runs the same tests,

    mpirun -n N python -m mpi4py -m pytest tests/python/mpi

(`python -m mpi4py` initializes MPI before popdist does: the "mpi4py first" interop case; the
"popdist first" case is tests/python/launch/). A failure on one rank must never leave the others
waiting in a collective of the failed test: the failing rank prints its report with its rank and
aborts the whole job (MPI_Abort), and a per-test watchdog dumps every thread's stack and exits a
rank that is stuck, which makes mpirun end the job.
"""

import faulthandler
import os
import sys

import pytest
from mpi4py import MPI

import popdist

from mpi_helpers import RANK, SIZE, STARTUP

# Per-test watchdog (seconds); POPDIST_TEST_TIMEOUT overrides it (the launch suite tests the watchdog itself).
TEST_TIMEOUT_SECONDS = float(os.environ.get("POPDIST_TEST_TIMEOUT", "60"))


@pytest.fixture(scope="session", autouse=True)
def popdist_initialized():
    # `python -m mpi4py` initialized MPI when it imported mpi4py.MPI; popdist joins it.
    STARTUP["mpi_initialized_before_popdist_init"] = bool(MPI.Is_initialized())
    STARTUP["backend_initialized_before_init"] = popdist.isBackendInitialized()
    popdist.init()
    yield


@pytest.fixture(autouse=True)
def watchdog():
    faulthandler.dump_traceback_later(TEST_TIMEOUT_SECONDS, exit=True, file=sys.__stderr__)
    yield
    faulthandler.cancel_dump_traceback_later()


@pytest.fixture(autouse=True)
def realign():
    """Every test starts and ends together, so a test's stray messages never meet the next one."""
    MPI.COMM_WORLD.Barrier()
    yield
    MPI.COMM_WORLD.Barrier()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.failed:
        sys.__stderr__.write(f"\n[rank {RANK}/{SIZE}] FAILED {item.nodeid} ({report.when})\n{report.longreprtext}\n")
        sys.__stderr__.flush()
        sys.stdout.flush()
        MPI.COMM_WORLD.Abort(1)


def pytest_collection_modifyitems(config, items):
    """Tests marked `abandons_world` run last: a timed-out set is abandoned for the rest of the job
    (design.md §5.3), and for their set of every instance that would break the tests after them."""
    items.sort(key=lambda item: item.get_closest_marker("abandons_world") is not None)


@pytest.hookimpl(trylast=True)
def pytest_configure(config):
    config.addinivalue_line("markers", "abandons_world: leaves the set of all instances unusable; runs last")
    # One report for the job: rank 0's. The other ranks stay silent unless a test fails there,
    # which pytest_runtest_makereport prints (with the rank) before aborting the job.
    if RANK != 0:
        reporter = config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            config.pluginmanager.unregister(reporter)


def pytest_report_header(config):
    return f"rank {RANK} of {SIZE}"

