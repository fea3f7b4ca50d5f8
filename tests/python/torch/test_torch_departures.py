"""Nobody waits for an instance that has left: the collectives popdist.torch makes on the user's
behalf (the rendezvous, the seed and length agreement, Lightning's trainer_kwargs) are bounded by the user's timeout and name
the instance that exited cleanly or is late, under mpirun and popdist run."""

import pytest

from launching import mpirun_argv, popdist_run_argv, python, run

pytest.importorskip("torch", reason="popdist.torch needs PyTorch (pip install torch)")
pytestmark = [pytest.mark.mpirun]

WHERE = {
    "exit-before-group": "popdist.torch rendezvous",
    "exit-before-loader": "popdist.torch.DistributedSampler",
    "late-to-group": "popdist.torch rendezvous",
    "exit-before-trainer-kwargs": "popdist.lightning.trainer_kwargs",
    "exit-before-loader-untimed": "popdist.torch.DistributedSampler",
}


@pytest.mark.parametrize(("launcher", "mode"), [("mpirun", "exit-before-group"), ("popdist run", "exit-before-loader"),
                                                ("mpirun", "late-to-group"),
                                                ("popdist run", "exit-before-trainer-kwargs")])
def test_an_instance_that_left_is_named_within_the_timeout(launcher, mode):
    if mode == "exit-before-trainer-kwargs":
        pytest.importorskip("lightning", reason="popdist.lightning needs Lightning (pip install lightning)")
    argv = (mpirun_argv if launcher == "mpirun" else popdist_run_argv)(2, *python("departures.py", mode))
    result = run(argv, timeout=150)  # a hang fails here
    assert result.returncode != 0, result.stdout + result.stderr
    assert "unreachable" not in result.stdout
    assert "instance 0 failed: missing [1]: " + WHERE[mode] + ": every instance must take part, but not all did " \
           "within 5 s" in result.stdout, result.stdout + result.stderr
    assert "instance 1 did not arrive" in result.stdout


def test_without_a_timeout_popdist_sync_timeout_bounds_the_agreements():
    # No timeout given to init_process_group: the seed agreement takes synchronize's default
    # timeout, POPDIST_SYNC_TIMEOUT, instead of torch's 30 minutes.
    result = run(popdist_run_argv(2, *python("departures.py", "exit-before-loader-untimed")), timeout=150,
                 POPDIST_SYNC_TIMEOUT="5")
    assert result.returncode != 0, result.stdout + result.stderr
    assert "instance 0 failed: missing [1]: popdist.torch.DistributedSampler" in result.stdout, \
        result.stdout + result.stderr
    assert "within 5 s" in result.stdout, result.stdout + result.stderr


@pytest.mark.parametrize("launcher", ["mpirun", "popdist run"])
def test_an_instance_that_meets_in_its_own_synchronize_and_leaves_is_not_waited_for(launcher):
    # Instance 1's synchronize() (untimed: it waits as MPI would) does not meet the agreement's
    # meeting (issue 37); instance 0 fails within its timeout naming instance 1.
    argv = (mpirun_argv if launcher == "mpirun" else popdist_run_argv)(2, *python("departures.py",
                                                                                   "synchronize-instead-of-loader"))
    result = run(argv, timeout=150)  # a hang fails here
    assert result.returncode != 0, result.stdout + result.stderr
    assert "unreachable" not in result.stdout
    assert "instance 0 failed: missing " in result.stdout, result.stdout + result.stderr
    assert "popdist.torch.DistributedSampler" in result.stdout, result.stdout + result.stderr
