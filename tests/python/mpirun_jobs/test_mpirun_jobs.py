"""Jobs launched with mpirun from a single pytest process: the examples, popdist initializing MPI
before mpi4py, the abort-on-uncaught-exception hook, and POPDIST_SYNC_TIMEOUT.

Every job runs under a timeout, so a hang fails the test instead of blocking the suite.
"""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import MPI_ENVIRONMENT

ROOT = Path(__file__).resolve().parents[3]
SCRIPTS = Path(__file__).resolve().parent / "scripts"
MPIRUN = shutil.which("mpirun")

pytestmark = [pytest.mark.mpirun, pytest.mark.skipif(MPIRUN is None, reason="mpirun (Open MPI) is not on PATH")]


def environment(**extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OMPI_", "PMIX_", "POPDIST_"))}
    env.update(MPI_ENVIRONMENT)
    env.update(extra)
    return env


def mpirun(ranks, *command, timeout=120, **extra_env):
    # -x PYTHONPATH: a build-tree run (tests/python/run.sh --build-tree) must reach every rank.
    argv = [MPIRUN, "-np", str(ranks), "--oversubscribe", "--bind-to", "none", "-x", "PYTHONPATH",
            sys.executable, *map(str, command)]
    env = environment(**extra_env)
    env.setdefault("PYTHONPATH", "")
    return subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env=env, check=False)


