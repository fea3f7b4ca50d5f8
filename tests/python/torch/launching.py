"""Starting the popdist.torch check scripts under real launchers from one pytest process, and reading
the per-instance reports they write (instance<N>.json). Every job runs under a timeout in its own
session, so a hang fails the test and leaves no process behind."""

import contextlib
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import MPI_ENVIRONMENT, popdist_cli

ROOT = Path(__file__).resolve().parents[3]
SCRIPTS = Path(__file__).resolve().parent / "scripts"
MPIRUN = shutil.which("mpirun")

# Launcher identities and a user's rendezvous variables: the test decides them.
FOREIGN_PREFIXES = ("OMPI_", "PMI_", "PMIX_", "MPI_LOCAL", "MV2_", "PALS_", "SLURM_", "POPDIST_", "TORCHELASTIC_")
FOREIGN_NAMES = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "GROUP_RANK", "MASTER_ADDR", "MASTER_PORT")


def fake_host_testbed():
    """The fake-host testbed: POPDIST_TESTBED, else the repository's tests/testbed."""
    for candidate in (os.environ.get("POPDIST_TESTBED"), ROOT / "tests" / "testbed"):
        if candidate and (Path(candidate) / "fake_rsh.sh").exists():
            return Path(candidate)
    return None


def environment(**extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith(FOREIGN_PREFIXES) and k not in FOREIGN_NAMES}
    env.update(MPI_ENVIRONMENT)
    env.setdefault("PYTHONPATH", "")
    env.setdefault("OMP_NUM_THREADS", "1")  # 2 cores for every instance: no thread pools fighting
    env.update(extra)
    return env


def run(argv, timeout=150, **extra_env):
    """Runs a job; kills its whole session on timeout and fails the test."""
    process = subprocess.Popen([str(a) for a in argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env=environment(**extra_env), start_new_session=True)
    try:
        out, err = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        out, err = process.communicate()
        pytest.fail(f"timed out after {timeout} s: {argv}\n--- stdout\n{out}\n--- stderr\n{err}")
    return subprocess.CompletedProcess(argv, process.returncode, out, err)


def mpirun_argv(instances, *command, extra=()):
    if MPIRUN is None:
        pytest.skip("mpirun (Open MPI) is not on PATH")
    # "mpirun" by name: Open MPI treats an absolute path as --prefix, which the fake hosts' shell
    # command cannot take.
    return ["mpirun", "-np", str(instances), "--oversubscribe", "--bind-to", "none", "-x", "PYTHONPATH", "-x",
            "OMP_NUM_THREADS", *extra, *command]


def popdist_run_argv(instances, *command):
    cli = popdist_cli()
    if cli is None:
        pytest.skip("the popdist command is not installed (pip install .)")
    return [cli, "run", "--num-instances", str(instances), "--", *command]


def python(script, *args):
    return [sys.executable, str(SCRIPTS / script), *map(str, args)]


def reports(out_dir, result, instances):
    """{instance: report}; fails with the job's output when an instance wrote none."""
    found = {}
    for path in Path(out_dir).glob("instance*.json"):
        found[int(path.stem[len("instance"):])] = json.loads(path.read_text())
    assert sorted(found) == list(range(instances)), (
        f"instances that reported: {sorted(found)}, expected 0..{instances - 1}; exit {result.returncode}\n"
        f"--- stdout\n{result.stdout}\n--- stderr\n{result.stderr}")
    return found


@contextlib.contextmanager
def taken_port():
    """A TCP port that a socket listens on (every address) while the block runs."""
    with socket.socket() as taken:
        taken.bind(("0.0.0.0", 0))
        taken.listen()
        yield taken.getsockname()[1]


def free_port():
    """A TCP port free now that the kernel will not hand to another process before the job binds it:
    one outside its ephemeral range (ip_local_port_range), as `popdist run` chooses MASTER_PORT.
    (Binding port 0 and releasing it left the port to the next process that binds port 0.)"""
    first, last = (int(n) for n in Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split())
    offered = [p for p in range(10000, 65536) if not first <= p <= last]
    start = random.randrange(len(offered))
    for port in offered[start:] + offered[:start]:
        with socket.socket() as probe:
            try:
                probe.bind(("0.0.0.0", port))
            except OSError:
                continue
            return port
    raise RuntimeError(f"no free TCP port outside the ephemeral range {first}..{last}")
