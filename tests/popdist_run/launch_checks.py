#!/usr/bin/env python3
"""popdist.launch inside a Slurm allocation on the testbed's 2-node cluster (n1, n2): a Python
program started by `salloc -N2` (and by `sbatch -N2`) launches 2 instances with popdist.launch,
which starts `popdist run`, which takes the allocation's nodes as its hosts. Each instance returns
its index and host; the program prints them as JSON. The testbed's nodes share this machine's file
system, so the job's private directory is seen by both.
Usage: launch_checks.py <check> <popdist> <testbed> <python>. Exit 77 (skip) names what is missing."""

import json
import os
import sys
import tempfile
import textwrap

from launcher_common import check, describe, main, run
from testbed_checks import slurm_environment

PROGRAM = textwrap.dedent("""
    import json, socket, sys
    import popdist

    def where():
        return [popdist.getInstanceIndex(), socket.gethostname(), popdist.getNumInstances()]

    values = popdist.launch(where, num_instances=2, shared_dir=sys.argv[1])
    print("VALUES " + json.dumps(values), flush=True)
""")


def _values(text, context):
    lines = [line for line in text.splitlines() if line.startswith("VALUES ")]
    check(len(lines) == 1, f"no VALUES line: {context}")
    return json.loads(lines[0][len("VALUES "):])


def _prepare(popdist, testbed, tmp):
    env = slurm_environment(popdist, testbed)
    env["PATH"] = os.path.dirname(os.path.abspath(popdist)) + os.pathsep + env.get("PATH", "")
    program = os.path.join(tmp, "program.py")
    with open(program, "w") as file:
        file.write(PROGRAM)
    return env, program


def slurm_salloc_launch(popdist, testbed, python):
    with tempfile.TemporaryDirectory() as tmp:
        env, program = _prepare(popdist, testbed, tmp)
        result = run(["salloc", "-N2", "-n2", "--time=2", python, program, tmp], env=env, timeout=110, cwd=tmp)
    check(result.returncode == 0, f"salloc + popdist.launch failed: {describe(result)}")
    check(_values(result.stdout, describe(result)) == [[0, "n1", 2], [1, "n2", 2]], describe(result))


def slurm_sbatch_launch(popdist, testbed, python):
    with tempfile.TemporaryDirectory() as tmp:
        env, program = _prepare(popdist, testbed, tmp)
        output = os.path.join(tmp, "batch.out")
        result = run(["sbatch", "-N2", "-n2", "--time=2", "--wait", "-o", output, "--wrap",
                      f"{python} {program} {tmp}"], env=env, timeout=110, cwd=tmp)
        text = open(output).read() if os.path.exists(output) else "(no output file)"
    check(result.returncode == 0, f"sbatch + popdist.launch failed: {describe(result)}\n--- batch output\n{text}")
    check(_values(text, text) == [[0, "n1", 2], [1, "n2", 2]], text)


CHECKS = {"slurm-salloc-launch": slurm_salloc_launch, "slurm-sbatch-launch": slurm_sbatch_launch}

if __name__ == "__main__":
    sys.exit(main(CHECKS, sys.argv))
