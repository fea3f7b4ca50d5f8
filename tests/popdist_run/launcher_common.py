"""Shared helpers of the launcher test drivers: running commands with a deadline, splitting
Open MPI's --tag-output streams per rank, a stand-in mpirun that records its command, and the
expected PopDist values."""

import json
import os
import re
import subprocess
import sys
import tempfile

TAG = re.compile(r"\[(\d+),(\d+)\]<(stdout|stderr)>:")


# A program for the instances: prints where it runs and POPDIST_LOCAL_INSTANCE_INDEX, then what
# popdist detects (`popdist topology --json`).
REPORT = ('printf "HOST=%s LOCAL=%s\\n" "$(hostname)" "${POPDIST_LOCAL_INSTANCE_INDEX-unset}"; '
          "exec popdist topology --json")


class CheckFailed(Exception):
    pass


def check(condition, message):
    if not condition:
        raise CheckFailed(message)


def run(argv, env=None, timeout=60, cwd=None):
    """Runs argv; returns CompletedProcess (text). A hang is a failure, not a stuck test."""
    try:
        return subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as e:
        raise CheckFailed(f"timed out after {timeout} s: {argv}\nstdout: {e.stdout}\nstderr: {e.stderr}")


def describe(result):
    return f"exit {result.returncode}\n--- stdout\n{result.stdout}\n--- stderr\n{result.stderr}"


def tagged_streams(text, stream="stdout"):
    """{rank: [lines]} from mpirun --tag-output text. Open MPI tags chunks as its daemons read
    them, so a line an instance wrote in two pieces can be split by another rank's output
    (seen under salloc); each piece runs from its tag to the next tag, and a rank's pieces in
    order make its output."""
    check(text == "" or TAG.match(text), f"output does not start with a tag: {text[:200]!r}")
    pieces = {}
    matches = list(TAG.finditer(text))
    for match, following in zip(matches, matches[1:] + [None]):
        if match.group(3) == stream:
            end = following.start() if following else len(text)
            pieces.setdefault(int(match.group(2)), []).append(text[match.end():end])
    return {rank: "".join(parts).splitlines() for rank, parts in pieces.items()}


def json_after_header(lines):
    """Lines 'KEY=VALUE ...' (a header printed by the program) then a JSON document."""
    header = dict(item.split("=", 1) for item in lines[0].split())
    return header, json.loads("\n".join(lines[1:]))


def device_id(local_replicas, total_replicas, ipus_per_replica, offset):
    """getDeviceId (design.md §4), computed independently of the C++ code."""
    size = 1
    while size < local_replicas * ipus_per_replica:
        size *= 2
    partition = total_replicas * ipus_per_replica
    group_id, s = 0, 1
    while s < size:
        group_id += partition // s
        s *= 2
    return group_id + offset * ipus_per_replica // size


def skip(reason):
    print(f"SKIP: {reason}")
    sys.exit(77)


def fake_hosts_agent(testbed):
    """The testbed's fake-host agent, or a skip naming what the machine lacks: each fake host is
    a UTS namespace with its own hostname, which needs root or CAP_SYS_ADMIN."""
    probe = subprocess.run(["unshare", "--uts", "true"], capture_output=True, text=True)
    if probe.returncode != 0:
        skip(f"this machine cannot create UTS namespaces for fake hosts (`unshare --uts`): {probe.stderr.strip()}")
    return os.path.join(testbed, "fake_rsh.sh")


def mpi_test_environment(popdist_dir, keep_pml=False):
    """The environment for a launcher under test: loopback only, yield when idle; NOT Open MPI's
    root permission or pml settings, which `popdist run` must supply itself."""
    env = dict(os.environ)
    for name in list(env):
        if name.startswith("OMPI_ALLOW_RUN_AS_ROOT") or name == "OMPI_MCA_rmaps_base_oversubscribe":
            del env[name]
        if name == "OMPI_MCA_pml" and not keep_pml:
            del env[name]
    env["OMPI_MCA_btl_tcp_if_include"] = "lo"
    env["OMPI_MCA_oob_tcp_if_include"] = "lo"
    env["OMPI_MCA_mpi_yield_when_idle"] = "1"
    env["PATH"] = popdist_dir + os.pathsep + env.get("PATH", "")
    return env


