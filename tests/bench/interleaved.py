"""The Python twin of interleaved.hpp (read its comment for the why): contenders run in
alternating short blocks of K calls on every rank at once (K comes from MAX-reduced times, so
every rank computes the same K); nothing synchronizes between blocks; the per-block times are
MAX-reduced elementwise at the end, and each contender gets the median time per call."""

import json
import statistics
import time
from array import array


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


def run_interleaved(comm, mpi, contenders, rounds=1001, block_seconds=100e-6, warmup=100, max_iterations=100000):
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
    samples = [array("d", bytes(8 * rounds)) for _ in contenders]
    clock = time.perf_counter
    comm.Barrier()
    for r in range(rounds):
        for j in range(len(contenders)):
            i = (j + r) % len(contenders)  # rotate who goes first
            op, k = contenders[i][2], iterations[i]
            start = clock()
            for _ in range(k):
                op()
            samples[i][r] = (clock() - start) / k
    for per_block in samples:
        comm.Allreduce(mpi.IN_PLACE, [per_block, mpi.DOUBLE], op=mpi.MAX)
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
