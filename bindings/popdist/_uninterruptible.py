"""Ctrl-C while init() is inside a step MPI cannot leave.

Most of init()'s waits poll, and Ctrl-C there raises KeyboardInterrupt within ~50 ms (the C++
waits run Python's signal handlers, popdist/interrupts.hpp). But MPI_Init_thread (Open MPI's
start-up fence waits there for every instance to start MPI) and the few blocking collectives
that have no nonblocking form cannot be left: the main thread, blocked inside them, could raise
the KeyboardInterrupt only once the last instance has come -- or never. So while the backend's
init() runs, a watcher thread reads the signal numbers Python's C handler writes to a wakeup fd.
When SIGINT comes (with Python's default handler, KeyboardInterrupt) and init() has not come out
with the KeyboardInterrupt itself within GRACE_SECONDS, the instance ends the way an uncaught
KeyboardInterrupt ends it: a message on stderr, then exit status 130, so that the launcher ends
the job. Another handler the user set, and every other signal, is left to Python as always.
"""

import os
import select
import signal
import sys
import threading

#: How long the watcher leaves a polled wait to raise the KeyboardInterrupt itself.
GRACE_SECONDS = 0.08
_POLL_SECONDS = 0.02


def call(function, what):
    """``function()`` with the watcher running (only in the main thread, where Python runs
    signal handlers, and when it can take the wakeup fd)."""
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
                interrupted_at = interrupted_at or _now()
        if interrupted_at is not None and _now() - interrupted_at >= GRACE_SECONDS and not finished.is_set():
            _end_instance(what)


def _now():
    import time

    return time.monotonic()


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
