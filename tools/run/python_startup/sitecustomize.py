"""`popdist run`'s start-up hook for Python instances: it puts this directory first on every
instance's PYTHONPATH, so Python imports this module at start-up (site.py imports `sitecustomize`).

Why: torch.distributed's gloo worker threads may still hold the last collective's work, and with it
tensors that Python objects own, when the interpreter starts to finalize. A thread that then
releases them takes the GIL of a dying interpreter, is ended by a forced unwind through a noexcept
frame, and the process aborts after the script finished ("terminate called without an active
exception", status 134). It happens under torchrun just as well (pytorch/pytorch PR 179291, closed
unmerged), in scripts that never import popdist (Accelerate's, torchrun's examples). popdist.torch
already tears torch.distributed down at exit for its own users; this hook does the same for every
Python program that `popdist run` starts, while the interpreter is whole.

What it does at start-up: registers one atexit callback (atexit runs callbacks last-registered
first, so this one runs after the program's own and its libraries'), then runs the
sitecustomize that this one hides, if there is one, and takes this directory off sys.path again.
The callback does nothing unless the program imported torch.distributed; then it imports
popdist.torch (when this interpreter has popdist) and runs its teardown. Off with
POPDIST_PYTHON_EXIT_HOOK=0.
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
        from popdist.torch import _release_torch_at_exit
    except ImportError:
        return  # this interpreter has no popdist: nothing to release with
    except Exception as error:  # noqa: BLE001 - at exit there is nobody left to raise to
        print(f"popdist run: the exit hook could not import popdist.torch: {error}", file=sys.stderr, flush=True)
        return
    _release_torch_at_exit()


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
sys.path[:] = [entry for entry in sys.path if not _on_this_path(entry)]
_run_hidden_sitecustomize()
