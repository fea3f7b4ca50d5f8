#!/usr/bin/env python3
"""`popdist run` for long jobs (docs/guide/long-jobs.md): CPU defaults, restarts, the failure
report, log files, SIGUSR1 for checkpoints, the stall timeout and a command that does not grow
with the instance count. Usage: long_job_checks.py <check> <popdist> [testbed]."""

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from launcher_common import (RecordingMpirun, check, describe, fake_hosts_agent, main, mpi_test_environment, run, skip,
                             tagged_streams)

AFFINITY = "import os; print(len(os.sched_getaffinity(0)), os.environ.get('OMP_NUM_THREADS'))"


def popdist_env(popdist, **extra):
    env = mpi_test_environment(os.path.dirname(os.path.abspath(popdist)))
    env.pop("OMP_NUM_THREADS", None)
    env.update(extra)
    return env


def views(result):
    """{instance: (cores it may run on, OMP_NUM_THREADS)} from AFFINITY's tagged lines."""
    return {rank: tuple(lines[-1].split()) for rank, lines in tagged_streams(result.stdout).items()}


def cpu_defaults(popdist, testbed):
    cores = len(os.sched_getaffinity(0))
    result = run([popdist, "run", "--num-instances", "2", "--", sys.executable, "-c", AFFINITY], env=popdist_env(popdist))
    check(result.returncode == 0, describe(result))
    got = views(result)
    check(sorted(got) == [0, 1], describe(result))
    for rank, (affinity, threads) in got.items():
        check(affinity == str(cores), f"instance {rank} may run on {affinity} cores, expected all {cores}")
        check(threads == str(max(1, physical_cores() // 2)), f"instance {rank}: OMP_NUM_THREADS {threads}")
    check(result.stderr.count("OMP_NUM_THREADS is not set") == 1, f"one notice expected: {result.stderr}")
    # the user's OMP_NUM_THREADS stands, and nothing is said about it
    result = run([popdist, "run", "--num-instances", "2", "--", sys.executable, "-c", AFFINITY],
                 env=popdist_env(popdist, OMP_NUM_THREADS="3"))
    check(all(t == "3" for _, t in views(result).values()) and "OMP_NUM_THREADS" not in result.stderr, describe(result))
    # an explicit binding still binds
    result = run([popdist, "run", "--num-instances", "2", "--mpi-global-args", "--bind-to core", "--", sys.executable,
                  "-c", AFFINITY], env=popdist_env(popdist))
    check(all(a == "1" for a, _ in views(result).values()), f"--bind-to core: {describe(result)}")
    # fake hosts: 4 instances on 2 hosts, 2 per host: each gets every core and cores / 2 threads
    with tempfile.TemporaryDirectory() as tmp:
        result = run([popdist, "run", "--num-instances", "4", "--host", "hostA,hostB", "--mpi-global-args",
                      f"--mca plm_rsh_agent {fake_hosts_agent(testbed)}", "--", sys.executable, "-c", AFFINITY],
                     env=popdist_env(popdist, TMPDIR=tmp), timeout=90)
    check(result.returncode == 0 and sorted(views(result)) == [0, 1, 2, 3], describe(result))
    from_sys = os.popen("nproc --all").read().strip()
    for rank, (affinity, threads) in views(result).items():
        check(affinity == str(cores), f"fake hosts: instance {rank} may run on {affinity} cores of {cores}")
        check(int(threads) == max(1, physical_cores() // 2), f"fake hosts: instance {rank}: OMP_NUM_THREADS {threads}")
    print(f"cores {cores} (nproc --all {from_sys}); threads per instance {views(result)[0][1]}")


def physical_cores():
    pairs = set()
    for cpu in os.sched_getaffinity(0):
        base = f"/sys/devices/system/cpu/cpu{cpu}/topology/"
        try:
            with open(base + "physical_package_id") as p, open(base + "core_id") as c:
                pairs.add((p.read().strip(), c.read().strip()))
        except OSError:
            return len(os.sched_getaffinity(0))
    return len(pairs)


RESUMING = r"""
import os, sys
checkpoint = sys.argv[1] + "." + os.environ["RANK"]
attempt = int(os.environ["TORCHELASTIC_RESTART_COUNT"])
assert os.environ["POPDIST_RESTART_COUNT"] == str(attempt)
print("attempt", attempt, "port", os.environ["MASTER_PORT"], "dir", os.environ["POPDIST_RUN_JOB_DIR"],
      "max", os.environ["TORCHELASTIC_MAX_RESTARTS"], flush=True)
step = int(open(checkpoint).read()) if os.path.exists(checkpoint) else 0
if attempt == 0:
    open(checkpoint, "w").write("5")
    if os.environ["RANK"] == "1":
        sys.exit("instance 1 fails on attempt 0 after its checkpoint")
    import time; time.sleep(30)
print("resumed from step", step, flush=True)
"""


def restarts(popdist):
    with tempfile.TemporaryDirectory() as tmp:
        script = os.path.join(tmp, "resume.py")
        with open(script, "w") as f:
            f.write(RESUMING)
        result = run([popdist, "run", "--num-instances", "2", "--max-restarts", "2", "--", sys.executable, script,
                      os.path.join(tmp, "ckpt")], env=popdist_env(popdist), timeout=90)
    check(result.returncode == 0, f"the second attempt must succeed: {describe(result)}")
    lines = result.stdout.splitlines()
    check(sum("resumed from step 5" in line for line in lines) == 2, f"both resume from the checkpoint: {describe(result)}")
    attempts = [re.search(r"attempt (\d) port (\d+) dir (\S+) max 2", line) for line in lines]
    attempts = [m.groups() for m in attempts if m]
    ports = {a: p for a, p, _ in attempts}
    dirs = {a: d for a, _, d in attempts}
    check(sorted(ports) == ["0", "1"] and ports["0"] != ports["1"] and dirs["0"] != dirs["1"],
          f"each attempt has its own port and job directory: {attempts}")
    check("restarting the whole job in 1 s (attempt 2 of 3)" in result.stderr, describe(result))
    check("attempt 1 of 3" in result.stderr and "first failure: instance 1" in result.stderr, describe(result))
    # failing every time: N + 1 attempts, each reported; the status is the last attempt's
    start = time.monotonic()
    result = run([popdist, "run", "--num-instances", "2", "--max-restarts", "2", "--", "sh", "-c",
                  'test "$RANK" = 1 && exit 7; exit 0'], env=popdist_env(popdist), timeout=90)
    check(result.returncode == 7, describe(result))
    for attempt in (1, 2, 3):
        check(f"the job failed (exit code 7), attempt {attempt} of 3" in result.stderr, describe(result))
    check(result.stderr.count("restarting the whole job") == 2, describe(result))
    print(f"3 attempts in {time.monotonic() - start:.1f} s (pauses 1 s and 2 s)")
    # a SIGTERM from outside ends the job without a restart
    job = subprocess.Popen([popdist, "run", "--num-instances", "2", "--max-restarts", "3", "--", "sleep", "30"],
                           env=popdist_env(popdist), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(3)
    job.send_signal(signal.SIGTERM)
    out, err = job.communicate(timeout=30)
    check(job.returncode != 0 and "restarting" not in err and "the job failed" not in err, f"{job.returncode} {err}")


FAILING = r"""
import os, sys, time
if os.environ["RANK"] == "1":
    print("some output before the end", file=sys.stderr)
    raise RuntimeError("instance one broke")
time.sleep(30)
"""

RECORDED = r"""
import os
from torch.distributed.elastic.multiprocessing.errors import record

@record
def main():
    if os.environ["RANK"] == "0":
        raise ValueError("recorded by torch's error handler")

main()
"""


def failure_report(popdist):
    with tempfile.TemporaryDirectory() as tmp:
        script = os.path.join(tmp, "failing.py")
        with open(script, "w") as f:
            f.write(FAILING)
        for extra in ([], ["--only-output-from-instance", "0"]):
            result = run([popdist, "run", "--num-instances", "2", *extra, "--", sys.executable, script],
                         env=popdist_env(popdist), timeout=60)
            check(result.returncode == 1, describe(result))
            report = result.stderr[result.stderr.index("popdist run: the job failed"):]
            check(re.search(r"first failure: instance 1 on \S+: exit code 1, [0-9.]+ s after the start", report), report)
            check("RuntimeError: instance one broke" in report and "(stderr)" in report, report)
            check("stopped by the job's teardown after the first failure: instance(s) 0" in report, report)
        # torch's @record: the error file's traceback
        try:
            import torch  # noqa: F401
        except ImportError:
            skip("torch is not installed (.ci/install-deps installs it)")
        script = os.path.join(tmp, "recorded.py")
        with open(script, "w") as f:
            f.write(RECORDED)
        result = run([popdist, "run", "--num-instances", "2", "--", sys.executable, script],
                     env=popdist_env(popdist), timeout=90)
        check(result.returncode != 0, describe(result))
        report = result.stderr[result.stderr.index("popdist run: the job failed"):]
        check("first failure: instance 0" in report and "(torch error file)" in report and
              "ValueError: recorded by torch's error handler" in report, report)
    # success: no report
    result = run([popdist, "run", "--num-instances", "2", "--", "true"], env=popdist_env(popdist, OMP_NUM_THREADS="1"))
    check(result.returncode == 0 and result.stderr == "", f"nothing printed on success: {describe(result)}")


def report_file(popdist):
    """--report-file: the report as JSON after every attempt (what popdist.launch reads)."""
    with tempfile.TemporaryDirectory() as tmp:
        script, report = os.path.join(tmp, "failing.py"), os.path.join(tmp, "report.json")
        with open(script, "w") as f:
            f.write(FAILING)
        result = run([popdist, "run", "--num-instances", "2", "--max-restarts", "1", "--report-file", report, "--",
                      sys.executable, script], env=popdist_env(popdist), timeout=90)
        check(result.returncode == 1, describe(result))
        with open(report) as f:
            data = json.load(f)
        first = data["failures"][0]
        check((data["status"], data["attempt"], data["attempts"], data["stopped"]) == (1, 1, 2, False), str(data))
        check(first["instance"] == 1 and first["status_text"] == "exit code 1" and first["host"], str(data))
        check("RuntimeError: instance one broke" in first["error_lines"], str(data))
        check([f["stopped_by_teardown"] for f in data["failures"][1:]] == [True], str(data))
        result = run([popdist, "run", "--num-instances", "2", "--report-file", report, "--", "true"],
                     env=popdist_env(popdist, OMP_NUM_THREADS="1"))
        with open(report) as f:
            data = json.load(f)
        check(result.returncode == 0 and data["status"] == 0 and data["failures"] == [], str(data))


def logs(popdist):
    script = 'echo "out of $RANK"; echo "err of $RANK" >&2'
    with tempfile.TemporaryDirectory() as tmp:
        for tee in ([], ["--tee"]):
            result = run([popdist, "run", "--num-instances", "2", "--log-dir", os.path.join(tmp, "logs"), *tee, "--",
                          "sh", "-c", script], env=popdist_env(popdist, OMP_NUM_THREADS="1"))
            check(result.returncode == 0, describe(result))
            for rank in (0, 1):
                folder = os.path.join(tmp, "logs", "attempt_0", str(rank))
                with open(os.path.join(folder, "stdout.log")) as f:
                    check(f.read() == f"out of {rank}\n", f"{folder}/stdout.log")
                with open(os.path.join(folder, "stderr.log")) as f:
                    check(f.read() == f"err of {rank}\n", f"{folder}/stderr.log")
            shown = "out of 0" in result.stdout and "err of 1" in result.stderr
            check(shown == bool(tee), f"tee {tee}: shown {shown}: {describe(result)}")


CHECKPOINT_ON_USR1 = r"""
import os, signal, sys, time
saved = []
signal.signal(signal.SIGUSR1, lambda *_: saved.append(1))
print("ready", os.environ.get("SLURM_JOB_ID"), flush=True)
deadline = time.monotonic() + 30
while not saved and time.monotonic() < deadline:
    time.sleep(0.05)
time.sleep(1.5)  # a second delivery, if any, comes within this
print(f"checkpoint on SIGUSR1 x{len(saved)}" if saved else "no SIGUSR1", flush=True)
"""


def usr1_deliveries(out):
    """How many times each instance's handler ran, from the lines of CHECKPOINT_ON_USR1."""
    return re.findall(r"checkpoint on SIGUSR1 x(\d+)", out)


def usr1_once(popdist, env, extra_args=()):
    """SIGUSR1 to popdist run reaches each of 2 instances exactly once: a checkpoint-and-requeue
    handler must not run twice (Open MPI signals the agent's whole process group, which holds the
    program too, so the agent must not pass it on again)."""
    with tempfile.TemporaryDirectory() as tmp:
        script = os.path.join(tmp, "usr1.py")
        with open(script, "w") as f:
            f.write(CHECKPOINT_ON_USR1)
        job = subprocess.Popen([popdist, "run", "--num-instances", "2", *extra_args, "--", sys.executable, script],
                               env=dict(env, TMPDIR=tmp), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        ready = 0
        while ready < 2:
            line = job.stdout.readline()
            check(line != "", "the job ended before both instances were ready")
            ready += "ready" in line
        job.send_signal(signal.SIGUSR1)
        out, err = job.communicate(timeout=40)
    check(job.returncode == 0, f"SIGUSR1 must not end the job: {job.returncode} {err}")
    check(usr1_deliveries(out) == ["1", "1"], f"each instance sees SIGUSR1 once {list(extra_args)}: {out}")


def usr1(popdist, testbed):
    env = popdist_env(popdist, OMP_NUM_THREADS="1")
    for _ in range(3):  # a second delivery raced the first in about half the runs
        usr1_once(popdist, env)
    usr1_once(popdist, env, ["--mpi-global-args", "--mca odls_base_signal_direct_children_only 1"])
    if shutil.which("unshare") and subprocess.run(["unshare", "--uts", "true"]).returncode == 0:
        usr1_once(popdist, env, ["--host", "hostA:1,hostB:1", "--mpi-global-args",
                                 f"--mca plm_rsh_agent {fake_hosts_agent(testbed)}"])
    else:
        print("fake hosts skipped: this machine cannot create UTS namespaces")


def child_pids(pid):
    """The pids whose parent is `pid` (from /proc)."""
    found = []
    for entry in os.listdir("/proc"):
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if entry.isdigit() and int(fields[1]) == pid:
            found.append(int(entry))
    return found


def slurm_usr1_job(popdist, testbed, send):
    """A popdist run job of 2 instances inside `salloc -N2`, SIGUSR1 sent by `send(job_id, salloc)`
    once both are ready; returns (deliveries per instance, stdout)."""
    from testbed_checks import slurm_environment
    env = dict(slurm_environment(popdist, testbed), OMP_NUM_THREADS="1")
    with tempfile.TemporaryDirectory() as tmp:
        script = os.path.join(tmp, "usr1.py")
        with open(script, "w") as f:
            f.write(CHECKPOINT_ON_USR1)
        job = subprocess.Popen(["salloc", "-N2", "-n2", "--time=1", popdist, "run", "--num-instances", "2",
                                "--", sys.executable, script], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True)
        try:
            ready = []
            while len(ready) < 2:
                line = job.stdout.readline()
                if not line:  # (reading stderr before the job ends would wait for its end)
                    check(False, f"the job ended before both instances were ready: {job.stderr.read()}")
                ready += line.split()[1:] if "ready" in line else []
            job_id = ready[0]  # the allocation's, as its steps see it
            check(job_id.isdigit() and ready[1] == job_id, f"SLURM_JOB_ID of the instances: {ready}")
            send(env, job_id, job.pid)
            out, err = job.communicate(timeout=60)
        finally:
            if job.poll() is None:
                job.kill()
                job.wait()
    check(job.returncode == 0, f"SIGUSR1 must not end the job: {job.returncode} {err}")
    return usr1_deliveries(out), out


def slurm_usr1(popdist, testbed):
    """Inside an allocation (Open MPI's daemons started by srun): SIGUSR1 sent to popdist run reaches
    each instance exactly once; Slurm's `scancel --signal=USR1` to the job's steps reaches both
    instances too, and the job goes on to its end (a process in a step gets it from slurmstepd and
    again from Open MPI's daemon, twice, as under plain mpirun: docs/guide/long-jobs.md)."""
    def to_popdist_run(env, job_id, salloc):
        launchers = child_pids(salloc)
        check(len(launchers) == 1, f"salloc's child, popdist run: {launchers}")
        os.kill(launchers[0], signal.SIGUSR1)

    def to_the_steps(env, job_id, salloc):
        cancel = run(["scancel", "--signal=USR1", job_id], env=env)
        check(cancel.returncode == 0, describe(cancel))

    deliveries, out = slurm_usr1_job(popdist, testbed, to_popdist_run)
    check(deliveries == ["1", "1"], f"forwarded by popdist run, each instance sees SIGUSR1 once: {out}")
    deliveries, out = slurm_usr1_job(popdist, testbed, to_the_steps)
    check(len(deliveries) == 2 and all(int(n) >= 1 for n in deliveries), f"scancel reaches both: {out}")
    print(f"scancel --signal=USR1 to the steps: deliveries per instance {deliveries}")


def stall(popdist):
    with tempfile.TemporaryDirectory() as tmp:
        script = os.path.join(tmp, "silent.py")
        with open(script, "w") as f:
            f.write("import time\nprint('started', flush=True)\ntime.sleep(60)  # SILENT-SLEEP\n")
        start = time.monotonic()
        result = run([popdist, "run", "--num-instances", "2", "--stall-timeout", "4", "--", sys.executable, script],
                     env=popdist_env(popdist, OMP_NUM_THREADS="1", TMPDIR=tmp), timeout=60)
    check(result.returncode == 125, f"exit status 125 after a stall: {describe(result)}")
    check("no output from any instance for 4 s" in result.stderr, describe(result))
    for rank in (0, 1):
        check(re.search(rf"instance {rank}: \S*silent.py:3 in <module>", result.stderr), describe(result))
    print(f"stall report and end after {time.monotonic() - start:.1f} s")
    # Instances that ignore the stall's SIGTERM: SIGKILLed after the grace, still a stall (125), no
    # lost host (their agents' silence is the teardown's).
    deaf = [sys.executable, "-c", "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(60)"]
    result = run([popdist, "run", "--num-instances", "2", "--stall-timeout", "2", "--", *deaf],
                 env=popdist_env(popdist, OMP_NUM_THREADS="1"), timeout=60)
    check(result.returncode == 125 and "lost host" not in result.stderr, f"a stall ignoring SIGTERM: {describe(result)}")


def fixed_size(popdist):
    """The command does not grow with the instance count: a stand-in mpirun records its argv."""
    with RecordingMpirun(popdist_env(popdist, OMP_NUM_THREADS="1")) as mpirun:
        sizes = {}
        for instances in (2, 4096, 16384):
            result = run([popdist, "run", "--num-instances", str(instances), "--", "prog", "arg"], env=mpirun.env)
            check(result.returncode == 0, describe(result))
            words = mpirun.words()
            check(words[words.index("-np") + 1] == str(instances), f"{instances}: {words}")
            sizes[instances] = sum(len(w) + 1 for w in words)
            dry = run([popdist, "run", "--dry-run", "--num-instances", str(instances), "--", "prog", "arg"],
                      env=mpirun.env)
            check(dry.returncode == 0 and len(dry.stdout.splitlines()) == instances + 1, describe(dry))
    check(sizes[16384] - sizes[2] < 32, f"argument bytes by instances: {sizes}")
    print(f"argument bytes by instances: {sizes}")
    # a real job of 64 instances, oversubscribed: every instance its own rank
    result = run([popdist, "run", "--num-instances", "64", "--", "sh", "-c", 'echo "rank $RANK $POPDIST_REPLICA_INDEX_OFFSET"'],
                 env=popdist_env(popdist, OMP_NUM_THREADS="1"), timeout=120)
    check(result.returncode == 0, describe(result))
    seen = sorted(int(m.group(1)) for m in re.finditer(r"rank (\d+) (\d+)", result.stdout) if m.group(1) == m.group(2))
    check(seen == list(range(64)), f"64 instances, each its own rank and offset: {seen}")


CHECKS = {"cpu-defaults": cpu_defaults, "restarts": restarts, "failure-report": failure_report,
          "report-file": report_file, "logs": logs,
          "usr1": usr1, "slurm-usr1": slurm_usr1, "stall": stall, "fixed-size": fixed_size}

if __name__ == "__main__":
    sys.exit(main(CHECKS, sys.argv))
