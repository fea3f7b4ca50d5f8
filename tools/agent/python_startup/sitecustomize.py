"""`popdist run`'s start-up hook for Python instances: it puts this directory first on every
instance's PYTHONPATH, so Python imports this module at start-up (site.py imports `sitecustomize`).

Why: torch.distributed's gloo worker threads may still hold the last collective's work, and with it
tensors that Python objects own, when the interpreter starts to finalize. A thread that then
releases them takes the GIL of a dying interpreter, is ended by a forced unwind through a noexcept
frame, and the process aborts after the script finished ("terminate called without an active
exception", status 134). It happens under torchrun just as well (pytorch/pytorch PR 179291, closed
unmerged), in scripts that never import popdist (Accelerate's, torchrun's examples). popdist's
lifecycle (popdist/_lifecycle.py, the one owner of the process's life under Python) already tears
torch.distributed down at exit for popdist.torch's users; this hook calls the same release for
every Python program that `popdist run` starts, while the interpreter is whole.

What it does at start-up: registers one atexit callback (atexit runs callbacks last-registered
first, so this one runs after the program's own and its libraries'), then runs the
sitecustomize that this one hides, if there is one, and takes this directory off sys.path again.
The callback does nothing unless the program imported torch.distributed; then it imports
popdist._lifecycle (when this interpreter has popdist) and runs its release. Nothing of popdist is
imported at start-up: most programs never need it. Off with POPDIST_PYTHON_EXIT_HOOK=0.

It also makes the instance's stacks available to `popdist stacks` (tools/stacks/stack_report.hpp):
when popdist run exports POPDIST_RUN_JOB_DIR, Python's faulthandler dumps every thread's stack into
<dir>/instance<RANK>.stacks on SIGURG (ignored by default, so a signal that comes before this ran
does nothing), and <dir>/instance<RANK>.python records the pid and main thread. Best effort: a
directory this instance cannot write (another host) changes nothing. Processes that the instance
starts inherit the variable and leave the instance's files alone.
"""

import atexit
import importlib.machinery
import importlib.util
import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))


def _release_torch_distributed():
    if "torch.distributed" not in sys.modules:
        return
    try:
        from popdist._lifecycle import release_torch_distributed
    except ImportError:
        return  # this interpreter has no popdist: nothing to release with
    except Exception as error:  # noqa: BLE001 - at exit there is nobody left to raise to
        print(f"popdist run: the exit hook could not import popdist: {error}", file=sys.stderr, flush=True)
        return
    release_torch_distributed()


def _register_stack_dump():
    job_dir, rank = os.environ.get("POPDIST_RUN_JOB_DIR"), os.environ.get("RANK", "")
    if not job_dir or not rank.isdigit() or os.environ.get("_POPDIST_RUN_STACKS_OF") == job_dir:
        return  # not under popdist run, or a process that an instance started
    os.environ["_POPDIST_RUN_STACKS_OF"] = job_dir
    try:
        import _thread
        import faulthandler
        import signal

        stem = os.path.join(job_dir, f"instance{rank}")
        # A descriptor, not a file object: nothing for Python to warn about as unclosed at exit
        # (-W error). Appending: `popdist stacks` empties the file before each dump.
        stacks = os.open(stem + ".stacks", os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o644)
        faulthandler.register(signal.SIGURG, file=stacks, all_threads=True)
        # (site.py imports this module in the main thread; `threading` is left for the program to import)
        marker = f"{stem}.python.{os.getpid()}"
        with open(marker, "w") as f:
            f.write(f"pid={os.getpid()} thread={_thread.get_ident()} host={os.uname().nodename}\n")
        os.replace(marker, stem + ".python")
    except Exception:  # noqa: BLE001 - best effort: nothing here may keep the program from starting
        pass


def _on_this_path(entry):
    return os.path.abspath(entry or os.curdir) == _HERE


def _run_hidden_sitecustomize():
    """The sitecustomize further down sys.path (a distribution's, a user's), as site.py would have
    imported it without us."""
    rest = [entry for entry in sys.path if not _on_this_path(entry)]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", rest)
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    sys.modules["sitecustomize"] = module
    spec.loader.exec_module(module)


if os.environ.get("POPDIST_PYTHON_EXIT_HOOK", "1") != "0":
    atexit.register(_release_torch_distributed)
_register_stack_dump()
sys.path[:] = [entry for entry in sys.path if not _on_this_path(entry)]
_run_hidden_sitecustomize()
