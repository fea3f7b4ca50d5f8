"""The PopDist API over popdist's C++ core.

The extension module ``_core`` (design.md §9), over the shared core both extension modules load
(``libpopdist_python_core.so``: the current topology, the argument rules, the error types), adds
the registry's calls with their one-instance behaviour without MPI and the process lifecycle
(init, finalize, exit, uncaught exceptions), and loads the MPI backend ``_mpi`` on the first call
that needs MPI (so ``import popdist`` never loads libmpi). This module checks what the core does
not, documents and types the calls, and keeps no state. The stubs take the calls from here
(``__init__.pyi`` star-imports this module), so a new call is written once: its function, with
its annotations, and its name in ``__all__`` (a static list, as type checkers need it).
"""

import collections.abc
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, TypeVar

from . import _core
from ._getters import *  # noqa: F403 - the getters, for the package's modules (_api.getInstanceIndex())
from ._topology import Topology
from .errors import UsageError

__all__ = [
    "checkNumIpusPerReplica",
    "comm",
    "detect",
    "execute_on_instances",
    "finalize",
    "getDeviceId",
    "getLocalDeviceOrdinals",
    "init",
    "isBackendInitialized",
    "launch",
    "registerCommunicator",
    "registerGroupingCommunicators",
    "replica_grouping",
    "synchronize",
    "topology",
]

_R = TypeVar("_R")

# --- topology (no MPI; the getters are made from the field table in _getters.py) -----------------


def topology() -> Topology:
    """This process's topology (a read-only :class:`popdist.Topology`).

    Before init(): detected from the process environment once, without MPI (a bad environment
    raises :class:`popdist.PopDistEnvironmentError` naming the variable). After init(): as refined
    by MPI (host index, local instance index and count).
    """
    return _core.topology()


def detect(env: Mapping[str, str]) -> Topology:
    """The topology a process whose environment is exactly ``env`` (a mapping of str to str) would
    see: a pure function, no MPI, no look at the real environment (a dry run)."""
    if not isinstance(env, collections.abc.Mapping):
        raise UsageError(f"detect: env must be a mapping of variable names to values (str to str), got "
                         f"{_shown(repr(env))}")
    for name, value in env.items():
        if not isinstance(name, str) or not isinstance(value, str):
            raise UsageError(f"detect: env must map str to str, got env[{_shown(repr(name))}] = {_shown(repr(value))}")
    return Topology(_core.detect(dict(env)))


def launch(fn: Callable[..., _R], *args: Any, num_instances: int = 1, shared_dir: Optional[str] = None,
           **options: Any) -> List[_R]:
    """Runs ``fn(*args)`` on ``num_instances`` instances started by ``popdist run``, and returns
    the list of their return values in instance order.

    The job is exactly a ``popdist run`` job: the same topology and variables in every instance
    (``popdist.getInstanceIndex()``, ``RANK``, ``MASTER_ADDR``, ...), the same failure report,
    restarts and logs, and inside a Slurm allocation its nodes are the hosts. The instances'
    output reaches ``sys.stdout`` and ``sys.stderr`` of the caller live, each line tagged with
    its instance as under ``popdist run`` (in a Jupyter notebook: in the cell's output).

    ``fn`` and ``args`` travel by pickling, and so do the return values. When cloudpickle is
    installed it is used by itself, so lambdas, closures and a notebook's functions work;
    without it ``fn`` must be importable by name in the instances (a module-level function of
    a module, or of the script that calls ``popdist.launch``).

    Keyword arguments are ``popdist run``'s long options with dashes as underscores:
    ``hosts`` (``--host``: a string or a list), ``hostfile``, ``num_replicas``,
    ``ipus_per_replica``, ``max_restarts``, ``log_dir``, ``tee``, ``stall_timeout``,
    ``stall_keep_running``, ``grace_period``, ``master_addr``, ``master_port``,
    ``only_output_from_instance``, ``mpi_global_args``, ``mpi_local_args`` (strings or lists),
    ``print_topology`` and ``numa_aware``. ``shared_dir`` is where the job's private
    directory is made (default: ``$TMPDIR``); with instances on several hosts it must be a
    directory every host sees.

    Raises :class:`popdist.errors.LaunchError` when any instance fails (its message is popdist
    run's failure report with each failed instance's traceback; ``failures`` lists them, first
    failure first), :class:`popdist.UsageError` when ``fn`` or ``args`` cannot be pickled or an
    option is refused, and ``TypeError`` for an unknown keyword argument. Ctrl-C
    (``KeyboardInterrupt``) ends the job, waits for it (at most ``grace_period`` + 10 s, then
    kills what is left) and is raised again.

    Example::

        import popdist

        def train(lr):
            return popdist.getInstanceIndex(), lr

        popdist.launch(train, 0.1, num_instances=2)   # [(0, 0.1), (1, 0.1)]
    """
    from ._launch import launch as run  # loaded on first use: `import popdist` stays cheap

    return run(fn, *args, num_instances=num_instances, shared_dir=shared_dir, **options)


def checkNumIpusPerReplica(numIpusPerReplica: int) -> bool:
    """False if POPDIST_NUM_IPUS_PER_REPLICA is set and differs from ``numIpusPerReplica``; when it
    is unset, True exactly when ``numIpusPerReplica`` is 1."""
    return _core.check_ipus_per_replica(_core.topology()._fields, numIpusPerReplica)


def getDeviceId(ipusPerReplica: int = 0) -> int:
    """The id of this instance's multi-device group in IPU numbering (single devices first, then
    groups of 2, 4, ...). ``ipusPerReplica`` 0 takes POPDIST_NUM_IPUS_PER_REPLICA."""
    return _core.device_id(_core.topology()._fields, ipusPerReplica)


