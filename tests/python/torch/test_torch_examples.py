"""The README's main command (examples/train_torch_ddp.py under `popdist run --num-instances 4`) and
the Lightning example, run for real: they train, converge, and only instance 0 logs."""

import re
import sys

import pytest

from launching import ROOT, popdist_run_argv, run

pytest.importorskip("torch", reason="popdist.torch needs PyTorch (pip install torch)")
pytestmark = [pytest.mark.mpirun]


def test_readme_main_command_trains_across_four_instances(tmp_path):
    checkpoint = tmp_path / "model.pt"
    result = run(popdist_run_argv(4, sys.executable,
                                  ROOT / "examples" / "train_torch_ddp.py", "--epochs", "3", "--checkpoint", checkpoint),
                 timeout=240)
    assert result.returncode == 0, result.stdout + result.stderr
    lines = [line for line in result.stdout.splitlines() if "[instance" in line]
    assert all(line.split(">:", 1)[-1].startswith("[instance 0]") for line in lines), lines  # instance 0 only
    assert "training on 4 instance(s)" in result.stdout
    assert len(re.findall(r"epoch \d/3: mean training loss", result.stdout)) == 3
    assert re.search(r"converged=True; weights in sync across instances: True", result.stdout), result.stdout
    assert checkpoint.is_file()


def test_lightning_example_alone(tmp_path):
    pytest.importorskip("lightning", reason="popdist.lightning needs Lightning (pip install lightning)")
    result = run([sys.executable, ROOT / "examples" / "train_lightning.py", "--checkpoint-dir", tmp_path],
                 timeout=240)
    assert result.returncode == 0, result.stdout + result.stderr
    assert re.search(r"\[instance 0\] trained on 1 instance\(s\); final loss [0-9.]+ \(initial [0-9.]+\); converged=True",
                     result.stdout), result.stdout + result.stderr
    assert len(list(tmp_path.rglob("*.ckpt"))) == 1
