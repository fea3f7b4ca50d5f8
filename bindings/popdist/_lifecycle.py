"""The process's life under Python, owned here and nowhere else (as mpi4py's one ``bootstrap()`` in
atimport.pxi owns it): what Python adds to the C++ order of src/process/lifecycle.cpp. popdist.init,
popdist.torch, popdist.lightning and `popdist run`'s start-up hook only call it; popdist._core
gives it the mechanics (start the backend, finalize, abort). The whole order is drawn in
docs/guide/development.md ("The process's life").

- init(): the backend starts under the interrupt watcher (Ctrl-C inside MPI_Init_thread cannot be
  raised there); when it started MPI, the excepthook that ends the job on an uncaught exception.
- at exit, ONE atexit callback: the teardowns registered with at_exit() (torch.distributed's
  release), newest first, then finalize() when mpi4py or the host program started MPI (before
  mpi4py's own atexit finalizes it: atexit is LIFO). When init() started MPI, the C++ on_exit hook
  finalizes after the interpreter has exited, the only place where the exit status is known.
"""

import atexit
import os
import sys

from . import _core

#: Seconds between an uncaught exception and the job's abort when the interpreter does not reach
#: atexit by itself (a non-daemon thread still running, e.g. blocked in a collective).
ABORT_FALLBACK_SECONDS = 5.0
#: How long the interrupt watcher leaves a polled wait to raise the KeyboardInterrupt itself.
GRACE_SECONDS = 0.08
_POLL_SECONDS = 0.02


class _Life:
    """The lifecycle's state, for the life of the process."""

    def __init__(self):
        self.owns_mpi = False  # init() started MPI: the C++ on_exit hook finalizes it
        self.exit_registered = False  # the one atexit callback (_at_exit)
        self.teardowns = []  # run newest first at exit
        self.hook_installed = False  # sys.excepthook arms the abort
        self.abort_armed = False
        self.abort_forced = False  # abort although init() did not complete (MPI up, exchange not)
        self.torch_release_arranged = False
        self.torch_group_destroyed = []  # called once the default group is destroyed at exit


_life = _Life()


def init():
    """Starts the backend (idempotent): popdist.init(), documented in _api.py."""
    try:
        started_mpi = _uninterruptibly(_core.start_backend, "popdist.init()")
    except KeyboardInterrupt:
        # Ctrl-C inside init()'s exchange: the others wait in it for this instance. End the job as
        # an uncaught exception after init() would, once the traceback is out.
        if _core.topology().num_instances > 1:
            _arm_abort(forced=True)
        raise
    if started_mpi:
        # Whoever initialized MPI owns the job's exit policy: with mpi4py's runner, mpi4py.
        _life.owns_mpi = True
        _install_abort_hook()
    _register_exit(latest=False)


def at_exit(teardown):
    """Runs ``teardown()`` at interpreter exit, before popdist finalizes (newest first)."""
    if not callable(teardown):
        raise TypeError("at_exit: expected a callable")
    _life.teardowns.append(teardown)
    _register_exit(latest=True)


def _register_exit(latest):
    # `latest`: move the one callback to the newest place (atexit runs newest first), so that a
    # teardown added now runs before the exit handlers registered until now, as if it had
    # registered its own. popdist.torch's release ran there when it did register its own; run
    # later (from init()'s place), an unmodified Accelerate script under `popdist run` was seen to
    # end in std::terminate at exit (gloo threads left to the interpreter's teardown).
    if _life.exit_registered:
        if not latest:
            return
        atexit.unregister(_at_exit)
    atexit.register(_at_exit)
    _life.exit_registered = True


def _at_exit():
    for teardown in reversed(_life.teardowns):
        try:
            teardown()
        except BaseException:  # noqa: BLE001 - reported; the other teardowns still run
            import traceback

            _say('Exception ignored in: "popdist\'s teardown at exit"\n' + traceback.format_exc())
    if _life.owns_mpi:
        return  # the C++ on_exit hook finalizes, with the exit status
    try:
        _core.finalize()
    except Exception as error:  # noqa: BLE001 - at exit there is nobody left to raise to
        _say(f"popdist: finalize at exit failed: {error}\n")


