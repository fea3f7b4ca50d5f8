"""popdist.torch and popdist.lightning in one unlaunched process (a world of one, no MPI), and the
import rules: `import popdist` stays free of torch; a missing framework is an ImportError naming
it. Each case runs in a fresh interpreter: torch.distributed's default group is process-global."""

import json
import subprocess
import sys

import pytest

from launching import environment

pytest.importorskip("torch", reason="popdist.torch needs PyTorch (pip install torch)")


def run_code(code, timeout=120):
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout,
                            env=environment(), check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_import_popdist_does_not_import_torch():
    assert run_code("import json, sys, popdist\n"
                    "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in ('torch', 'lightning'))))") == []


@pytest.mark.parametrize("module, framework", [("popdist.torch", "torch"), ("popdist.lightning", "lightning")])
def test_missing_framework_is_an_import_error_naming_it(module, framework):
    # sys.modules[name] = None is how Python itself marks a module as not importable.
    found = run_code(f"import json, sys\nsys.modules['{framework}'] = None\nsys.modules['pytorch_lightning'] = sys.modules['lightning_fabric'] = None\n"
                     f"try:\n    import {module}\nexcept ImportError as e:\n"
                     f"    print(json.dumps({{'name': e.name, 'message': str(e)}}))\n")
    assert found["name"] == framework and f"'{framework}'" in found["message"], found


def test_world_of_one_without_mpi():
    found = run_code("""
import json, sys, torch, torch.distributed as dist, popdist, popdist.torch
popdist.torch.init_process_group()
t = torch.tensor([3.0]); dist.all_reduce(t)
loader = popdist.torch.DataLoader(list(range(10)), batch_size=4, shuffle=True, seed=5)
order = [int(x) for b in loader for x in b]
loader.set_epoch(1)
order1 = [int(x) for b in loader for x in b]
again = popdist.torch.DataLoader(list(range(10)), batch_size=4, shuffle=True, seed=5)
print(json.dumps({"rank": dist.get_rank(), "world": dist.get_world_size(), "sum": t.item(), "order": order,
                  "order1": order1, "same_seed_same_order": order == [int(x) for b in again for x in b],
                  "device": str(popdist.torch.device()), "mpi": "popdist._mpi" in sys.modules,
                  "sampler": type(loader.sampler).__name__, "drawn": popdist.torch.DistributedSampler([1]).seed}))
""")
    assert (found["rank"], found["world"], found["sum"], found["device"]) == (0, 1, 3.0, "cpu")
    assert sorted(found["order"]) == list(range(10)) and found["order"] != list(range(10))
    assert sorted(found["order1"]) == list(range(10)) and found["order1"] != found["order"]
    assert found["same_seed_same_order"] and found["sampler"] == "DistributedSampler"
    assert not found["mpi"], "a world of one must not load MPI"
    assert isinstance(found["drawn"], int)


BAD_CALLS = {  # call -> what its UsageError must say
    "popdist.torch.DistributedSampler([1, 2], seed=-1)": "seed=-1: expected None or an integer",
    "popdist.torch.DistributedSampler([1, 2], seed='7')": "seed='7': expected None or an integer",
    # The timeout rule (design.md §11.4) under the call's name: 0, negative and NaN are errors.
    "popdist.torch.init_process_group(timeout=0)": "popdist.torch.init_process_group: timeout=0 seconds is ambiguous",
    "popdist.torch.init_process_group(timeout=float('nan'))": "init_process_group: timeout=nan seconds is not a timeout",
    "popdist.torch.init_process_group(timeout=-5)": "init_process_group: timeout=-5 seconds is not a timeout",
    "popdist.torch.init_process_group(timeout=datetime.timedelta(seconds=-1))":
        "popdist.torch.init_process_group: timeout=datetime.timedelta(days=-1, seconds=86399) is not a timeout",
    "popdist.torch.init_process_group(timeout=datetime.timedelta(0))": "timeout=datetime.timedelta(0) is not a timeout",
    "popdist.torch.init_process_group(timeout='30')": "init_process_group: timeout must be a number of seconds",
    "popdist.torch.init_process_group(timeout=True)": "init_process_group: timeout must be a number of seconds",
    "popdist.torch.rendezvous(timeout=-1.5)": "popdist.torch.rendezvous: timeout=-1.5 seconds is not a timeout",
    "popdist.lightning.PopdistEnvironment(timeout=float('nan'))":
        "popdist.lightning.PopdistEnvironment: timeout=nan seconds is not a timeout",
    "popdist.torch.init_process_group(backend='bogus')":
        "popdist.torch.init_process_group: backend='bogus' is not a torch.distributed backend available here",
    "popdist.torch.init_process_group(backend='cpu:gloo,cuda:bogus')": "backend='cpu:gloo,cuda:bogus' is not",
    "popdist.torch.init_process_group(backend=3)": "init_process_group: backend must be a str",
    "popdist.torch.init_process_group(rank=1)": "rank=1 is decided by popdist",
    "popdist.torch.DistributedSampler([1, 2], 2, 0)": "num_replicas=2 disagrees with popdist's context (num_replicas 1",
    "popdist.torch.DistributedSampler([1, 2], num_replicas=1, rank=1)": "rank=1 disagrees with popdist's context (rank 0",
}


