"""The PopDist API over popdist's C++ core.

Two extension modules back it (DESIGN.md 9): ``_core`` (no MPI; loaded by ``import popdist``) and
``_mpi`` (MPI; imported on the first call that needs it). The current topology is ``_core``'s
detection from the process environment until init(), and ``_mpi``'s (refined by MPI) after it.
"""

import collections.abc
import operator
import os
import sys

from . import _core, _uninterruptible
from ._topology import Topology
from .errors import UsageError

__all__ = [
    "checkNumIpusPerReplica",
    "comm",
    "detect",
    "execute_on_instances",
    "finalize",
    "getDeviceId",
    "getInstanceIndex",
    "getLocalDeviceOrdinals",
    "getLocalInstanceIndex",
    "getNumInstances",
    "getNumIpusPerReplica",
    "getNumLocalReplicas",
    "getNumTotalReplicas",
    "getReplicaIndexOffset",
    "init",
    "isBackendInitialized",
    "isPopdistEnvSet",
    "isUniformReplicasPerInstance",
    "registerCommunicator",
    "registerGroupingCommunicators",
    "replica_grouping",
    "synchronize",
    "topology",
]

_current = None  # the current Topology (None: not detected yet)
_mpi = None  # popdist._mpi once something needed MPI
_live = None  # popdist._mpi between init() and finalize(): the registry's calls go to MPI
_local_ids = set()  # communicator ids used in a single uninitialized process (they all name {0})
_abort_hook_installed = False
_atexit_registered = False
_owns_mpi = False  # init() started MPI: the C++ exit handler finalizes it (see _finalize_at_exit)


# --- topology and getters (no MPI) -------------------------------------------------------------


def topology():
    """This process's topology (a read-only :class:`popdist.Topology`).

    Before init(): detected from the process environment once, without MPI (a bad environment
    raises :class:`popdist.PopDistEnvironmentError` naming the variable). After init(): as refined
    by MPI (host index, local instance index and count).
    """
    global _current
    if _current is None:
        _current = Topology(_core.process_topology())
    return _current


def detect(env):
    """The topology a process whose environment is exactly ``env`` (a mapping of str to str) would
    see: a pure function, no MPI, no look at the real environment (a dry run)."""
    if not isinstance(env, collections.abc.Mapping):
        raise UsageError(f"detect: env must be a mapping of variable names to values (str to str), got "
                         f"{_shown(repr(env))}")
    for name, value in env.items():
        if not isinstance(name, str) or not isinstance(value, str):
            raise UsageError(f"detect: env must map str to str, got env[{_shown(repr(name))}] = {_shown(repr(value))}")
    return Topology(_core.detect(dict(env)))


def getInstanceIndex():
    """This instance's index in 0..getNumInstances()-1 (0 when not launched)."""
    return (_current or topology()).instance_index


def getNumInstances():
    """The number of instances in the job (1 when not launched)."""
    return (_current or topology()).num_instances


def getLocalInstanceIndex():
    """This instance's index among the instances on its host (0 when not launched)."""
    return (_current or topology()).local_instance_index


def getNumLocalReplicas():
    """The number of replicas this instance drives (POPDIST_NUM_LOCAL_REPLICAS, default 1)."""
    return (_current or topology()).num_local_replicas


def getNumTotalReplicas():
    """The number of replicas in the whole job (POPDIST_NUM_TOTAL_REPLICAS, default local x instances)."""
    return (_current or topology()).num_total_replicas


def getReplicaIndexOffset():
    """The global index of this instance's first replica."""
    return (_current or topology()).replica_index_offset


def getNumIpusPerReplica():
    """Devices (IPUs) per replica (POPDIST_NUM_IPUS_PER_REPLICA, default 1)."""
    return (_current or topology()).ipus_per_replica


def isUniformReplicasPerInstance():
    """True when every instance drives the same number of replicas."""
    return (_current or topology()).uniform_replicas_per_instance


def isPopdistEnvSet():
    """True when POPDIST_* variables are present *or* a launcher (mpirun, srun, torchrun) started
    this process. (Graphcore's PopDist looked at POPDIST_* only, so a PopDist script under plain
    ``mpirun -np 4`` ran as 4 unrelated copies; here it runs as 4 instances.)"""
    return (_current or topology()).popdist_env_set