def _say(text):
    # One write: under plain mpirun every instance's stderr merges into one stream, and print()
    # writes its pieces apart on an unbuffered stream (PYTHONUNBUFFERED), so another instance's
    # line could come between them.
    sys.stderr.write(text)
    sys.stderr.flush()


# --- uncaught exceptions ---------------------------------------------------------------------------


def _install_abort_hook():
    # Chains sys.excepthook so that an uncaught exception ends the whole job, like `python -m
    # mpi4py`: otherwise the failing instance would go on to MPI_Finalize while the others wait
    # forever in their next collective. The hook only arms the abort: hooks chained later
    # (torch.distributed's points sys.stderr at a buffer while the inner hooks run, writing it when
    # they return) would lose the traceback.
    if _life.hook_installed:
        return
    previous = sys.excepthook

    def abort_on_uncaught_exception(kind, value, traceback):
        try:
            previous(kind, value, traceback)
        finally:
            if _core.is_initialized() and _core.topology().num_instances > 1:
                _arm_abort(forced=False)

    sys.excepthook = abort_on_uncaught_exception
    _life.hook_installed = True


def _arm_abort(forced):
    _life.abort_forced = _life.abort_forced or forced
    if _life.abort_armed:
        return
    _life.abort_armed = True
    # Registered now, hence run first (atexit is LIFO): after every excepthook has returned. The
    # timer, for an interpreter that does not reach atexit (a non-daemon thread still waiting).
    atexit.register(_abort_job_now)
    import threading

    timer = threading.Timer(ABORT_FALLBACK_SECONDS, _abort_job_now)
    timer.daemon = True
    timer.start()


def _abort_job_now():
    for name in ("stdout", "stderr", "__stdout__", "__stderr__"):
        stream = getattr(sys, name, None)
        try:
            if stream is not None:
                stream.flush()
        except Exception:  # noqa: BLE001,S110 - a closed stream must not stop the abort
            pass
    if "popdist._mpi" in sys.modules and (_life.abort_forced or _core.is_initialized()):
        _core.backend().abort_job(1)  # MPI_Abort when MPI is up (and not finalized), else an exit


# --- Ctrl-C inside a step MPI cannot leave ---------------------------------------------------------
# Most of init()'s waits poll, and Ctrl-C there raises KeyboardInterrupt within ~50 ms (the C++
# waits run Python's signal handlers, src/mpi/interrupts.hpp). But MPI_Init_thread (Open MPI's
# start-up fence) and the few blocking collectives without a nonblocking form cannot be left: the
# main thread could raise the KeyboardInterrupt only once the last instance has come, or never. So
# while the backend starts, a watcher thread reads the signal numbers Python's C handler writes to
# a wakeup fd; when SIGINT comes (with Python's default handler) and init() has not raised within
# GRACE_SECONDS, the instance ends as an uncaught KeyboardInterrupt ends it (status 130), so that
# the launcher ends the job. Other handlers and signals are left to Python as always.


