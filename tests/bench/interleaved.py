"""The Python twin of interleaved.hpp: contenders run in alternating blocks of K calls on every
rank at once (rank 0 decides nothing alone: block times are MAX-reduced, so every rank computes
the same K), and each gets the median time per call over the blocks. Used by bench_python.py."""

import json
import statistics
import time


def _timed_block(comm, mpi, op, iterations):
    """Wall time of `iterations` calls of op, the slowest rank's (alignment and reduction untimed)."""
    comm.Barrier()
    start = time.perf_counter()
    for _ in range(iterations):
        op()
    elapsed = time.perf_counter() - start
    return comm.allreduce(elapsed, op=mpi.MAX)


def _quantile(values, q):
    values = sorted(values)
    position = q * (len(values) - 1)
    below = int(position)
    above = min(below + 1, len(values) - 1)
    return values[below] + (values[above] - values[below]) * (position - below)


def run_interleaved(comm, mpi, contenders, rounds=51, block_seconds=0.002, warmup=100, max_iterations=100000):
    """contenders: list of (key, label, op). Returns a list of dicts, one per contender."""
    for _, _, op in contenders:
        for _ in range(warmup):
            op()
    iterations = []
    for _, _, op in contenders:
        n = 1
        elapsed = _timed_block(comm, mpi, op, n)
        while elapsed < 1e-3 and n < max_iterations:
            n *= 2
            elapsed = _timed_block(comm, mpi, op, n)
        # A busy machine preempts some blocks: the fastest of a few is the estimate of the work.
        elapsed = min([elapsed] + [_timed_block(comm, mpi, op, n) for _ in range(4)])
        iterations.append(max(1, min(max_iterations, int(block_seconds / max(elapsed / n, 1e-9)))))
    samples = [[] for _ in contenders]
    for r in range(rounds):
        for j in range(len(contenders)):
            i = (j + r) % len(contenders)  # rotate who goes first
            samples[i].append(_timed_block(comm, mpi, contenders[i][2], iterations[i]) / iterations[i])
    return [
        {
            "key": key,
            "label": label,
            "median_us": statistics.median(s) * 1e6,
            "p25_us": _quantile(s, 0.25) * 1e6,
            "p75_us": _quantile(s, 0.75) * 1e6,
            "blocks": rounds,
            "iterations": k,
            "clock": "wall",
        }
        for (key, label, _), s, k in zip(contenders, samples, iterations)
    ]


def emit(suite, group, ranks, figures, note=""):
    for figure in figures:
        print(json.dumps({"suite": suite, "group": group, "ranks": ranks, **figure, "note": note}), flush=True)
