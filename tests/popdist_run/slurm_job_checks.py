#!/usr/bin/env python3
"""`popdist run` in sbatch jobs on the Slurm testbed (docs/guide/long-jobs.md): the preemption
recipe's SIGUSR1 by each route (checkpoint, requeue, resume), the old recipe that killed the batch
shell, and a node that fails inside the allocation. Usage: slurm_job_checks.py <check> <popdist> <testbed>."""

import os
import re
import subprocess
import sys
import tempfile
import time

from launcher_common import check, describe, main, processes_with, run
from testbed_checks import slurm_environment, wait_for_idle_nodes

# The recipe's program: on SIGUSR1 it counts the delivery, checkpoints once and (instance 0)
# requeues the job; started again, it resumes from its checkpoint. Without a signal it ends
# after argv[2] seconds, saying so.
PREEMPTIBLE = r"""
import os, signal, subprocess, sys, time
folder, rank = sys.argv[1], os.environ["RANK"]
checkpoint = f"{folder}/checkpoint.{rank}"
done = []
def checkpoint_and_requeue(*_):
    with open(f"{folder}/deliveries.{rank}", "a") as f:
        f.write("delivered\n")
    if done:
        return
    done.append(1)
    with open(checkpoint, "w") as f:
        f.write("5")
    with open(f"{folder}/checkpoints.{rank}", "a") as f:
        f.write("saved\n")
    if rank == "0":
        subprocess.run(["scontrol", "requeue", os.environ["SLURM_JOB_ID"]], check=True)
signal.signal(signal.SIGUSR1, checkpoint_and_requeue)
step = int(open(checkpoint).read()) if os.path.exists(checkpoint) else 0
print("ready", rank, "restart", os.environ.get("SLURM_RESTART_COUNT", "0"), flush=True)
if step:
    print("resumed", rank, "from step", step, flush=True)
    sys.exit(0)
deadline = time.monotonic() + float(sys.argv[2])
while time.monotonic() < deadline:
    time.sleep(0.1)
print("no SIGUSR1", rank, flush=True)
"""

BATCH_HEADER = "#!/bin/bash\n#SBATCH --nodes=2 --ntasks-per-node=1 --requeue --open-mode=append --time=2\n"


def read(path):
    try:
        with open(path) as f:
            return f.read()
    except FileNotFoundError:
        return ""


def wait_for_lines(path, pattern, count, seconds):
    deadline = time.monotonic() + seconds
    while len(re.findall(pattern, read(path))) < count:
        check(time.monotonic() < deadline, f"no {count} lines {pattern!r} in {seconds} s: {read(path)}")
        time.sleep(0.2)


def submit(env, folder, batch_lines, nodes_args=()):
    script = os.path.join(folder, "job.sh")
    with open(script, "w") as f:
        f.write(BATCH_HEADER + batch_lines)
    result = run(["sbatch", "--parsable", *nodes_args, "-o", os.path.join(folder, "out"), script], env=env)
    check(result.returncode == 0 and result.stdout.strip().isdigit(), describe(result))
    return result.stdout.strip()


def job_field(env, job_id, field):
    shown = run(["scontrol", "show", "job", job_id], env=env).stdout
    match = re.search(rf"\b{field}=(\S+)", shown)
    return match.group(1) if match else None


def wait_for_job_end(env, job_id, seconds):
    """Waits until the job has left the queue. A requeued job waits Slurm's credential lifetime
    (AuthInfo cred_expire, 120 s by default) before it may start again: the test lets it start now."""
    deadline = time.monotonic() + seconds
    while True:
        state = run(["squeue", "-h", "-j", job_id, "-o", "%T"], env=env).stdout.strip()
        if state == "":
            return
        if state == "PENDING":
            run(["scontrol", "update", f"jobid={job_id}", "starttime=now"], env=env)
        check(time.monotonic() < deadline, f"job {job_id} still {state} after {seconds} s")
        time.sleep(0.3)


