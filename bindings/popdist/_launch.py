"""popdist.launch: run a Python function on N instances from a notebook or a program, through the
``popdist run`` command, so that the job has exactly popdist run's topology, variables and
guarantees (one mpirun, the failure report, --max-restarts, logs, Slurm allocations). The
function travels by pickling (_launch_payload.py), each instance runs the bootstrap
``python -m popdist._launch_instance``, and the caller reads back the results, or raises one
LaunchError built from popdist run's --report-file. docs/guide/launch.md is the user's guide.
"""

import json
import os
import pickle
import shutil
import signal
import site
import subprocess
import sys
import sysconfig
import tempfile

from . import _core, _launch_output
from ._launch_payload import read_result, write_job
from .errors import InstanceFailure, LaunchError, UsageError

# popdist run's long options that popdist.launch passes on (dashes as underscores), by kind.
_VALUE_OPTIONS = (
    "num_replicas", "ipus_per_replica", "hostfile", "only_output_from_instance", "master_addr",
    "master_port", "max_restarts", "log_dir", "stall_timeout", "grace_period",
)
_REPEATED_OPTIONS = ("hosts", "host", "mpi_global_args", "mpi_local_args")
_FLAG_OPTIONS = ("tee", "stall_keep_running", "print_topology", "numa_aware")
REPORT_FILE = "report.json"


def _option_words(name, value):
    flag = "--host" if name == "hosts" else "--" + name.replace("_", "-")
    if name in _FLAG_OPTIONS:
        return [flag] if value else []
    if name in _REPEATED_OPTIONS:
        values = [value] if isinstance(value, str) else list(value)
        return [word for item in values for word in (flag, str(item))]
    return [flag, str(value)]


def run_arguments(num_instances, options):
    """popdist run's options for popdist.launch's keyword arguments; TypeError for an unknown one."""
    known = _VALUE_OPTIONS + _REPEATED_OPTIONS + _FLAG_OPTIONS
    words = ["--num-instances", str(num_instances)]
    for name, value in options.items():
        if name not in known:
            raise TypeError(
                f"popdist.launch() got an unexpected keyword argument {name!r} (popdist run's options: "
                f"{', '.join(known)})"
            )
        if value is not None:
            words += _option_words(name, value)
    return words


def popdist_command():
    """The `popdist` command of this package: the build tree's (tools/popdist, when the package
    is imported from a CMake build tree), else the one pip installed in this interpreter's scripts
    directory, else beside sys.executable, else on PATH."""
    build_tree = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), os.pardir, "tools")
    for directory in (build_tree, sysconfig.get_path("scripts"), os.path.dirname(sys.executable)):
        candidate = os.path.join(directory, "popdist")
        if os.access(candidate, os.X_OK):
            return candidate
    found = shutil.which("popdist")
    if found is None:
        raise LaunchError(
            "popdist.launch cannot find the popdist command (not in this interpreter's scripts "
            f"directory {sysconfig.get_path('scripts')}, nor on PATH): install popdist with pip "
            "into this environment"
        )
    return found


def _child_environment():
    """popdist run's environment and the instances': ours, with unbuffered output (so that it
    reaches the caller live), this package importable when it does not come from a site directory,
    and this process's pid for popdist run to end the job with it."""
    env = dict(os.environ)
    env.setdefault("PYTHONUNBUFFERED", "1")
    env["POPDIST_LAUNCH_PARENT"] = str(os.getpid())  # popdist run ends the job if this process dies
    package_parent = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    site_directories = set(site.getsitepackages() + [site.getusersitepackages()])
    if package_parent not in site_directories:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [package_parent, env.get("PYTHONPATH")]))
    return env


