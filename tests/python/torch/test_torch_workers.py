"""DataLoader worker processes under mpirun after popdist.init(): fork children must not touch
the job's MPI (fork-safety), spawned interpreters must not start it; both read their shard."""

import pytest

from launching import mpirun_argv, python, reports, run

pytest.importorskip("torch", reason="popdist.torch needs PyTorch (pip install torch)")
pytestmark = [pytest.mark.mpirun]


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_loader_workers_keep_working(tmp_path, method):
    result = run(mpirun_argv(2, *python("loader_workers.py", method, tmp_path)))
    found = reports(tmp_path, result, 2)
    assert result.returncode == 0, result.stdout + result.stderr
    shards = [found[i]["seen"] for i in (0, 1)]
    assert sorted(shards[0] + shards[1]) == list(range(24)), shards  # disjoint, together the data set
    assert [found[i]["reported"] for i in (0, 1)] == [[0], [1]]
