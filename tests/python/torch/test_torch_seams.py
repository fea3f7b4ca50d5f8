"""The seams between popdist.torch and torch itself, under `popdist run` and plain `mpirun`
(scripts/torch_seams.py, run with `python -W error`): a sampler given to popdist.torch.DataLoader
is refused unless it shards over the job; init_process_group, destroy_process_group and
init_process_group again work on one fixed MASTER_PORT; and popdist prints nothing at a clean
exit, also where every warning is an error. Real torch (gloo on CPU), no mocks."""

import sys

import pytest

from launching import MPIRUN, free_port, mpirun_argv, popdist_run_argv, reports, run, SCRIPTS

pytest.importorskip("torch", reason="popdist.torch needs PyTorch (pip install torch)")
pytestmark = [pytest.mark.mpirun]
if MPIRUN is None:
    pytestmark.append(pytest.mark.skip(reason="mpirun (Open MPI) is not on PATH"))


def seams_command(out_dir):
    return [sys.executable, "-W", "error", str(SCRIPTS / "torch_seams.py"), str(out_dir)]


def popdist_run_job(out_dir):
    return run(popdist_run_argv(2, *seams_command(out_dir)), timeout=180)


def mpirun_job(out_dir):
    # A fixed MASTER_PORT, as popdist run gives: the second group's store must get it again.
    return run(mpirun_argv(2, *seams_command(out_dir), extra=["-x", "MASTER_PORT"]), timeout=180,
               MASTER_PORT=str(free_port()))


@pytest.fixture(scope="module", params=[popdist_run_job, mpirun_job], ids=["popdist_run", "mpirun"])
def job(request, tmp_path_factory):
    out_dir = tmp_path_factory.mktemp(request.param.__name__)
    result = request.param(out_dir)
    return result, reports(out_dir, result, 2)


def test_clean_exit_prints_nothing_under_W_error(job):
    result, _ = job
    assert result.returncode == 0, result.stderr
    assert result.stderr == "", f"popdist printed at a clean exit:\n{result.stderr}"
    assert result.stdout == "", f"popdist printed at a clean exit:\n{result.stdout}"


def test_init_destroy_init_in_one_process(job):
    _, found = job
    assert [r["sums"] for r in found.values()] == [[3.0, 3.0]] * 2
    assert found[0]["weights"] == found[1]["weights"], "DDP after a re-init left the instances apart"


def test_a_sampler_that_does_not_shard_is_refused_naming_it(job):
    _, found = job
    for index, r in found.items():
        random, batch, wrong = r["random_sampler"], r["batch_sampler"], r["wrong_rank"]
        assert random and "sampler=<torch.utils.data.sampler.RandomSampler" in random, random
        assert "every instance would read the whole data set" in random and "leave sampler" in random, random
        assert batch and "batch_sampler=<torch.utils.data.sampler.BatchSampler" in batch, batch
        assert wrong and f"rank {1 - index} of 2" in wrong and f"instance {index} of 2" in wrong, wrong
        assert r["sharded_indices"] == list(range(index, 16, 2)), r["sharded_indices"]