def _uninterruptibly(function, what):
    """``function()`` with the watcher running (only in the main thread, where Python runs signal
    handlers, and when it can take the wakeup fd)."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        return function()
    read_end, write_end = os.pipe()
    os.set_blocking(write_end, False)
    try:
        previous = signal.set_wakeup_fd(write_end, warn_on_full_buffer=False)
    except (ValueError, OSError):
        os.close(read_end)
        os.close(write_end)
        return function()
    finished = threading.Event()
    watcher = threading.Thread(target=_watch, args=(read_end, previous, finished, what),
                               name="popdist-interrupt-watcher", daemon=True)
    watcher.start()
    try:
        return function()
    finally:
        finished.set()
        watcher.join()
        signal.set_wakeup_fd(previous)
        os.close(read_end)
        os.close(write_end)


def _watch(read_end, previous, finished, what):
    import select
    import signal
    import time

    interrupted_at = None
    while not finished.is_set():
        ready, _, _ = select.select([read_end], [], [], _POLL_SECONDS)
        if ready:
            numbers = os.read(read_end, 64)
            if previous >= 0:  # the user's own wakeup fd (asyncio's) still learns of every signal
                try:
                    os.write(previous, numbers)
                except OSError:
                    pass
            if signal.SIGINT in numbers and signal.getsignal(signal.SIGINT) is signal.default_int_handler:
                interrupted_at = interrupted_at or time.monotonic()
        if interrupted_at is not None and time.monotonic() - interrupted_at >= GRACE_SECONDS and not finished.is_set():
            _end_instance(what)


def _end_instance(what):
    try:
        sys.stdout.flush()
    except Exception:  # noqa: BLE001,S110 - a closed stream must not keep the instance alive
        pass
    message = (f"KeyboardInterrupt: Ctrl-C inside {what} while MPI waited for the other instances in a step it "
               "cannot leave (MPI_Init_thread or a blocking collective of init()): this instance ends as on an "
               "uncaught KeyboardInterrupt (exit status 130), and the launcher ends the job\n")
    try:
        os.write(2, message.encode())
    except OSError:
        pass
    os._exit(130)


# --- torch.distributed at exit ---------------------------------------------------------------------


def arrange_torch_release(on_group_destroyed=None):
    """Once per process: release_torch_distributed() at exit, from the one exit callback (so
    before popdist finalizes). popdist.torch's init_process_group() and popdist.lightning's
    environment call it, in either order; each ``on_group_destroyed`` given is called once there."""
    if on_group_destroyed is not None and on_group_destroyed not in _life.torch_group_destroyed:
        _life.torch_group_destroyed.append(on_group_destroyed)
    if not _life.torch_release_arranged:
        _life.torch_release_arranged = True
        at_exit(lambda: release_torch_distributed(_torch_group_destroyed))


def _torch_group_destroyed():
    for callback in _life.torch_group_destroyed:
        callback()


def release_torch_distributed(on_group_destroyed=None):
    """Tears torch.distributed down, when the program imported it, in the order that leaves no
    thread behind (README "Clean exit"). Its worker threads must be gone before the interpreter
    finalizes: a gloo thread that then runs a Python callback takes the GIL of a dying interpreter
    and is ended by a forced unwind through a noexcept frame ("terminate called without an active
    exception", status 134). Destroying the default group only unregisters it while a
    DistributedDataParallel module still holds it (its reducer keeps the group, and the group its
    threads), and a module caught in a reference cycle lives until the interpreter's teardown. So:
    collect the cycles, detach any DDP module still alive from its reducer and group, destroy the
    group, call ``on_group_destroyed`` (popdist.torch forgets its store), and collect again, which
    destroys the group and joins its threads here."""
    dist = sys.modules.get("torch.distributed")
    if dist is None:
        return
    import gc
    import warnings

    try:
        # Warnings raised by this teardown are popdist's, not the program's: none is shown, and
        # under -W error none ends it.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            gc.collect()
            _detach_ddp_modules(gc, sys.modules.get("torch.nn.parallel.distributed"))
            if dist.is_initialized():
                dist.destroy_process_group()
            if on_group_destroyed is not None:
                on_group_destroyed()
            gc.collect()
    except Exception as error:  # noqa: BLE001 - at exit there is nobody left to raise to
        _say(f"popdist.torch: releasing torch.distributed at exit failed: {error}\n")


def _detach_ddp_modules(gc, ddp):
    # A function of its own: no reference to a module outlives it.
    if ddp is None:
        return
    # type(), not isinstance(): isinstance reads __class__, which some objects answer with a
    # warning (torch.distributed.reduce_op) or arbitrary code.
    wanted = ddp.DistributedDataParallel
    for module in [o for o in gc.get_objects() if issubclass(type(o), wanted)]:
        for name in ("logger", "reducer", "process_group"):
            module.__dict__.pop(name, None)
