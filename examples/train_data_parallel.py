#!/usr/bin/env python3
"""Data-parallel training with popdist, on synthetic data (numpy only).

    mpirun -np 4 python examples/train_data_parallel.py      # 4 instances
    python examples/train_data_parallel.py                   # one instance, same script

Every instance generates the same synthetic linear-regression data set (fixed seed), trains on
its own shard of it (rows instance, instance + N, ...), and averages gradients across instances
each step with an MPI Allreduce on ``popdist.comm()`` (an mpi4py communicator), so that all
instances hold the same weights. Only instance 0 logs and writes checkpoints, through
``popdist.execute_on_instances({0}, ...)``. At the end instance 0 prints the final loss on the
whole data set; ``converged`` is true when it fell below 1% of the initial loss.
"""

import argparse
import os
import sys
import tempfile

import numpy as np

import popdist


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--samples", type=int, default=4096, help="size of the whole synthetic data set")
    parser.add_argument("--features", type=int, default=16)
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--batch-size", type=int, default=64, help="per-instance batch size")
    parser.add_argument("--learning-rate", type=float, default=0.05)
    parser.add_argument("--checkpoint-dir", default=os.path.join(tempfile.gettempdir(), "popdist-example-checkpoints"))
    parser.add_argument("--checkpoint-every", type=int, default=50)
    return parser.parse_args()


def synthetic_data(samples, features):
    """The same data set on every instance: y = X w* + noise."""
    rng = np.random.default_rng(1234)
    x = rng.normal(size=(samples, features))
    true_weights = rng.normal(size=features)
    y = x @ true_weights + 0.01 * rng.normal(size=samples)
    return x, y


class GradientAverager:
    """Averages a gradient across instances (sum of per-instance sums / global sample count)."""

    def __init__(self):
        # One instance: nothing to average, and no need for mpi4py.
        self.comm = popdist.comm() if popdist.getNumInstances() > 1 else None

    def sum(self, values):
        if self.comm is None:
            return values
        from mpi4py import MPI

        total = np.empty_like(values)
        self.comm.Allreduce(values, total, op=MPI.SUM)
        return total


def save_checkpoint(directory, step, weights):
    """Runs on instance 0 only."""
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, f"step{step:05d}.npz")
    np.savez(path, step=step, weights=weights)
    print(f"[instance 0] step {step}: checkpoint {path}", flush=True)
    return path


def main():
    args = parse_args()
    popdist.init()  # MPI for the gradient exchange (a no-op cost on a single instance)
    instance, instances = popdist.getInstanceIndex(), popdist.getNumInstances()
    log = print if instance == 0 else (lambda *a, **k: None)
    log(f"training on {instances} instance(s), {popdist.getNumTotalReplicas()} replica(s) in total", flush=True)

    x, y = synthetic_data(args.samples, args.features)
    shard_x, shard_y = x[instance::instances], y[instance::instances]  # this instance's shard
    averager = GradientAverager()
    weights = np.zeros(args.features)

    def global_loss():
        residual = shard_x @ weights - shard_y
        totals = averager.sum(np.array([residual @ residual, float(len(shard_y))]))
        return totals[0] / totals[1]

    initial_loss = global_loss()
    rng = np.random.default_rng(instance)  # each instance draws its own batches from its shard
    for step in range(1, args.steps + 1):
        batch = rng.choice(len(shard_y), size=min(args.batch_size, len(shard_y)), replace=False)
        residual = shard_x[batch] @ weights - shard_y[batch]
        # Gradient of the mean squared error over the union of every instance's batch.
        local = np.append(2.0 * shard_x[batch].T @ residual, float(len(batch)))
        total = averager.sum(local)
        weights -= args.learning_rate * total[:-1] / total[-1]
        if step % args.checkpoint_every == 0 or step == args.steps:
            loss = global_loss()
            log(f"[instance 0] step {step}: loss {loss:.6f}", flush=True)
            popdist.execute_on_instances({0}, save_checkpoint, args.checkpoint_dir, step, weights.copy())

    final_loss = global_loss()
    # Every instance must hold the same weights after synchronous data-parallel steps.
    spread = averager.sum(np.abs(weights - averager.sum(weights) / instances)).max() if instances > 1 else 0.0
    converged = final_loss < 0.01 * initial_loss
    log(f"final loss {final_loss:.6f} (initial {initial_loss:.6f}); converged={converged}; "
        f"weights in sync across instances: {spread < 1e-9}", flush=True)
    popdist.synchronize()
    return 0 if converged else 1


if __name__ == "__main__":
    sys.exit(main())
