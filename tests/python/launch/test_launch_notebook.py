"""popdist.launch from a real Jupyter kernel: a notebook (built here with nbformat, run by
nbclient in an ipykernel) defines a small popdist.torch DDP training in a cell, launches it on 2
instances and reads the results back. The instances' tagged output must appear in the cell's
outputs, not on the kernel's terminal."""

import json
import re
import textwrap

import pytest

nbformat = pytest.importorskip("nbformat", reason="nbformat is not installed (.ci/install-deps installs it)")
nbclient = pytest.importorskip("nbclient", reason="nbclient is not installed (.ci/install-deps installs it)")
pytest.importorskip("ipykernel", reason="ipykernel is not installed (.ci/install-deps installs it)")
pytest.importorskip("torch", reason="torch is not installed")
pytest.importorskip("cloudpickle", reason="cloudpickle is not installed: a notebook's function needs it")

DEFINE = textwrap.dedent("""
    import popdist, popdist.torch, torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel

    def train(steps, lr):
        torch.manual_seed(0)
        popdist.torch.init_process_group()
        generator = torch.Generator().manual_seed(1234)
        x = torch.randn(256, 4, generator=generator)
        y = x @ torch.randn(4, 1, generator=generator)
        loader = popdist.torch.DataLoader(torch.utils.data.TensorDataset(x, y), batch_size=16, shuffle=True)
        model = DistributedDataParallel(torch.nn.Linear(4, 1))
        optimizer = torch.optim.SGD(model.parameters(), lr=lr)
        for _, (xb, yb) in zip(range(steps), loader):
            optimizer.zero_grad()
            loss = torch.nn.functional.mse_loss(model(xb), yb)
            loss.backward()
            optimizer.step()
        print(f"instance {dist.get_rank()} trained {steps} steps, loss {loss.item():.4f}", flush=True)
        result = {"rank": dist.get_rank(), "world": dist.get_world_size(),
                  "weights": torch.cat([p.detach().flatten() for p in model.module.parameters()]).tolist()}
        dist.destroy_process_group()
        return result
""")
LAUNCH = "results = popdist.launch(train, 5, 0.05, num_instances=2)"
REPORT = "import json\nprint('RESULTS ' + json.dumps(results))"


def _stream_text(cell):
    return "".join(output.get("text", "") for output in cell.outputs if output.output_type == "stream")


def test_a_notebook_launches_a_ddp_training_and_reads_back_the_results(tmp_path):
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell(source) for source in (DEFINE, LAUNCH, REPORT)]
    client = nbclient.NotebookClient(notebook, timeout=300, kernel_name="python3",
                                     resources={"metadata": {"path": str(tmp_path)}})
    client.execute()
    report = _stream_text(notebook.cells[2])
    results = json.loads(report.split("RESULTS ", 1)[1])
    assert [result["rank"] for result in results] == [0, 1]
    assert all(result["world"] == 2 for result in results)
    assert results[0]["weights"] == results[1]["weights"]  # DDP kept the replicas in step
    launched = _stream_text(notebook.cells[1])
    for rank in (0, 1):
        assert re.search(rf"\[\d+,{rank}\]<stdout>: ?instance {rank} trained 5 steps", launched), launched