def getLocalDeviceOrdinals() -> List[int]:
    """The local device ordinals (e.g. GPU indices) this instance owns: local replicas x devices per
    replica consecutive ordinals starting at local instance index x that count."""
    return _core.topology().local_device_ordinals


# --- MPI lifecycle -------------------------------------------------------------------------------


def _backend() -> Any:
    """popdist._mpi, imported on first use (this is where libmpi gets loaded)."""
    return _core.backend()


def init() -> None:
    """Initializes the MPI backend; idempotent.

    Calls MPI_Init_thread(MPI_THREAD_MULTIPLE) only if nobody did (mpi4py may have), checks the
    topology across instances (raising :class:`popdist.TopologyError` naming the instances that
    disagree) and learns the host layout from MPI. When popdist initialized MPI itself, an uncaught
    exception on any instance of a multi-instance job aborts the whole job (after the traceback is
    printed) instead of leaving the others waiting in a collective or in MPI_Finalize, and so does
    an exit with a failing status (``sys.exit(3)``); popdist finalizes what it initialized at exit.
    """
    from . import _lifecycle  # on first use: `import popdist` stays as light as it was

    _lifecycle.init()


def isBackendInitialized() -> bool:
    """True between init() and finalize(). Never imports MPI: False until something needed it."""
    return _core.is_initialized()


def finalize() -> None:
    """Frees every communicator popdist owns and finalizes MPI if init() initialized it.
    Idempotent; also run at interpreter exit."""
    _core.finalize()


# --- communicators -------------------------------------------------------------------------------


def registerCommunicator(participants: Iterable[int], communicator_id: str = "") -> None:
    """Registers (creates and caches) a communicator over the instances ``participants`` (any
    iterable of ints), named ``communicator_id`` (empty: named by its members). Only members take
    part in MPI; non-members return at once."""
    _core.register_communicator(participants, _identifier(communicator_id))


# popdist.synchronize is the one binding of popdist::synchronize (popdist._core.synchronize, see
# bindings/src/entry_points.cpp): after init() it converts the arguments and waits in C++ without
# a Python frame; before it, a job of one instance has nothing to wait for (no MPI).
synchronize = _core.synchronize


def execute_on_instances(instances: Iterable[int], func: Callable[..., _R], *args: Any,
                         **kwargs: Any) -> Optional[_R]:
    """Runs ``func(*args, **kwargs)`` on the members of ``instances`` only and returns its result
    there (None elsewhere). Collectives inside func (a bare synchronize(), nested calls) are scoped
    to that set. If func raises on a member, that member re-raises its own exception and the other
    members raise :class:`popdist.RemoteExecutionError` naming the instance, the exception type and
    its message: nobody is left waiting."""
    return _core.execute_on_instances(instances, func, args, kwargs)


def registerGroupingCommunicators(grouping: _core.ReplicaGrouping) -> Dict[int, str]:
    """Registers one communicator per group of ``grouping`` (a :class:`popdist.ReplicaGrouping`),
    over the instances hosting the group. Returns {group: communicator id} for this instance's
    groups."""
    if not isinstance(grouping, _core.ReplicaGrouping):
        raise UsageError(f"registerGroupingCommunicators: expected a popdist.ReplicaGrouping, got {grouping!r}")
    return _backend().register_grouping_communicators(grouping.replication_factor, grouping.group_size, grouping.stride)


def replica_grouping(stride: int = 1, group_size: Optional[int] = None,
                     replication_factor: Optional[int] = None) -> _core.ReplicaGrouping:
    """PopXL's ``ir.replica_grouping(stride=1, group_size=None)`` over this job's replicas: the
    stride first, ``group_size`` defaulting to ``replication_factor // stride``, and
    ``replication_factor`` defaulting to getNumTotalReplicas() (the job's replication factor, as
    PopXL's Ir has it under PopRun). Returns a :class:`popdist.ReplicaGrouping`."""
    if replication_factor is None:
        replication_factor = _core.topology().num_total_replicas
    return _core.ReplicaGrouping(replication_factor, group_size=group_size, stride=stride)


def comm(communicator_id: str = "", participants: Iterable[int] = frozenset()) -> Any:
    """An mpi4py communicator over a registered set: ``communicator_id`` or ``participants``
    (empty: the current scope), created on first use. None on instances that are not members.

    The handle stays owned by popdist (freed by finalize()); do not Free() it. Needs mpi4py built
    against the same MPI library; works whether mpi4py or popdist initialized MPI."""
    try:
        import mpi4py.MPI  # noqa: F401 - imported here for a clear error; _mpi uses its C API
    except ImportError as error:
        raise ImportError(
            "popdist.comm() needs mpi4py (pip install 'popdist[mpi]' or pip install mpi4py): " + str(error),
            name="mpi4py",
        ) from error
    name = _identifier(communicator_id)
    return _backend().comm(name, participants)


# --- argument checks (every bad argument is named with its value) ----------------------------


# Integer arguments (counts, indices) are checked by the core's one rule, in C++
# (bindings/src/python_arguments.cpp, integer_argument): the calls pass them on unconverted.


def _shown(text: str) -> str:
    """``text`` for an error message: shortened as the core does (64 characters, then the size)."""
    return _core.shown_text(text)


def _identifier(communicator_id: Any) -> str:
    if not isinstance(communicator_id, str):
        raise UsageError(f"communicator_id must be a str, got {_shown(repr(communicator_id))}")
    return communicator_id
