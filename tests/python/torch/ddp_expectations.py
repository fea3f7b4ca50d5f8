"""What every instance of a full scripts/ddp_checks.py run must agree on, whatever the launcher."""

import math


def check_job(found, instances):
    """What every instance of a full ddp_checks.py run must agree on."""
    for index, r in found.items():
        assert (r["rank"], r["world_size"], r["instance_index"], r["num_instances"]) == (index, instances, index, instances)
        assert r["backend"] == "gloo" and r["device"] == "cpu"
        assert r["all_reduce"] == instances * (instances + 1) / 2
        assert r["all_reduce_after_error"] == instances  # the seed mismatch left the job usable
    assert len({r["agreed_seed"] for r in found.values()}) == 1, "instances use different seeds"

    per_instance = math.ceil(10 / instances)
    for epoch in ("0", "1"):
        shards = [found[i]["shards"][epoch] for i in range(instances)]
        assert all(len(s) == per_instance for s in shards), f"epoch {epoch}: unequal shards {shards}"
        together = sorted(x for s in shards for x in s)
        assert set(together) == set(range(10)), f"epoch {epoch}: shards {shards} do not cover 0..9"
        # Disjoint but for the padding: exactly per_instance x instances - 10 repeats.
        assert len(together) - len(set(together)) == per_instance * instances - 10, f"epoch {epoch}: {shards}"
    if instances > 1:
        assert [found[0]["shards"]["0"], found[1]["shards"]["0"]] != [found[0]["shards"]["1"], found[1]["shards"]["1"]], \
            "set_epoch(1) did not reshuffle"
    dropped = [found[i]["shard_drop_last"] for i in range(instances)]
    assert all(len(s) == 10 // instances for s in dropped)
    assert len({x for s in dropped for x in s}) == (10 // instances) * instances, f"drop_last shards overlap: {dropped}"
    assert {r["batches"] for r in found.values()} == {math.ceil(math.ceil(50 / instances) / 4)}

    # torch's sampler contract, index for index.
    for index, r in found.items():
        assert r["torch_signature"][0] == r["torch_signature"][1], r["torch_signature"]
        assert r["same_as_torch"], f"instance {index}: popdist's sampler differs from torch's with the same arguments"
        assert r["seed_none_after_manual_seed"] == 1234 and r["seed_none_same_as_torch"], r
        replicas, rank = r["disagreeing_errors"]
        assert replicas and f"num_replicas={instances + 1}" in replicas and f"{instances} instance(s)" in replicas, r
        assert rank and f"rank={(index + 1) % (instances + 1)}" in rank and f"instance {index} of {instances}" in rank, r

    mismatch = [r["mismatch_error"] for r in found.values()]
    if instances == 1:
        assert mismatch == [None]
    else:
        for message in mismatch:
            assert message and "different seeds" in message
            assert all(f"instance {i}: seed={100 + i}" in message for i in range(instances)), message
    weights = [found[i]["weights"] for i in range(instances)]
    assert all(w == weights[0] for w in weights), f"weights differ after DDP training: {weights}"
