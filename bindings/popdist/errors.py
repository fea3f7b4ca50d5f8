"""popdist's exception classes, one hierarchy mirroring the C++ one (include/popdist/error.hpp).

Both extension modules (``popdist._core`` and ``popdist._mpi``) translate their C++ exceptions
into these classes, so ``except popdist.PopDistError`` catches everything popdist raises:

=========================== ================================= ====================================
Python class                C++ class                         raised when
=========================== ================================= ====================================
``PopDistError``            ``popdist::Error``                base of everything below
``PopDistEnvironmentError`` ``popdist::EnvironmentError``     a launcher or POPDIST_* variable is
                                                              malformed or contradicts another
``TopologyError``           ``popdist::TopologyError``        instances disagree about the job, or
                                                              the topology disagrees with MPI
``UsageError``              ``popdist::UsageError``           bad arguments or wrong state (also a
                                                              ``ValueError``)
``MPIError``                ``popdist::MpiError``             an MPI call failed
``TimeoutError``            ``popdist::TimeoutError``         a timed synchronize gave up (also the
                                                              builtin ``TimeoutError``)
``RemoteExecutionError``    ``popdist::RemoteExecutionError`` execute_on_instances' function failed
                                                              on another member
``LaunchError``             (Python only)                     a job started by popdist.launch()
                                                              failed
=========================== ================================= ====================================

``PopDistEnvironmentError`` is not called ``EnvironmentError`` because that name is a builtin
alias of ``OSError``; shadowing it would change the meaning of ``except EnvironmentError`` in any
module that does ``from popdist import *``.
"""

import builtins

__all__ = [
    "PopDistError",
    "PopDistEnvironmentError",
    "TopologyError",
    "UsageError",
    "MPIError",
    "TimeoutError",
    "RemoteExecutionError",
    "LaunchError",
    "InstanceFailure",
]


class PopDistError(Exception):
    """Base class of every exception popdist raises."""


class PopDistEnvironmentError(PopDistError):
    """A launcher or POPDIST_* variable is malformed or contradicts another.

    The message names the variable, its value and what was expected.
    """


class TopologyError(PopDistError):
    """The instances disagree about the job, or the topology disagrees with MPI (raised by init())."""


class UsageError(PopDistError, ValueError):
    """A call was made with bad arguments or in the wrong state (e.g. a collective before init())."""


class MPIError(PopDistError):
    """An MPI call failed.

    Attributes: ``function`` (the MPI function), ``code`` (its error code) and ``mpi_message``
    (``MPI_Error_string``'s text).
    """

    def __init__(self, message, function="", code=0, mpi_message=""):
        super().__init__(message)
        self.function = function
        self.code = code
        self.mpi_message = mpi_message


class TimeoutError(PopDistError, builtins.TimeoutError):  # noqa: A001 - deliberately also the builtin
    """A timed synchronize() gave up.

    Attribute ``missing_instances``: the instances that did not arrive, ascending.
    """

    def __init__(self, message, missing_instances=()):
        super().__init__(message)
        self.missing_instances = list(missing_instances)

    def __str__(self):
        # OSError formats multi-argument instances as "[Errno ...]"; we always carry one message.
        return str(self.args[0]) if self.args else ""


class RemoteExecutionError(PopDistError):
    """The function given to execute_on_instances() failed on another member.

    Attributes: ``instance`` (the instance it failed on), ``exception_type`` (e.g. ``"ValueError"``
    or ``"mymodule.MyError"``) and ``exception_message`` (``str()`` of the exception).
    """

    def __init__(self, message, instance=-1, exception_type="", exception_message=""):
        super().__init__(message)
        self.instance = instance
        self.exception_type = exception_type
        self.exception_message = exception_message


class LaunchError(PopDistError):
    """A job started by popdist.launch() failed (or could not start).

    ``str()`` is popdist run's failure report, with each failed instance's remote traceback.
    Attributes: ``status`` (the job's exit status as a shell reports it), ``attempt`` and
    ``attempts`` (the last attempt, from 0, of 1 + max_restarts), and ``failures``: one
    :class:`InstanceFailure` per failed instance, first failure first.
    """

    def __init__(self, message, status=1, failures=(), attempt=0, attempts=1):
        super().__init__(message)
        self.status = status
        self.failures = list(failures)
        self.attempt = attempt
        self.attempts = attempts


class InstanceFailure:
    """How one instance of a popdist.launch job failed, as LaunchError.failures lists it.

    Attributes: ``instance``, ``host``, ``status`` (as a shell reports it: 128 + a signal),
    ``status_text`` (``"exit code 1"``, ``"SIGKILL (signal 9: ...)"``), ``stopped_by_teardown``
    (the job's teardown ended it after the first failure), ``exception_type`` and ``message``
    (empty when the function did not raise, e.g. a crash), ``traceback`` (the remote traceback as
    text, else the instance's last error lines) and ``exception`` (the exception object itself
    when it could be unpickled here, else None).
    """

    def __init__(self, instance, host="", status=1, status_text="", stopped_by_teardown=False,
                 exception_type="", message="", traceback="", exception=None):
        self.instance = instance
        self.host = host
        self.status = status
        self.status_text = status_text
        self.stopped_by_teardown = stopped_by_teardown
        self.exception_type = exception_type
        self.message = message
        self.traceback = traceback
        self.exception = exception

    def __repr__(self):
        return f"InstanceFailure(instance={self.instance}, host={self.host!r}, status_text={self.status_text!r})"