def checkNumIpusPerReplica(numIpusPerReplica):
    """False if POPDIST_NUM_IPUS_PER_REPLICA is set and differs from ``numIpusPerReplica``; when it
    is unset, True exactly when ``numIpusPerReplica`` is 1."""
    n = _integer("checkNumIpusPerReplica", "numIpusPerReplica", numIpusPerReplica)
    return _core.check_ipus_per_replica((_current or topology())._fields, n)


def getDeviceId(ipusPerReplica=0):
    """The id of this instance's multi-device group in IPU numbering (single devices first, then
    groups of 2, 4, ...). ``ipusPerReplica`` 0 takes POPDIST_NUM_IPUS_PER_REPLICA."""
    n = _integer("getDeviceId", "ipusPerReplica", ipusPerReplica)
    if n < 0:
        raise UsageError(f"getDeviceId: ipusPerReplica must be >= 0 (0 = from the environment), got {n}")
    return _core.device_id((_current or topology())._fields, n)


def getLocalDeviceOrdinals():
    """The local device ordinals (e.g. GPU indices) this instance owns: local replicas x devices per
    replica consecutive ordinals starting at local instance index x that count."""
    return (_current or topology()).local_device_ordinals


# --- MPI lifecycle -------------------------------------------------------------------------------


def _backend():
    """popdist._mpi, imported on first use (this is where libmpi gets loaded)."""
    global _mpi
    if _mpi is None:
        from . import _mpi as module

        _mpi = module
    return _mpi


def _single_uninitialized():
    """True in a job of one instance before init() (or after finalize()): the registry's calls
    then do what they would do in that job -- synchronize returns, execute_on_instances runs the
    function -- without MPI, so that the PopDist pattern ``if isPopdistEnvSet(): init()`` followed
    by unconditional calls works in a plain single process (DESIGN.md 4)."""
    return _live is None and (_current or topology()).num_instances == 1


def init():
    """Initializes the MPI backend; idempotent.

    Calls MPI_Init_thread(MPI_THREAD_MULTIPLE) only if nobody did (mpi4py may have), checks the
    topology across instances (raising :class:`popdist.TopologyError` naming the instances that
    disagree) and learns the host layout from MPI. When popdist initialized MPI itself, an uncaught
    exception on any instance of a multi-instance job aborts the whole job (after the traceback is
    printed) instead of leaving the others waiting in a collective or in MPI_Finalize, and so does
    an exit with a failing status (``sys.exit(3)``); popdist finalizes what it initialized at exit.
    """
    global _current, _live, _owns_mpi
    backend = _backend()
    try:
        initialized_mpi = _uninterruptible.call(backend.init, "popdist.init()")
    except KeyboardInterrupt:
        # Ctrl-C inside init()'s exchange: the others wait in it for this instance. End the job
        # as an uncaught exception after init() would, once the traceback is out.
        if topology().num_instances > 1:
            _arm_abort(forced=True)
        raise
    _current = Topology(backend.topology())
    _live = backend
    if initialized_mpi:
        _owns_mpi = True
        _install_abort_hook()
    _register_atexit()


def isBackendInitialized():
    """True between init() and finalize(). Never imports MPI: False until something needed it."""
    module = _mpi or sys.modules.get("popdist._mpi")
    return bool(module is not None and module.is_initialized())


def finalize():
    """Frees every communicator popdist owns and finalizes MPI if init() initialized it.
    Idempotent; also run at interpreter exit."""
    global _live
    if _mpi is not None:
        _mpi.finalize()
    _live = None


def _finalize_at_exit():
    # When init() started MPI, the C++ library's exit handler finalizes it after the interpreter
    # is gone: only there is the exit status known, and a failing one must end the job rather
    # than wait in MPI_Finalize for instances that wait for this one (Python's atexit cannot see
    # it). Otherwise mpi4py or the host program started MPI: Python-level atexit runs in LIFO
    # order with mpi4py's hook, so popdist lets go of its communicators before MPI is finalized.
    if _owns_mpi:
        return
    try:
        finalize()
    except Exception as error:  # noqa: BLE001 - at exit there is nobody left to raise to
        print(f"popdist: finalize at exit failed: {error}", file=sys.stderr)


