"""popdist's Python API side by side with mpi4py (and torch.distributed on gloo, when PyTorch is
installed), interleaved, under mpirun at any number of ranks. Rank 0 prints JSON lines.

    mpirun -np 2 python tests/bench/bench_python.py [--rounds N]
"""

import argparse
import os
import sys
from array import array

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from mpi4py import MPI  # noqa: E402 - mpi4py initializes MPI here, as in most user scripts

import popdist  # noqa: E402
from interleaved import emit, run_interleaved  # noqa: E402


def bench_synchronize(comm, ranks, rounds):
    popdist_comm = popdist.comm()  # mpi4py handle on popdist's own communicator for all instances
    figures = run_interleaved(
        comm,
        MPI,
        [
            ("popdist", "popdist.synchronize()", popdist.synchronize),
            ("mpi4py_world", "MPI.COMM_WORLD.Barrier()", comm.Barrier),
            ("mpi4py_native", "popdist.comm().Barrier()", popdist_comm.Barrier),
        ],
        rounds=rounds,
    )
    emit("python", "py_sync", ranks, figures)


def bench_execute_on_instances(comm, ranks, rounds):
    everyone = set(range(ranks))
    native = popdist.comm()
    status = array("i", [0])

    def empty():
        pass

    def mpi4py_shape():
        # popdist's shape in mpi4py: the call (its exception caught, as popdist must), then one
        # allreduce of a failure flag so that every member learns whether any failed.
        status[0] = 0
        try:
            empty()
        except BaseException:
            status[0] = 1
        native.Allreduce(MPI.IN_PLACE, [status, MPI.INT], op=MPI.MAX)

    def barrier_call_barrier():
        native.Barrier()
        empty()
        native.Barrier()

    figures = run_interleaved(
        comm,
        MPI,
        [
            ("popdist", "popdist.execute_on_instances(all, f)", lambda: popdist.execute_on_instances(everyone, empty)),
            ("mpi4py_call_allreduce", "f(); Allreduce(failed flag)", mpi4py_shape),
            ("mpi4py_barrier_call_barrier", "Barrier; f(); Barrier", barrier_call_barrier),
        ],
        rounds=rounds,
    )
    emit("python", "py_execute", ranks, figures)


def bench_torch_barrier(comm, ranks, rounds):
    try:
        import torch.distributed as dist
    except ImportError as error:
        emit("python", "py_torch", ranks, [{"key": "torch_gloo", "label": "torch.distributed.barrier() (gloo)",
                                            "skipped": f"PyTorch is not installed ({error})"}])
        return
    # Rank 0's store listens on a port the kernel picks and keeps it (picking a port, releasing it
    # and binding it again later would leave it to any process in between); the others learn it
    # through MPI.
    host, rank = "127.0.0.1", comm.Get_rank()
    store = dist.TCPStore(host, 0, ranks, True, wait_for_workers=False) if rank == 0 else None
    port = comm.bcast(store.port if rank == 0 else None, root=0)
    if rank != 0:
        store = dist.TCPStore(host, port, ranks, False)
    dist.init_process_group("gloo", store=store, rank=rank, world_size=ranks)
    figures = run_interleaved(
        comm,
        MPI,
        [
            ("torch_gloo", "torch.distributed.barrier() (gloo)", dist.barrier),
            ("popdist", "popdist.synchronize()", popdist.synchronize),
            ("mpi4py_world", "MPI.COMM_WORLD.Barrier()", comm.Barrier),
        ],
        rounds=rounds,
    )
    dist.destroy_process_group()
    emit("python", "py_torch", ranks, figures)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=1001, help="blocks per contender")
    parser.add_argument("--no-torch", action="store_true", help="skip the torch.distributed row")
    args = parser.parse_args()
    popdist.init()  # MPI is already up (mpi4py): popdist only checks the topology
    comm = MPI.COMM_WORLD
    ranks = comm.Get_size()
    if comm.Get_rank() != 0:
        sys.stdout = open(os.devnull, "w")  # only rank 0 reports
    bench_synchronize(comm, ranks, args.rounds)
    bench_execute_on_instances(comm, ranks, args.rounds)
    if not args.no_torch:
        bench_torch_barrier(comm, ranks, args.rounds)
    comm.Barrier()


if __name__ == "__main__":
    main()
