"""The output of a popdist.launch job, forwarded live: popdist run's stdout and stderr (every
instance's lines, tagged) are read by two threads and written to the caller's sys.stdout and
sys.stderr as they come, so that in a Jupyter kernel they appear in the cell (the kernel replaces
sys.stdout; the file descriptors lead to the kernel's terminal). Chunks, not lines: a progress bar
that redraws with a carriage return is shown as it redraws.
"""

import codecs
import collections
import os
import sys
import threading

_DRAIN_SECONDS = 10
_TAIL_LINES = 40  # of popdist run's stderr, for an error when the job could not start


class _Forwarder:
    def __init__(self, pipe, stream, keep_tail):
        self._pipe = pipe
        self._stream = stream
        self._tail = collections.deque(maxlen=_TAIL_LINES) if keep_tail else None
        self._thread = threading.Thread(target=self._copy, name="popdist-launch-output", daemon=True)
        self._thread.start()

    def _write(self, text):
        if self._tail is not None:
            self._tail.extend(text.splitlines())
        if self._stream is None:
            return
        try:
            self._stream.write(text)
            self._stream.flush()
        except (OSError, ValueError):  # a closed stream: the output is lost, the job goes on
            self._stream = None

    def _copy(self):
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        descriptor = self._pipe.fileno()
        while True:
            chunk = os.read(descriptor, 65536)
            if not chunk:
                break
            self._write(decoder.decode(chunk))
        self._write(decoder.decode(b"", final=True))
        self._pipe.close()

    def join(self, timeout):
        self._thread.join(timeout)

    def tail(self):
        return "\n".join(self._tail or ())


class Forwarding:
    """Both forwarders of one job."""

    def __init__(self, stdout_pipe, stderr_pipe):
        self._out = _Forwarder(stdout_pipe, sys.stdout, keep_tail=False)
        self._err = _Forwarder(stderr_pipe, sys.stderr, keep_tail=True)

    def finish(self):
        """Waits until popdist run's output has all been written (its pipes closed); bounded, since
        a process the job left behind may hold them open."""
        self._out.join(_DRAIN_SECONDS)
        self._err.join(_DRAIN_SECONDS)

    def stderr_tail(self):
        return self._err.tail()


def forward(stdout_pipe, stderr_pipe):
    return Forwarding(stdout_pipe, stderr_pipe)