def preempt(popdist, testbed, batch_line, scancel_args, wait_seconds=60):
    """Submits the recipe's job, sends SIGUSR1 once both instances are ready, waits for the job's
    end. Returns (job id, folder contents: {file name: text}, the job's output)."""
    env = dict(slurm_environment(popdist, testbed), OMP_NUM_THREADS="1")
    with tempfile.TemporaryDirectory() as folder:
        program = os.path.join(folder, "train.py")
        with open(program, "w") as f:
            f.write(PREEMPTIBLE)
        job_id = submit(env, folder, batch_line.format(program=f"{sys.executable} {program} {folder} {wait_seconds}"))
        try:
            wait_for_lines(os.path.join(folder, "out"), r"ready \d", 2, 60)
            signal = run(["scancel", *scancel_args, job_id], env=env)
            check(signal.returncode == 0, describe(signal))
            wait_for_job_end(env, job_id, wait_seconds + 60)
        finally:
            run(["scancel", job_id], env=env)
        files = {name: read(os.path.join(folder, name)) for name in os.listdir(folder)}
    return env, job_id, files


def counts(files, prefix):
    return {rank: files.get(f"{prefix}.{rank}", "").count("\n") for rank in (0, 1)}


def preemption_exec(popdist, testbed):
    """`exec popdist run` in the batch script, SIGUSR1 to the batch shell (`--signal=B:USR1@N`,
    `scancel --batch`): popdist run is that shell's process and passes it to every instance; both
    checkpoint, instance 0 requeues, and the job's second run resumes from the checkpoints."""
    env, job_id, files = preempt(popdist, testbed, "exec popdist run --num-instances 2 -- {program}\n",
                                 ["--batch", "--signal=USR1"])
    out = files["out"]
    check(counts(files, "checkpoints") == {0: 1, 1: 1}, f"one checkpoint per instance: {files}")
    # Open MPI signals each instance's process group; the agent passes on only what reached it alone.
    deliveries = counts(files, "deliveries")
    check(deliveries == {0: 1, 1: 1}, f"SIGUSR1 reaches each instance exactly once {deliveries}: {out}")
    check(len(re.findall(r"resumed \d from step 5", out)) == 2 and out.count("ready 0 restart 1") == 1, out)
    state, restarts = job_field(env, job_id, "JobState"), job_field(env, job_id, "Restarts")
    check((state, restarts) == ("COMPLETED", "1"), f"job {job_id}: {state}, restarts {restarts}: {out}")
    print(f"exec route: checkpoints once, requeued once, resumed; deliveries per instance {deliveries}")


def preemption_steps(popdist, testbed):
    """SIGUSR1 to the job's steps (`--signal=USR1@N`, `scancel --signal=USR1`) reaches only the
    instances that Open MPI started through srun steps: on the batch script's own node mpirun
    starts its instances itself, in the batch step, which this route leaves out. Instance 0 never
    checkpoints nor requeues, and the job runs on to its end."""
    env, job_id, files = preempt(popdist, testbed, "popdist run --num-instances 2 -- {program}\n",
                                 ["--signal=USR1"], wait_seconds=15)
    out = files["out"]
    check(counts(files, "checkpoints") == {0: 0, 1: 1}, f"only instance 1 (in a step) checkpoints: {files}")
    check("no SIGUSR1 0" in out and "resumed" not in out, out)
    state, restarts = job_field(env, job_id, "JobState"), job_field(env, job_id, "Restarts")
    check((state, restarts) == ("COMPLETED", "0"), f"job {job_id}: {state}, restarts {restarts}: {out}")


def preemption_old_recipe(popdist, testbed):
    """The recipe as it was printed: SIGUSR1 to the batch shell (`--signal=B:USR1@N`) without
    exec kills bash (SIGUSR1's default action), Slurm ends the job, and no instance checkpoints."""
    env, job_id, files = preempt(popdist, testbed, "popdist run --num-instances 2 -- {program}\n",
                                 ["--batch", "--signal=USR1"])
    check(counts(files, "deliveries") == {0: 0, 1: 0}, f"no instance saw SIGUSR1: {files}")
    state, code = job_field(env, job_id, "JobState"), job_field(env, job_id, "ExitCode")
    check(state == "FAILED" and code == "0:10", f"job {job_id}: {state}, exit {code} (0:10: SIGUSR1): {files['out']}")