@pytest.mark.parametrize("ranks", [2, 4])
def test_train_data_parallel_converges_under_mpirun(tmp_path, ranks):
    result = mpirun(ranks, ROOT / "examples" / "train_data_parallel.py", "--checkpoint-dir", tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
    assert f"training on {ranks} instance(s)" in out
    assert re.search(r"final loss [0-9.e-]+ \(initial [0-9.]+\); converged=True; weights in sync across instances: True", out)
    assert out.count("final loss") == 1  # only instance 0 logs
    assert all(line.startswith("[instance 0]") for line in out.splitlines() if "checkpoint" in line)
    checkpoints = sorted(p.name for p in tmp_path.iterdir())
    assert checkpoints == ["step00050.npz", "step00100.npz", "step00150.npz", "step00200.npz"]


def test_train_data_parallel_runs_unlaunched(tmp_path):
    result = subprocess.run([sys.executable, ROOT / "examples" / "train_data_parallel.py", "--checkpoint-dir", tmp_path,
                             "--steps", "100"], capture_output=True, text=True, timeout=120, env=environment(),
                            check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "training on 1 instance(s)" in result.stdout and "converged=True" in result.stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == ["step00050.npz", "step00100.npz"]


def test_popdist_style_script_runs_unchanged_as_four_instances(tmp_path):
    result = mpirun(4, ROOT / "examples" / "popdist_style_script.py", "--data-dir", tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    for instance in range(4):
        assert f"instance {instance}/4 (local {instance}): replicas [{instance}, {instance + 1}) of 4" in result.stdout
        assert f"instance {instance}: 25 samples, first {instance}" in result.stdout
    assert "done: 4 instance(s)" in result.stdout
    assert (tmp_path / "dataset.json").is_file()


def test_popdist_style_script_runs_plainly_as_one_instance_without_mpi(tmp_path):
    # `if isPopdistEnvSet(): init()`, then unconditional execute_on_instances and synchronize.
    result = subprocess.run([sys.executable, ROOT / "examples" / "popdist_style_script.py", "--data-dir", tmp_path],
                            capture_output=True, text=True, timeout=120, env=environment(), check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "instance 0/1 (local 0): replicas [0, 1) of 1" in result.stdout
    assert "instance 0: 100 samples, first 0" in result.stdout and "done: 1 instance(s)" in result.stdout
    assert (tmp_path / "dataset.json").is_file()


@pytest.mark.parametrize("mode", ["explicit-finalize", "at-exit"])
@pytest.mark.parametrize("ranks", [1, 3])
def test_popdist_initializes_mpi_before_mpi4py(ranks, mode):
    result = mpirun(ranks, SCRIPTS / "popdist_first.py", mode)
    assert result.returncode == 0, result.stdout + result.stderr
    # (Lines printed after MPI_Finalize may reach mpirun unsplit: match, do not split.)
    found = re.findall(r"instance (\d+): popdist-first ok \(([a-z-]+)\)", result.stdout)
    assert sorted(found) == [(str(i), mode) for i in range(ranks)]


def test_uncaught_exception_on_one_instance_aborts_the_job():
    result = mpirun(3, SCRIPTS / "uncaught_exception.py", timeout=60)
    assert result.returncode != 0
    # The traceback comes first (mpirun may interleave its own abort notice with it).
    assert "Traceback (most recent call last)" in result.stderr and "RuntimeError" in result.stderr
    assert "boom on instance 1" in result.stderr
    assert "unreachable" not in result.stdout


def test_failing_exit_on_one_instance_ends_the_job_with_its_status():
    result = mpirun(3, SCRIPTS / "failing_exit.py", timeout=60)
    assert result.returncode == 3, result.stdout + result.stderr
    assert "instance 1: leaving with status 3" in result.stdout
    assert "popdist: instance 1 exits with status 3 without finalize(): ending the job (MPI_Abort)" in result.stderr
    assert "unreachable" not in result.stdout


def test_sync_timeout_from_the_environment_names_the_missing_instance():
    result = mpirun(3, SCRIPTS / "sync_timeout_from_environment.py", timeout=60, POPDIST_SYNC_TIMEOUT="1")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "instance 0: timed out, missing [2]" in result.stdout
    assert "instance 1: timed out, missing [2]" in result.stdout


def test_init_raises_topology_error_when_instances_disagree():
    # Each rank claims a different number of local replicas, hence a different total.
    wrapper = ("import os, runpy, sys; os.environ['POPDIST_NUM_LOCAL_REPLICAS'] = "
               "str(int(os.environ['OMPI_COMM_WORLD_RANK']) + 1); runpy.run_path(sys.argv[1], run_name='__main__')")
    result = mpirun(2, "-c", wrapper, SCRIPTS / "init_topology_error.py", timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr
    for instance in (0, 1):
        assert f"instance {instance}: TopologyError:" in result.stdout, result.stdout
    assert "accepted" not in result.stdout


# --- the multi-rank pytest harness itself (tests/python/mpi/conftest.py) ------------------------

FAILING_TESTS = '''
import time
from mpi4py import MPI

def test_fails_on_one_rank():
    if MPI.COMM_WORLD.Get_rank() == 1:
        assert False, "deliberate failure on rank 1"
    MPI.COMM_WORLD.Barrier()  # rank 0 waits here for a rank that will never come

def test_hangs_on_one_rank():
    if MPI.COMM_WORLD.Get_rank() == 1:
        time.sleep(600)
    MPI.COMM_WORLD.Barrier()
'''


@pytest.mark.parametrize(("test", "expected"), [
    ("test_fails_on_one_rank", ["[rank 1/2] FAILED", "deliberate failure on rank 1"]),
    ("test_hangs_on_one_rank", ["Timeout (0:00:0", "test_hangs_on_one_rank"]),
])
def test_multi_rank_harness_reports_a_one_rank_failure_and_never_hangs(tmp_path, test, expected):
    for name in ("conftest.py", "mpi_helpers.py"):
        shutil.copy(Path(__file__).resolve().parents[1] / "mpi" / name, tmp_path / name)
    (tmp_path / "test_failing.py").write_text(FAILING_TESTS)
    result = mpirun(2, "-m", "mpi4py", "-m", "pytest", "-p", "no:cacheprovider", "--capture=sys", "-q",
                    "--rootdir", tmp_path, "-c", os.devnull, f"{tmp_path / 'test_failing.py'}::{test}",
                    timeout=90, POPDIST_TEST_TIMEOUT="5")
    assert result.returncode != 0
    for text in expected:
        assert text in result.stderr, result.stdout + result.stderr