def _end_job(process, grace_seconds):
    """Ends the job after Ctrl-C: SIGINT to popdist run (which ends mpirun and every instance),
    a bounded wait, then SIGKILL to its whole process group, so that nothing is left running."""
    try:
        if process.poll() is None:
            process.send_signal(signal.SIGINT)
            process.wait(timeout=grace_seconds + 10)
    except (subprocess.TimeoutExpired, KeyboardInterrupt):
        pass  # a second Ctrl-C or a job that does not end: kill it now
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    process.wait()


def _run_job(command, grace_seconds):
    """Runs popdist run with its output forwarded; its exit status as a shell reports it, and
    the last lines of its stderr."""
    process = subprocess.Popen(
        command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        env=_child_environment(), start_new_session=True,  # Ctrl-C reaches it through us only
    )
    forwarding = _launch_output.forward(process.stdout, process.stderr)
    try:
        status = process.wait()
    except BaseException:
        _end_job(process, grace_seconds)
        forwarding.finish()
        raise
    forwarding.finish()
    return (128 - status if status < 0 else status), forwarding.stderr_tail()


def _read_report(job_dir):
    try:
        with open(os.path.join(job_dir, REPORT_FILE), encoding="utf-8") as file:
            return json.load(file)
    except (OSError, ValueError):
        return None


def _values(job_dir, attempt, num_instances):
    values = []
    for instance in range(num_instances):
        record = read_result(job_dir, attempt, instance)
        if record is None:
            raise LaunchError(
                f"popdist.launch: the job succeeded but instance {instance} left no result in {job_dir}: "
                "instances on other hosts must see that directory (pass shared_dir= a directory all "
                "hosts share)", status=0,
            )
        values.append(record["value"])
    return values


def _failure(job_dir, attempt, entry):
    record = read_result(job_dir, attempt, entry["instance"]) or {}
    exception = None
    if record.get("exception") is not None:
        try:
            exception = pickle.loads(record["exception"])
        except Exception:
            exception = None
    return InstanceFailure(
        entry["instance"], host=entry["host"] or record.get("host", ""), status=entry["status"],
        status_text=entry["status_text"], stopped_by_teardown=entry["stopped_by_teardown"],
        exception_type=record.get("type", ""), message=record.get("message", ""),
        traceback=record.get("traceback") or entry["error_lines"], exception=exception,
    )


def _job_error(job_dir, report, status, stderr_tail):
    if report is None:
        message = f"popdist run ended with status {status} before the job started:\n{stderr_tail}"
        return UsageError(message) if status == 2 else LaunchError(message, status=status)
    if report["stopped"]:
        return LaunchError(f"the job was stopped by a signal ({report['status_text']})", status=status)
    failures = [_failure(job_dir, report["attempt"], entry) for entry in report["failures"]]
    if not failures:
        return LaunchError(
            f"the job failed ({report['status_text']}) and no instance recorded how it ended:\n{stderr_tail}",
            status=status, attempt=report["attempt"], attempts=report["attempts"],
        )
    return LaunchError(report["text"], status=status, failures=failures,
                       attempt=report["attempt"], attempts=report["attempts"])


def launch(fn, *args, num_instances=1, shared_dir=None, **options):
    """popdist.launch (its docstring, in _api.py, is the user's reference)."""
    _core.checked_integer(num_instances, "popdist.launch", "num_instances", 1)
    command_options = run_arguments(num_instances, options)
    job_dir = tempfile.mkdtemp(prefix="popdist-launch-", dir=shared_dir)
    try:
        write_job(job_dir, fn, args)
        command = [popdist_command(), "run", *command_options,
                   "--report-file", os.path.join(job_dir, REPORT_FILE),
                   "--", sys.executable, "-m", "popdist._launch_instance", job_dir]
        status, stderr_tail = _run_job(command, float(options.get("grace_period") or 1))
        report = _read_report(job_dir)
        if status == 0:
            return _values(job_dir, report["attempt"] if report else 0, num_instances)
        raise _job_error(job_dir, report, status, stderr_tail)
    finally:
        shutil.rmtree(job_dir, ignore_errors=True)
