"""The popdist run job that the checks across private-/tmp hosts start (cross_host_checks.py,
cross_host_followup_checks.py, lost_host_checks.py): started from h1 over the given hosts, 2
instances a host, with TMPDIR a directory of its own that the testbed's netns_private_rsh.sh makes
a fresh tmpfs on every other host, so nothing the agents write reaches popdist run through files.
One home for the setup, so that every check runs the job the same way and only says what differs:
the program, its arguments and popdist run's extra options.
"""
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

import netns_checks
from netns_checks import check, fail

# Below CTest's TIMEOUT (120 s): a hang is reported by the check, with the output so far.
RUN_TIMEOUT = 100
INSTANCES_PER_HOST = 2


class PrivateTmpJob:
    """`popdist run --num-instances 2*len(hosts) --host h1:2,... --report-file ... -- python <program> <args>`
    on h1, running while the check looks at it; its output is read as it comes (`output`)."""

    def __init__(self, popdist, testbed, hosts, program, args=(), options=(), prefix="popdist-cross-",
                 launch_host=None):
        self.hosts = hosts
        self.tmp = tempfile.mkdtemp(prefix=prefix)
        self.tmpdir = os.path.join(self.tmp, "node-local")  # private on every host but h1
        os.mkdir(self.tmpdir)
        self.script = os.path.join(self.tmp, "job.py")
        with open(self.script, "w") as f:
            f.write(program)
        self.report_file = os.path.join(self.tmp, "report.json")
        self.instances = INSTANCES_PER_HOST * len(hosts)
        self.last = self.instances - 1
        self.env = dict(os.environ, TMPDIR=self.tmpdir, NETNS_PRIVATE_DIRS=self.tmpdir, PYTHONUNBUFFERED="1")
        self.on_h1 = [os.path.join(testbed, "on_host.sh"), launch_host or hosts[0]]  # where popdist run runs
        self.rsh = os.path.join(testbed, "netns_private_rsh.sh")
        # The backend of the check's command line (netns_checks.run_host_check's --backend):
        # hydra's own ssh launcher with the testbed's agent and its interface named.
        self.backend = netns_checks.BACKEND
        if self.backend == "hydra":
            global_args = ["-launcher", "ssh", "-launcher-exec", self.rsh, "-iface", "eth0"]
            options = ("--backend", "hydra", *options)
        else:
            global_args = ["--mca", "plm_rsh_agent", self.rsh, *netns_checks.OPEN_MPI_ARGS]
        command = [*self.on_h1, popdist, "run", "--num-instances", str(self.instances),
                   "--host", ",".join(f"{h}:{INSTANCES_PER_HOST}" for h in hosts), "--report-file", self.report_file,
                   "--mpi-global-args", " ".join(global_args), *options, "--", sys.executable, self.script, *args]
        print("+ " + " ".join(command), flush=True)
        self.output = ""
        self.process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                        env=self.env, start_new_session=True)

    def wait_ready(self, seconds=60):
        """Until every instance printed `ready <rank>`."""
        seen, deadline = set(), time.monotonic() + seconds
        while len(seen) < self.instances and time.monotonic() < deadline:
            line = self.process.stdout.readline()
            if not line:
                break
            self.output += line
            match = re.search(r"ready (\d+)", line)
            if match:
                seen.add(int(match.group(1)))
        check(len(seen) == self.instances, f"only instances {sorted(seen)} said ready:\n{self.output}")

    def finish(self, after_exit=None):
        """Waits for popdist run to exit, calls `after_exit()` (a lost host's processes, on this
        testbed, hold popdist run's output pipe open: the rsh agent is `ip netns exec`, not ssh),
        then reads the rest of its output; (exit status, output)."""
        try:
            self.process.wait(timeout=RUN_TIMEOUT)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            fail(f"popdist run did not end in {RUN_TIMEOUT} s:\n{self.output}")
        finally:
            if after_exit is not None:
                after_exit()
        try:
            out, _ = self.process.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            fail(f"popdist run ended, but its output stayed open for 30 s (a process of the job left "
                 f"running):\n{self.output}\nthe job's processes still running:\n{self.leftovers()}")
        self.output += out
        print(self.output)
        return self.process.returncode, self.output

    def leftovers(self):
        """The processes on the testbed's hosts that hold this job's pipe: its orted, agents, programs."""
        lines = []
        for host in self.hosts:
            pids = subprocess.run(["ip", "netns", "pids", host], capture_output=True, text=True).stdout.split()
            for pid in pids:
                try:
                    with open(f"/proc/{pid}/cmdline", "rb") as f:
                        words = f.read().replace(b"\0", b" ").decode(errors="replace")
                except OSError:
                    continue
                if self.tmp in words or "orted" in words or "prted" in words or "hydra_pmi_proxy" in words:
                    lines.append(f"  {host} pid {pid}: {words[:200]}")
        return "\n".join(lines) or "  (none left now)"

    def stop(self):
        """SIGTERM to the job's process group; then finish()."""
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
        return self.finish()

    def report(self):
        """--report-file, as JSON."""
        with open(self.report_file) as f:
            return json.load(f)
