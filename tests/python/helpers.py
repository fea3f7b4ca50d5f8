"""Helpers for the single-process suites: run Python in a subprocess with a controlled environment."""

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

# Every variable a launcher family or PopRun sets (design.md §3): removed before each test so that
# the test decides the whole environment, whatever shell or job pytest itself runs in.
LAUNCHER_PREFIXES = ("OMPI_", "PMI_", "PMIX_", "MPI_LOCAL", "MV2_", "PALS_", "SLURM_", "POPDIST_", "TORCHELASTIC_",
                     "HOROVOD_", "JSM_NAMESPACE_", "ALPS_", "SUBMITIT_")
LAUNCHER_NAMES = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "LOCAL_SIZE", "GROUP_RANK",
                  "GROUP_WORLD_SIZE", "NODE_RANK", "CROSS_RANK")
# Settings of the test harness itself, not of a launch: the popdist command under test.
HARNESS_NAMES = ("POPDIST_CLI",)


def launcher_variables(environ=None):
    environ = os.environ if environ is None else environ
    return [n for n in environ
            if (n.startswith(LAUNCHER_PREFIXES) or n in LAUNCHER_NAMES) and n not in HARNESS_NAMES]


def popdist_cli():
    """The `popdist` command of the package under test: POPDIST_CLI (tests/python/run.sh exports
    it), else the one beside this interpreter's scripts, else the one on PATH (None if none)."""
    candidate = os.environ.get("POPDIST_CLI")
    if candidate:
        return candidate
    beside = Path(sysconfig.get_path("scripts")) / "popdist"
    return str(beside) if beside.exists() else shutil.which("popdist")


def run_python(code, timeout=60):
    """Runs `code` in a fresh interpreter with the current os.environ (tests set it through
    monkeypatch). Returns the CompletedProcess (text)."""
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout, check=False)


def run_json(code, timeout=60):
    """Runs `code` (which must print one JSON document) and returns it parsed; fails with stderr."""
    result = run_python(code, timeout)
    assert result.returncode == 0, f"subprocess failed ({result.returncode}):\n{result.stderr}"
    return json.loads(result.stdout)


GETTERS_SCRIPT = """
import json, popdist
print(json.dumps({
    "instance": popdist.getInstanceIndex(),
    "instances": popdist.getNumInstances(),
    "local_instance": popdist.getLocalInstanceIndex(),
    "local_replicas": popdist.getNumLocalReplicas(),
    "total_replicas": popdist.getNumTotalReplicas(),
    "offset": popdist.getReplicaIndexOffset(),
    "ipus": popdist.getNumIpusPerReplica(),
    "uniform": popdist.isUniformReplicasPerInstance(),
    "env_set": popdist.isPopdistEnvSet(),
    "device_id": popdist.getDeviceId(),
    "ordinals": popdist.getLocalDeviceOrdinals(),
    "backend": popdist.isBackendInitialized(),
    "topology": popdist.topology().to_dict(),
}))
"""

RAISES_SCRIPT = """
import json, popdist
try:
    popdist.{call}
except Exception as error:
    print(json.dumps({{"type": type(error).__name__, "module": type(error).__module__, "message": str(error),
                       "popdist_error": isinstance(error, popdist.PopDistError)}}))
else:
    print(json.dumps({{"type": None}}))
"""


# Open MPI as every job the suites start needs it (as cmake/PopdistTesting.cmake's
# popdist_mpi_environment()): root permission, yield when oversubscribed, loopback only, no cm.
MPI_ENVIRONMENT = {
    "OMPI_ALLOW_RUN_AS_ROOT": "1",
    "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
    "OMPI_MCA_mpi_yield_when_idle": "1",
    "OMPI_MCA_btl_tcp_if_include": "lo",
    "OMPI_MCA_oob_tcp_if_include": "lo",
    "OMPI_MCA_pml": "^cm",
    "OMPI_MCA_rmaps_base_oversubscribe": "1",
}


def use_topology(request, topology):
    """Makes ``topology`` (a popdist.Topology) this process's current one, as init() would, until
    the test ends: the current topology lives in popdist._core, not in a Python variable."""
    from popdist import _core

    previous = _core.replace_topology(topology)
    request.addfinalizer(lambda: _core.replace_topology(previous))