def test_bad_arguments_are_usage_errors_naming_them():
    # One interpreter for all calls (importing torch costs seconds).
    found = run_code(f"""
import datetime, json, popdist, popdist.torch, popdist.lightning
found = {{}}
for call in {list(BAD_CALLS)!r}:
    try:
        eval(call)
        found[call] = None
    except popdist.UsageError as e:
        found[call] = [str(e), isinstance(e, ValueError)]
print(json.dumps(found))
""")
    for call, expected in BAD_CALLS.items():
        assert found[call] and expected in found[call][0] and found[call][1], (call, found[call])


def test_infinity_is_no_limit_for_every_timeout():
    # inf (and anything longer than torch can express) is "no limit": a timedelta torch can hold,
    # in the process group, the rendezvous and Lightning's environment alike.
    found = run_code("""
import datetime, json, math, popdist, popdist.torch, popdist.lightning, torch.distributed as dist
store, rank, world = popdist.torch.rendezvous(timeout=math.inf)
popdist.torch.init_process_group(timeout=math.inf)
t = popdist.torch._as_timedelta
print(json.dumps({"world": dist.get_world_size(),
                  "no_limit": [t(v, "f") == popdist.torch.NO_LIMIT
                               for v in (math.inf, 1e20, 10**400, datetime.timedelta.max)],
                  "kept": t(1.5, "f").total_seconds(),
                  "lightning": popdist.lightning.PopdistEnvironment(timeout=math.inf)._rendezvous_seconds}))
""")
    assert found["world"] == 1 and found["no_limit"] == [True] * 4 and found["kept"] == 1.5, found
    assert found["lightning"] >= 50 * 365 * 86400, found


def test_bad_master_port_names_the_variable():
    code = ("import json, os, popdist, popdist._torch_rendezvous as r\nos.environ['MASTER_PORT'] = '70000'\n"
            "try:\n    r.agree(1, 5)\nexcept popdist.PopDistError as e:\n    print(json.dumps(str(e)))\n")
    assert "MASTER_PORT='70000' is not a TCP port" in run_code(code)


def test_sampler_is_torchs_in_a_world_of_one():
    # torch's signature, and seed=None is torch's seed: the order follows torch.manual_seed.
    found = run_code("""
import json, torch, popdist.torch
from torch.utils.data.distributed import DistributedSampler as Torch
data = list(range(20))
found = {"positional": list(popdist.torch.DistributedSampler(data, 1, 0, True, 5)) == list(Torch(data, 1, 0, True, 5))}
torch.manual_seed(42)
ours = popdist.torch.DistributedSampler(data)
found["seed"] = ours.seed
found["same"] = list(ours) == list(Torch(data, 1, 0, seed=42))
torch.manual_seed(42)
found["reproducible"] = list(popdist.torch.DistributedSampler(data)) == list(ours)
# A sharded sampler (Lightning's rebuild passes sampler= and shuffle=) is used as is; one that does
# not shard is refused even alone, so that a script does not start failing at two instances.
given = Torch(data, 1, 0, shuffle=False)
loader = popdist.torch.DataLoader(data, batch_size=5, shuffle=True, sampler=given)
found["given_sampler"] = loader.sampler is given and [b.tolist() for b in loader][0] == [0, 1, 2, 3, 4]
try:
    popdist.torch.DataLoader(data, sampler=torch.utils.data.SequentialSampler(data))
except popdist.UsageError as error:
    found["unsharded"] = str(error)
print(json.dumps(found))
""")
    unsharded = found.pop("unsharded", "")
    assert found == {"positional": True, "seed": 42, "same": True, "reproducible": True, "given_sampler": True}
    assert "sampler=<torch.utils.data.sampler.SequentialSampler" in unsharded and "refused" in unsharded


def test_unreachable_master_addr_alone_is_one_clear_error():
    # A single process whose MASTER_ADDR does not answer: one RendezvousError naming the address and
    # port, without torch's client retrying (a warning with a C++ stack trace per attempt).
    pytest.importorskip("lightning", reason="PopdistEnvironment needs Lightning (pip install lightning)")
    code = """
import json, popdist.lightning, popdist.torch
try:
    popdist.lightning.PopdistEnvironment(timeout=20).main_address
    print(json.dumps(None))
except popdist.torch.RendezvousError as error:
    print(json.dumps(str(error)))
"""
    # 192.0.2.1 is TEST-NET-1 (RFC 5737): never assigned, so nothing answers there.
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                            env=environment(MASTER_ADDR="192.0.2.1", MASTER_PORT="29533"), check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    message = json.loads(result.stdout.strip().splitlines()[-1])
    assert message and "192.0.2.1:29533" in message and "MASTER_ADDR" in message, message
    # torch's client logs each retry as "[W... socket.cpp:...] [c10d] The client socket has failed to connect".
    assert "[c10d]" not in result.stderr and "failed to connect" not in result.stderr, result.stderr
