"""The library built against a PyPI MPI (build_against.sh), under `popdist run` on that MPI's own
launcher: each instance's topology, its MPI rank and size, the MPI it was built for, and a
synchronize over the job and over instances {0, 1} (wheel_probe.cpp).

Usage: wheel_checks.py probe <popdist> <wheel_probe> <backend> <launcher_dir> <library>
       wheel_checks.py probe-fake-hosts <popdist> <wheel_probe> <launcher_dir> <library> <testbed>
  backend: openmpi or hydra (popdist run --backend); launcher_dir: where popdist run must find the
  launcher (the venv's bin: its MPI first on PATH); library: the start of the first line of
  MPI_Get_library_version that the build's MPI prints ("Open MPI v5", "MPICH Version", "Intel(R) MPI")."""

import os
import re
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "popdist_run"))
from launcher_common import (check, describe, fake_hosts_agent, main, mpi_test_environment, run,  # noqa: E402
                             tagged_streams)


def check_probe_output(result, instances, per_host, backend, launcher_dir, library):
    """Each instance's lines of wheel_probe.cpp, `per_host` instances a host, from the launcher of
    `launcher_dir` (popdist run -v names it), tagged alike on every backend: `[1,I]<stdout>:line`."""
    check(result.returncode == 0, describe(result))
    check(re.search(rf"^popdist run: backend {backend}: .* at {re.escape(launcher_dir)}/\S+$", result.stderr, re.M),
          f"not the launcher of {launcher_dir}: {describe(result)}")
    per_instance = tagged_streams(result.stdout)
    check(sorted(per_instance) == list(range(instances)), f"instances {sorted(per_instance)}: {describe(result)}")
    for instance, lines in per_instance.items():
        expected = (rf"instance {instance} of {instances}, local {instance % per_host}, replicas 2 from {2 * instance} "
                    rf"of {2 * instances}, MPI rank {instance} of {instances}, library {re.escape(library)}.*")
        check(len(lines) >= 2 and re.fullmatch(expected, lines[0]), f"instance {instance}: {lines}\n{describe(result)}")
        check(lines[1] == f"instance {instance} passed synchronize", f"instance {instance}: {lines}")
        subset = [f"instance {instance} passed synchronize of {{0, 1}}"] if instance < 2 else []
        check(lines[2:] == subset, f"instance {instance}: {lines}")
    print(f"{instances} instances of a {library} build under `popdist run --backend {backend}`: "
          f"{per_instance[0][0].split('library ')[1]}")


def probe(popdist, program, backend, launcher_dir, library):
    """3 instances on this machine."""
    env = mpi_test_environment(os.path.dirname(os.path.abspath(popdist)))
    result = run([popdist, "run", "-v", "--backend", backend, "--num-instances", "3", "--num-replicas", "6", program],
                 env, timeout=120)
    check_probe_output(result, 3, 3, backend, launcher_dir, library)


def probe_fake_hosts(popdist, program, launcher_dir, library, testbed):
    """Open MPI: 4 instances on the testbed's fake hosts hostA and hostB, with mpirun's --prefix (the
    venv): PRRTE's remote command is then a shell sequence (PRTE_PREFIX=...; export ...; prted)."""
    env = mpi_test_environment(os.path.dirname(os.path.abspath(popdist)))
    agent = fake_hosts_agent(testbed)
    with tempfile.TemporaryDirectory() as tmp:
        env["TMPDIR"] = tmp  # the fake hosts' session directories go away with the check
        prefix = os.path.dirname(launcher_dir)
        result = run([popdist, "run", "-v", "--host", "hostA,hostB", "--num-instances", "4", "--num-replicas", "8",
                      "--mpi-global-args", f"--mca plm_rsh_agent {agent} --prefix {prefix}", program], env, timeout=120)
    check_probe_output(result, 4, 2, "openmpi", launcher_dir, library)


if __name__ == "__main__":
    sys.exit(main({"probe": probe, "probe-fake-hosts": probe_fake_hosts}, sys.argv))