def _register_atexit():
    global _atexit_registered
    if not _atexit_registered:
        import atexit

        atexit.register(_finalize_at_exit)
        _atexit_registered = True


def _install_abort_hook():
    """Chains sys.excepthook so that an uncaught exception ends the whole job (like
    ``python -m mpi4py``). Without it the failing instance would go on to MPI_Finalize while the
    others wait forever in their next collective.

    The abort does not happen inside the hook: hooks chained later (torch.distributed's
    init_process_group wraps it and points sys.stderr at a buffer while the inner hooks run,
    writing the buffer, prefixed, when they return) would lose the traceback. The hook only arms
    the abort: it runs as the first atexit callback (registered last, atexit is LIFO), when every
    hook has returned and written what it had; a daemon timer is the fallback when a non-daemon
    thread keeps the interpreter from reaching atexit."""
    global _abort_hook_installed
    if _abort_hook_installed:
        return
    previous = sys.excepthook

    def abort_on_uncaught_exception(exc_type, exc, tb):
        try:
            previous(exc_type, exc, tb)
        finally:
            if _mpi is not None and _mpi.is_initialized() and (_current or topology()).num_instances > 1:
                _arm_abort()

    sys.excepthook = abort_on_uncaught_exception
    _abort_hook_installed = True


#: Seconds between an uncaught exception and the job's abort when the interpreter does not reach
#: atexit by itself (a non-daemon thread still running, e.g. blocked in a collective).
ABORT_FALLBACK_SECONDS = 5.0
_abort_armed = False
_abort_forced = False


def _arm_abort(forced=False):
    """``forced``: abort even though init() did not complete (MPI is up, the exchange is not)."""
    global _abort_armed, _abort_forced
    _abort_forced = _abort_forced or forced
    if _abort_armed:
        return
    _abort_armed = True
    import atexit
    import threading

    atexit.register(_abort_job_now)
    timer = threading.Timer(ABORT_FALLBACK_SECONDS, _abort_job_now)
    timer.daemon = True
    timer.start()


def _abort_job_now():
    for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        try:
            stream.flush()
        except Exception:  # noqa: BLE001,S110 - a closed stream must not stop the abort
            pass
    if _mpi is not None and (_abort_forced or _mpi.is_initialized()):
        _mpi.abort_job(1)  # MPI_Abort when MPI is up (and not finalized), else an exit


# --- communicators -------------------------------------------------------------------------------


def registerCommunicator(participants, communicator_id=""):
    """Registers (creates and caches) a communicator over the instances ``participants`` (any
    iterable of ints), named ``communicator_id`` (empty: named by its members). Only members take
    part in MPI; non-members return at once."""
    name = _identifier(communicator_id)
    if _single_uninitialized():
        _core.checked_instances(participants, 1, "registerCommunicator", "participants")
        if name:
            _local_ids.add(name)
        return
    _backend().register_communicator(participants, name)


# popdist.synchronize is the one binding of popdist::synchronize (popdist._core.synchronize, see
# bindings/src/synchronize_entry.cpp): after init() it converts the arguments and waits in C++
# without a Python frame; before init() (or after finalize()) it calls the function below.
synchronize = _core.synchronize


def _synchronize_without_mpi(communicator_id="", participants=(), timeout=None):
    """popdist.synchronize() while the MPI backend is not initialized: in a job of one instance,
    the same checks and nothing to wait for (no MPI); with several, the MPI binding, which checks
    the arguments and then names the missing init()."""
    name = _identifier(communicator_id)
    if _single_uninitialized():
        return _synchronize_single(name, participants, timeout)
    _backend().synchronize(name, participants, timeout)


# Its TypeErrors (an unknown keyword, too many arguments) name synchronize(), as the binding's do.
_synchronize_without_mpi.__qualname__ = "synchronize"