def node_state(env, node):
    listing = run(["sinfo", "-h", "-N", "-n", node, "-o", "%t"], env=env).stdout.split()
    return listing[0] if listing else "?"


def node_failure(popdist, testbed, no_kill, what="kill"):
    """sbatch -N2, popdist run with 4 instances, 2 per node; node n2 fails (slurm_node.sh `what`:
    `kill`, its slurmd and every process on it; `kill-daemons`, only its slurmd and slurmstepds).
    popdist run must end with the lost-host status naming n2 (within seconds when n2's processes
    die; when Slurm kills them at DOWN, after SlurmdTimeout, 30 s on the testbed), leaving nothing
    running; Slurm marks n2 DOWN."""
    env = dict(slurm_environment(popdist, testbed), OMP_NUM_THREADS="1")
    token = f"{os.getpid()}{int(time.time())}"
    node_script = os.path.join(testbed, "slurm_node.sh")
    with tempfile.TemporaryDirectory() as folder:
        out = os.path.join(folder, "out")
        program = (f"{sys.executable} -c \"import os, time; print('ready', os.environ['RANK'], flush=True); "
                   f"time.sleep(120.{token})\"")
        job_id = submit(env, folder, f'popdist run --num-instances 4 -- {program}\necho "popdist run ended: $?"\n',
                        ["--ntasks-per-node=2"] + (["--no-kill"] if no_kill else []))
        try:
            wait_for_lines(out, r"ready \d", 4, 60)
            killed = run([node_script, what, "n2"], env=env)
            start = time.monotonic()
            check(killed.returncode == 0, describe(killed))
            wait_for_lines(out, r"popdist run ended: \d+", 1, 30 if what == "kill" else 100)
            ended = time.monotonic() - start
            status = int(re.search(r"popdist run ended: (\d+)", read(out)).group(1))
            if what == "kill":  # n2 falls silent: a lost host
                check(status == 122 and re.search(r"lost host: n2 \(instances 2, 3;", read(out)),
                      f"popdist run must fail naming n2 lost (status 122) when a node fails: {status} {read(out)}")
            else:  # Slurm ends n2's step at DOWN: its agents report the SIGTERM, and mpirun ends with 0
                check(status != 0 and "popdist run: the job failed" in read(out),
                      f"popdist run must fail, with its report, when Slurm ends n2's step: {status} {read(out)}")
            deadline = time.monotonic() + 10
            while processes_with(token) and time.monotonic() < deadline:
                time.sleep(0.2)
            check(not processes_with(token), f"processes left running: {processes_with(token)}")
            while node_state(env, "n2") not in ("down", "down*"):
                check(time.monotonic() - start < 90, f"n2 is {node_state(env, 'n2')} 90 s after its failure")
                time.sleep(0.5)
            down = time.monotonic() - start
            wait_for_job_end(env, job_id, 30)
            gone = time.monotonic() - start
        finally:
            run(["scancel", job_id], env=env)
            subprocess.run([node_script, "start", "n2"], env=env, capture_output=True, timeout=30)
    print(f"{'--no-kill: ' if no_kill else ''}popdist run ended (status {status}) {ended:.1f} s after n2 failed; "
          f"n2 DOWN after {down:.1f} s, the job gone after {gone:.1f} s")
    wait_for_idle_nodes(env, seconds=60)  # n2 back in service for the tests that follow


CHECKS = {"preemption-exec": preemption_exec, "preemption-steps": preemption_steps,
          "preemption-old-recipe": preemption_old_recipe,
          "node-failure": lambda popdist, testbed: node_failure(popdist, testbed, no_kill=False),
          "node-failure-no-kill": lambda popdist, testbed: node_failure(popdist, testbed, no_kill=True),
          "node-daemons-lost-no-kill": lambda popdist, testbed: node_failure(popdist, testbed, True, "kill-daemons")}

if __name__ == "__main__":
    sys.exit(main(CHECKS, sys.argv))
