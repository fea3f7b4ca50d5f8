"""Careless use of an instance's process: fork() after init() (the child is not a member of the
job and must not hang it) and calls after finalize() (the advice must be true)."""

import json
import re

import pytest

from test_mpirun_jobs import SCRIPTS, mpirun

pytestmark = [pytest.mark.mpirun]


def json_lines(output, prefix):
    # The first JSON document after each prefix (mpirun may glue another line to its end).
    decoder = json.JSONDecoder()
    return [decoder.raw_decode(output, m.end())[0] for m in re.finditer(re.escape(prefix), output)]


@pytest.mark.parametrize("ends", ["exit0", "exit3", "raise"])
def test_a_fork_child_neither_hangs_nor_ends_the_job(ends):
    result = mpirun(2, SCRIPTS / "fork_child.py", ends, timeout=90)
    assert result.returncode == 0, result.stdout + result.stderr
    for instance in (0, 1):
        assert f"instance {instance}: child status {3 if ends == 'exit3' else 1 if ends == 'raise' else 0}; job ok" \
            in result.stdout, result.stdout + result.stderr
        (found,) = json_lines(result.stdout, f"child of {instance}: ")
        assert (found["instance"], found["count"], found["initialized"]) == (instance, 2, False), found
        for call in ("execute", "synchronize", "synchronize_timed", "register", "init"):
            assert found[call] and "is a fork() child of a popdist instance" in found[call], (call, found)
        assert found["execute"].startswith("execute_on_instances: this process (pid "), found["execute"]
    assert "child ran it" not in result.stdout
    assert "MPI_Abort" not in result.stderr


def test_calls_after_finalize_say_that_mpi_cannot_start_again():
    result = mpirun(2, SCRIPTS / "after_finalize.py", timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr
    for found in json_lines(result.stdout, "after finalize: "):
        for call in ("synchronize", "register", "execute"):
            assert "MPI has been finalized in this process" in found[call], (call, found)
            assert "cannot be started twice" in found[call] and "call popdist.init()" not in found[call]
        assert "cannot be initialized twice" in found["init"], found
    assert len(json_lines(result.stdout, "after finalize: ")) == 2, result.stdout
