"""What popdist.launch sends to its instances and what they send back, as files in the job's
private directory: ``job.pkl`` (the caller's sys.path and main script, then the function and its
arguments) and one ``result.<attempt>.<instance>.pkl`` per instance and attempt (its return value,
or its exception and traceback text). Files rather than pipes: every instance, on any host sharing
the directory, writes its own, and an attempt's files never mix with a restarted attempt's.

Functions travel by pickling, as under torch's elastic_launch and submitit. cloudpickle, when
installed, is used by itself (as Accelerate and submitit do): it sends lambdas, closures and a
notebook's functions by value. Without it a function must be importable by name in the instances.
"""

import os
import pickle
import sys

from .errors import UsageError

try:
    import cloudpickle as _cloudpickle
except ImportError:  # optional: without it, functions travel by reference only
    _cloudpickle = None

JOB_FILE = "job.pkl"


def _pickler():
    return _cloudpickle if _cloudpickle is not None else pickle


def _way_out(what):
    return (
        f"popdist.launch sends {what} to the instances by pickling. Define the function at the top "
        "level of a module the instances can import (a .py file beside your notebook or script), or "
        "install cloudpickle (pip install cloudpickle), which popdist.launch then uses by itself for "
        "lambdas, closures and functions defined in a notebook"
    )


def _describe(fn):
    name = getattr(fn, "__qualname__", None) or repr(fn)
    return f"{getattr(fn, '__module__', '?')}.{name}"


def _main_file():
    """The script __main__ was run from, when it was a file (not a notebook, a REPL or -c)."""
    main = sys.modules.get("__main__")
    path = getattr(main, "__file__", None)
    return os.path.abspath(path) if path and path.endswith(".py") and os.path.isfile(path) else None


def _check_reachable(fn):
    # A function of a notebook's __main__ pickles by name here, then cannot be found in the
    # instances: say so now instead of letting every instance fail at load.
    if _cloudpickle is None and getattr(fn, "__module__", None) == "__main__" and _main_file() is None:
        raise UsageError(
            f"cannot send {_describe(fn)} to the instances: it is defined in __main__ (a notebook or an "
            f"interactive session), which the instances do not have. " + _way_out("it")
        )


def dumps_job(fn, args):
    """The bytes of job.pkl; UsageError naming `fn` (or its arguments) when they cannot be pickled."""
    if not callable(fn):
        raise UsageError(f"popdist.launch needs a function to run, got {fn!r}")
    _check_reachable(fn)
    by_name_from_main = _cloudpickle is None and getattr(fn, "__module__", None) == "__main__"
    header = pickle.dumps({"sys_path": list(sys.path), "main_file": _main_file() if by_name_from_main else None})
    try:
        function = _pickler().dumps(fn)
    except Exception as error:  # pickle raises PicklingError, AttributeError or TypeError
        raise UsageError(f"cannot pickle the function {_describe(fn)}: {error}. " + _way_out("it")) from error
    try:
        arguments = _pickler().dumps(tuple(args))
    except Exception as error:
        raise UsageError(
            f"cannot pickle the arguments of {_describe(fn)}: {error}. " + _way_out("them")
        ) from error
    return header + function + arguments


def write_job(directory, fn, args):
    with open(os.path.join(directory, JOB_FILE), "wb") as file:
        file.write(dumps_job(fn, args))


def _fix_up_main(main_file):
    # As multiprocessing's spawn: the caller's script runs again as __mp_main__ (its
    # `if __name__ == "__main__":` block does not), so that its functions are found as __main__.*.
    import runpy
    import types

    module = types.ModuleType("__mp_main__")
    module.__dict__.update(runpy.run_path(main_file, run_name="__mp_main__"))
    sys.modules["__main__"] = sys.modules["__mp_main__"] = module


def read_job(directory):
    """(fn, args) from job.pkl, with the caller's sys.path (and main script) in place first."""
    with open(os.path.join(directory, JOB_FILE), "rb") as file:
        header = pickle.load(file)
        sys.path[:] = header["sys_path"] + [entry for entry in sys.path if entry not in header["sys_path"]]
        if header["main_file"] is not None:
            _fix_up_main(header["main_file"])
        fn = pickle.load(file)
        args = pickle.load(file)
    return fn, args


def result_file(directory, attempt, instance):
    return os.path.join(directory, f"result.{attempt}.{instance}.pkl")


def write_result(directory, attempt, instance, record):
    """Writes one instance's record whole (a temporary file renamed over it)."""
    path = result_file(directory, attempt, instance)
    with open(path + ".partial", "wb") as file:
        file.write(_pickler().dumps(record))
    os.replace(path + ".partial", path)


def read_result(directory, attempt, instance):
    """The record instance `instance` wrote in `attempt`; None when it wrote none."""
    try:
        with open(result_file(directory, attempt, instance), "rb") as file:
            return pickle.load(file)
    except FileNotFoundError:
        return None