def _synchronize_single(name, participants, timeout):
    """synchronize() in a job of one instance without MPI: the same checks, then nothing to wait for."""
    _core.checked_timeout(timeout, "synchronize")
    _default_timeout()
    members = _core.checked_instances(participants, 1, "synchronize(participants=...)", "participants", True)
    if name and not members and name not in _local_ids:
        raise UsageError(
            f"synchronize: unknown communicator id {_shown(repr(name))} (no ids are registered); register it first "
            f"with registerCommunicator(participants, {_shown(repr(name))}), or pass the participants"
        )
    if name:
        _local_ids.add(name)


def execute_on_instances(instances, func, *args, **kwargs):
    """Runs ``func(*args, **kwargs)`` on the members of ``instances`` only and returns its result
    there (None elsewhere). Collectives inside func (a bare synchronize(), nested calls) are scoped
    to that set. If func raises on a member, that member re-raises its own exception and the other
    members raise :class:`popdist.RemoteExecutionError` naming the instance, the exception type and
    its message: nobody is left waiting."""
    if _live is not None:
        # Hot path: the binding converts and checks the arguments itself, before any MPI.
        return _live.execute_on_instances(instances, func, args, kwargs)
    if _single_uninitialized():
        # A job of one instance: instance 0 is the only valid member, and it is this process.
        _core.checked_instances(instances, 1, "execute_on_instances", "instances")
        if not callable(func):
            raise UsageError(f"execute_on_instances: func must be callable, got {func!r}")
        return func(*args, **kwargs)
    # Several instances and no init(): the binding checks the arguments, then names the missing init().
    return _backend().execute_on_instances(instances, func, args, kwargs)


def registerGroupingCommunicators(grouping):
    """Registers one communicator per group of ``grouping`` (a :class:`popdist.ReplicaGrouping`),
    over the instances hosting the group. Returns {group: communicator id} for this instance's
    groups."""
    if not isinstance(grouping, _core.ReplicaGrouping):
        raise UsageError(f"registerGroupingCommunicators: expected a popdist.ReplicaGrouping, got {grouping!r}")
    return _backend().register_grouping_communicators(grouping.replication_factor, grouping.group_size, grouping.stride)


def replica_grouping(stride=1, group_size=None, replication_factor=None):
    """PopXL's ``ir.replica_grouping(stride=1, group_size=None)`` over this job's replicas: the
    stride first, ``group_size`` defaulting to ``replication_factor // stride``, and
    ``replication_factor`` defaulting to getNumTotalReplicas() (the job's replication factor, as
    PopXL's Ir has it under PopRun). Returns a :class:`popdist.ReplicaGrouping`."""
    if replication_factor is None:
        replication_factor = getNumTotalReplicas()
    return _core.ReplicaGrouping(replication_factor, group_size=group_size, stride=stride)


def comm(communicator_id="", participants=frozenset()):
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


_INT_MAX = 2**31 - 1  # the C++ API's int


def _shown(text):
    """``text`` for an error message: shortened as the core does (64 characters, then the size)."""
    return _core.shown_text(text)


def _default_timeout():
    """POPDIST_SYNC_TIMEOUT under the timeout rule (None: unset or inf); a bad value raises
    PopDistEnvironmentError naming it, as init() does under MPI."""
    return _core.parsed_timeout_variable(os.environ.get("POPDIST_SYNC_TIMEOUT"))


def _integer(call, name, value):
    """An integer argument of ``call``: a bool, a float or a value beyond the C++ int is a
    UsageError naming the call and the argument (not pybind11's list of signatures)."""
    if isinstance(value, bool):
        raise UsageError(f"{call}: {name} must be an integer, got {value!r}")
    try:
        number = operator.index(value)
    except TypeError:
        raise UsageError(f"{call}: {name} must be an integer, got {_shown(repr(value))}") from None
    if not -_INT_MAX - 1 <= number <= _INT_MAX:
        shown = number if number.bit_length() <= 256 else f"<an integer of {number.bit_length()} bits>"
        raise UsageError(f"{call}: {name}={shown} is out of range: expected an integer in 0..{_INT_MAX}")
    return number


def _identifier(communicator_id):
    if not isinstance(communicator_id, str):
        raise UsageError(f"communicator_id must be a str, got {_shown(repr(communicator_id))}")
    return communicator_id
