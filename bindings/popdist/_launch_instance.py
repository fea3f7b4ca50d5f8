"""One instance of a popdist.launch job: ``python -m popdist._launch_instance JOB_DIR``, started by
``popdist run`` on every instance. It loads the function and its arguments from JOB_DIR, runs it,
and records its return value, or its exception with the traceback as text, for the caller
(_launch_payload.py has the files). A failure prints its traceback on stderr too, for the tagged
output, writes it where torch's @record would (TORCHELASTIC_ERROR_FILE), so that popdist run's
failure report shows it whole, and ends the instance with status 1: the job then ends as any
failed popdist run job does (the others are stopped, --max-restarts applies).
"""

import json
import os
import pickle
import socket
import sys
import time
import traceback

from . import _api
from ._launch_payload import read_job, write_result


def _error_record(error):
    try:
        exception = pickle.dumps(error)
        pickle.loads(exception)  # an exception whose class cannot be rebuilt would fail in the caller
    except Exception:
        exception = None
    kind = type(error)
    return {
        "ok": False,
        "type": kind.__qualname__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__qualname__}",
        "message": str(error),
        "traceback": "".join(traceback.format_exception(type(error), error, error.__traceback__)),
        "exception": exception,
        "host": socket.gethostname(),
    }


def _write_error_file(record):
    """The failure in the shape of torch's @record error file, unless @record wrote one already."""
    path = os.environ.get("TORCHELASTIC_ERROR_FILE")
    if not path or os.path.exists(path):
        return
    message = {"message": f"{record['type']}: {record['message']}",
               "extraInfo": {"py_callstack": record["traceback"], "timestamp": str(int(time.time()))}}
    try:
        with open(path, "w") as file:
            json.dump({"message": message}, file)
    except OSError:
        pass  # the report then shows the stderr tail, as for any instance


def _run(job_dir, attempt, instance):
    try:
        fn, args = read_job(job_dir)
        record = {"ok": True, "value": fn(*args)}
        write_result(job_dir, attempt, instance, record)
        return 0
    except SystemExit as error:
        if error.code in (None, 0):  # as in a multiprocessing worker: a clean exit, no value
            write_result(job_dir, attempt, instance, {"ok": True, "value": None})
            return 0
        record = _error_record(error)
    except BaseException as error:  # noqa: B036 - KeyboardInterrupt is a failure too
        record = _error_record(error)
    sys.stderr.write(record["traceback"])
    sys.stderr.flush()
    _write_error_file(record)
    write_result(job_dir, attempt, instance, record)
    return 1


def main():
    job_dir = sys.argv[1]
    if not os.path.isdir(job_dir):  # an instance on a host that does not share the caller's directory
        sys.stderr.write(
            f"popdist.launch: the job's directory {job_dir} is not on this host ({socket.gethostname()}): "
            "pass shared_dir= a directory that every host of the job sees\n"
        )
        return 1
    attempt = int(os.environ.get("POPDIST_RESTART_COUNT", "0"))
    return _run(job_dir, attempt, _api.getInstanceIndex())


if __name__ == "__main__":
    sys.exit(main())