class RecordingMpirun:
    """A stand-in `mpirun`, first on PATH in `env`, that records the words it is given (one a line)
    and exits 0: the command popdist run would start, without starting it. It answers --version as
    Open MPI 4.1.4 does (popdist run reads the backend from it). A context manager over its
    temporary directory (`directory`), which also holds the record."""

    SCRIPT = ('#!/bin/sh\n'
              'if [ "$*" = --version ]; then echo "mpirun (Open MPI) 4.1.4"; exit 0; fi\n'
              'printf "%s\\n" "$@" > "$MPIRUN_ARGV"\n')

    def __init__(self, env):
        self._tmp = tempfile.TemporaryDirectory()
        self.directory = self._tmp.name
        recorder = os.path.join(self.directory, "mpirun")
        with open(recorder, "w") as f:
            f.write(self.SCRIPT)
        os.chmod(recorder, 0o755)
        self.env = dict(env, MPIRUN_ARGV=os.path.join(self.directory, "argv"),
                        PATH=self.directory + os.pathsep + env["PATH"])

    def __enter__(self):
        return self

    def __exit__(self, *exception):
        self._tmp.cleanup()

    def words(self):
        """The words of the last command it was given."""
        with open(self.env["MPIRUN_ARGV"]) as f:
            return f.read().splitlines()


def processes_with(token):
    """Pids whose command line holds `token` (this process excluded): what a job left running."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if token.encode() in f.read() and int(pid) != os.getpid():
                    found.append(int(pid))
        except OSError:
            pass
    return found


def main(checks, argv):
    """Runs the named check: `driver.py <check> [args]`; exit 0 pass, 1 fail, 77 skip."""
    if len(argv) < 2 or argv[1] not in checks:
        print(f"usage: {argv[0]} <{'|'.join(checks)}> ...", file=sys.stderr)
        return 2
    try:
        checks[argv[1]](*argv[2:])
    except CheckFailed as e:
        print(f"FAILED: {e}", file=sys.stderr)
        return 1
    print(f"{argv[1]}: passed")
    return 0


def check_views(result, instances, replicas, ipus, hosts):
    """Each instance's JSON view and host against the plan of `instances` over `hosts`."""
    check(result.returncode == 0, f"popdist run failed: {describe(result)}")
    per_rank = tagged_streams(result.stdout)
    check(sorted(per_rank) == list(range(instances)), f"ranks {sorted(per_rank)} reported: {describe(result)}")
    per_host = instances // len(hosts)
    local_replicas = replicas // instances
    for rank, lines in per_rank.items():
        header, view = json_after_header(lines)
        offset = rank * local_replicas
        expected = {
            "instance_index": rank, "num_instances": instances,
            "local_instance_index": rank % per_host, "num_local_instances": per_host,
            "num_local_replicas": local_replicas, "num_total_replicas": replicas,
            "replica_index_offset": offset, "ipus_per_replica": ipus,
            "uniform_replicas_per_instance": True, "popdist_env_set": True,
            "device_id": device_id(local_replicas, replicas, ipus, offset), "launcher": "openmpi",
        }
        for key, value in expected.items():
            check(view.get(key) == value, f"instance {rank}: {key} is {view.get(key)!r}, expected {value!r}\n{view}")
        check(header["LOCAL"] == str(rank % per_host), f"instance {rank}: POPDIST_LOCAL_INSTANCE_INDEX {header}")
        if hosts != [None]:
            check(header["HOST"] == hosts[rank // per_host], f"instance {rank} ran on {header['HOST']}, "
                  f"expected {hosts[rank // per_host]}")
