#!/usr/bin/env python3
"""More of popdist across hosts with a node-local TMPDIR (issue 41's follow-ups), beside
cross_host_checks.py and on its job (private_tmp_job.py): popdist.launch from h1 whose instance
on h2 raises, and what the agents leave in h2's private TMPDIR after a job. Used by CTest as

    cross_host_followup_checks.py <check> <popdist> <testbed> <hosts>   check: launch, leftovers

Exit status: 0 pass, 1 a check failed, 77 skipped (the message names what is missing).
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import netns_checks  # noqa: E402 - the testbed's probes and Open MPI's arguments
from cross_host_checks import start_job  # noqa: E402
from netns_checks import check, fail  # noqa: E402
from private_tmp_job import RUN_TIMEOUT  # noqa: E402

# The function popdist.launch sends: the last instance raises, the others wait to be torn down.
FUNCTIONS = r"""
import time
import popdist

def fail_on_last():
    if popdist.getInstanceIndex() == popdist.getNumInstances() - 1:
        time.sleep(1)
        raise ValueError("boom on the last instance")
    while True:
        time.sleep(0.05)
"""

# Runs on h1: popdist.launch over the hosts; prints the LaunchError as JSON.
DRIVER = r"""
import json, sys
shared, hosts, global_args = sys.argv[1], sys.argv[2].split(","), sys.argv[3]
sys.path.insert(0, shared)
import popdist, followup_functions
from popdist.errors import LaunchError
try:
    popdist.launch(followup_functions.fail_on_last, num_instances=2 * len(hosts), hosts=[f"{h}:2" for h in hosts],
                   mpi_global_args=global_args, shared_dir=shared)
except LaunchError as error:
    print("LAUNCH-ERROR " + json.dumps({"text": str(error), "failures": [
        {"instance": f.instance, "host": f.host, "status_text": f.status_text, "traceback": f.traceback}
        for f in error.failures]}))
else:
    print("no LaunchError")
"""


def python_path_for(popdist):
    """The build tree's Python package beside the popdist command (tools/popdist -> bindings/) when
    the build has one, else the installed package (`pip install .`, as the Python suites test)."""
    bindings = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(popdist))), "bindings")
    if os.path.isfile(os.path.join(bindings, "popdist", "__init__.py")):
        return bindings
    if subprocess.run([sys.executable, "-c", "import popdist"], capture_output=True).returncode != 0:
        netns_checks.skip(f"popdist is not importable: neither {bindings} (-DPOPDIST_BUILD_PYTHON=ON) nor "
                          "an installed package (pip install .)")
    return os.environ.get("PYTHONPATH", "")


def launch(popdist, testbed, hosts):
    """popdist.launch's LaunchError names the last instance, on the last host, with its traceback."""
    shared = tempfile.mkdtemp(prefix="popdist-cross-launch-")  # the launch's directory: all hosts see it
    tmpdir = os.path.join(shared, "node-local")  # popdist run's TMPDIR: private on every host but h1
    os.mkdir(tmpdir)
    with open(os.path.join(shared, "followup_functions.py"), "w") as f:
        f.write(FUNCTIONS)
    rsh = os.path.join(testbed, "netns_private_rsh.sh")
    global_args = " ".join(["--mca", "plm_rsh_agent", rsh, *netns_checks.OPEN_MPI_ARGS])
    env = dict(os.environ, TMPDIR=tmpdir, NETNS_PRIVATE_DIRS=tmpdir, PYTHONPATH=python_path_for(popdist))
    command = [os.path.join(testbed, "on_host.sh"), hosts[0], sys.executable, "-c", DRIVER, shared, ",".join(hosts),
               global_args]
    print("+ " + " ".join(command), flush=True)
    try:
        result = subprocess.run(command, env=env, capture_output=True, text=True, timeout=RUN_TIMEOUT,
                                start_new_session=True)
    except subprocess.TimeoutExpired as e:
        fail(f"popdist.launch did not end in {RUN_TIMEOUT} s:\n{e.stdout}\n{e.stderr}")
    finally:
        shutil.rmtree(shared, ignore_errors=True)
    print(result.stdout, result.stderr)
    line = next((x for x in result.stdout.splitlines() if x.startswith("LAUNCH-ERROR ")), None)
    check(line is not None, f"popdist.launch raised no LaunchError (exit {result.returncode})")
    error = json.loads(line[len("LAUNCH-ERROR "):])
    last, host = 2 * len(hosts) - 1, hosts[-1]
    check(f"first failure: instance {last} on {host}: exit code 1" in error["text"],
          f"the LaunchError does not name instance {last} on {host} first:\n{error['text']}")
    check("ValueError: boom on the last instance" in error["text"], f"no traceback in its text:\n{error['text']}")
    check("first failure: instance 0 " not in error["text"], f"instance 0 is blamed:\n{error['text']}")
    first = error["failures"][0] if error["failures"] else {}
    check(first.get("instance") == last and first.get("host") == host, f"failures[0] is another instance: {first}")
    check("fail_on_last" in first.get("traceback", "") and "boom on the last instance" in first["traceback"],
          f"failures[0] has no traceback of fail_on_last: {first}")


def private_tmp_keeper(host, job):
    """A process in the mount namespace of `host`'s orted (which netns_private_rsh.sh gave its
    private TMPDIR), so that the namespace -- and what the agents left in it -- outlives the job."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        pids = subprocess.run(["ip", "netns", "pids", host], capture_output=True, text=True).stdout.split()
        for pid in pids:
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    words = f.read().split(b"\0")
            except OSError:
                continue
            if words and os.path.basename(words[0]) == b"orted":
                return subprocess.Popen(["nsenter", "--target", pid, "--mount", "sleep", "120"])
        time.sleep(0.2)
    fail(f"no orted in {host} within 30 s")


def listing(keeper, directory):
    result = subprocess.run(["nsenter", "--target", str(keeper.pid), "--mount", "find", directory],
                            capture_output=True, text=True, timeout=30)
    check(result.returncode == 0, f"cannot list {directory} in the host's namespace: {result.stderr}")
    return sorted(result.stdout.split())


def leftovers(popdist, testbed, hosts):
    """After a job whose last instance raises (the others torn down), the last host's private
    TMPDIR is as empty as before: the agents removed their instances' files and the job directory."""
    if subprocess.run(["which", "nsenter"], capture_output=True).returncode != 0:
        netns_checks.skip("`nsenter` (util-linux) is not installed: the host's private TMPDIR cannot be read")
    job = start_job(popdist, testbed, hosts, "exception")
    keeper = private_tmp_keeper(hosts[-1], job)
    try:
        job.wait_ready()
        during = listing(keeper, job.tmpdir)
        print("during the job:", during)
        files = [name for name in during if os.path.basename(name).startswith(f"instance{job.last}.")]
        check(files, f"the job's directory with instance {job.last}'s files is not in the private TMPDIR: {during}")
        status, _ = job.finish()
        check(status == 1, f"exit status 1 expected, got {status}")
        after = listing(keeper, job.tmpdir)
        print("after the job:", after)
        check(after == [job.tmpdir], f"left in {hosts[-1]}'s private TMPDIR: {after[1:]}")
    finally:
        keeper.kill()
        keeper.wait()
        shutil.rmtree(job.tmp, ignore_errors=True)


CHECKS = {"launch": launch, "leftovers": leftovers}


if __name__ == "__main__":
    sys.exit(netns_checks.run_host_check(CHECKS, sys.argv))
