"""`popdist run --backend srun`: whole jobs under the real srun of the project's Slurm testbed (2
nodes, n1 and n2, fixture popdist_run.slurm.up), outside an allocation (srun makes its own) and
inside one (salloc: each attempt a new step). The programs need no MPI: `sh -c` and python.

Usage: srun_backend_checks.py <check> <popdist> <testbed>"""

import contextlib
import json
import shutil
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

from hydra_backend_checks import (STALLED, check_killed_leaves_nothing, check_stacks_then_stall, kill_marked,
                                   left_after, per_instance, usr1_then_term, wait_for)
from launcher_common import check, describe, main, run
from slurm_job_checks import job_field, read, submit
from testbed_checks import slurm_environment, wait_for_idle_nodes


def popdist_run(popdist, *words):
    return [popdist, "run", "--backend", "srun", *words]


def dry_run(popdist, testbed):
    env = slurm_environment(popdist, testbed)
    result = run(popdist_run(popdist, "--dry-run", "--num-instances", "4", "--host", "n1,n2", "true"), env)
    check(result.returncode == 0, describe(result))
    check(result.stdout.startswith("srun --ntasks 4 --distribution arbitrary --nodelist n1,n1,n2,n2 --export ALL "
                                   "--kill-on-bad-exit=0 --disable-status --job-name popdist-run-XXXXXX "
                                   "env MASTER_ADDR="), describe(result))
    check(re.search(r"^popdist run: backend srun: Slurm \S+ at /usr/bin/srun$", result.stderr, re.M), describe(result))
    # auto: srun only where no MPI launcher is found
    with tempfile.TemporaryDirectory() as tmp:
        os.symlink("/usr/bin/srun", os.path.join(tmp, "srun"))
        path = os.path.dirname(os.path.abspath(popdist)) + os.pathsep + tmp
        auto = run([popdist, "run", "--dry-run", "--num-instances", "2", "true"], dict(env, PATH=path))
        check(auto.returncode == 0 and auto.stdout.startswith("srun --ntasks 2 ") and "backend srun" in auto.stderr,
              describe(auto))


def two_nodes(popdist, testbed):
    """Output in whole lines with popdist's tag, POPDIST_* and torchrun variables per instance, the
    user's environment as it is, the instances where the plan puts them."""
    env = dict(slurm_environment(popdist, testbed), MY_VALUE="a,b  $HOME 'q' \"d\"")
    program = ('printf "%s|%s|%s|%s|%s\\n" "$(hostname)" "$POPDIST_REPLICA_INDEX_OFFSET" "$RANK" "$LOCAL_RANK" '
               '"$MY_VALUE"; echo "err $RANK" >&2; printf "one line in "; sleep 0.2; printf "two pieces\\n"')
    # n2 first: the plan's order, not Slurm's node order
    result = run(popdist_run(popdist, "--host", "n2,n1", "--num-instances", "4", "--num-replicas", "8",
                             "sh", "-c", program), env, timeout=90)
    check(result.returncode == 0, describe(result))
    lines = per_instance(result.stdout)
    check(sorted(lines) == [0, 1, 2, 3], describe(result))
    for instance, output in lines.items():
        check(output[-1] == "one line in two pieces", f"instance {instance}: the last line is {output[-1]!r}")
        host, offset, rank, local, value = output[0].split("|")
        expected = (f"n{2 - instance // 2}", str(2 * instance), str(instance), str(instance % 2))
        check((host, offset, rank, local) == expected, f"instance {instance}: {output[0]}, expected {expected}")
        check(value == env["MY_VALUE"], f"MY_VALUE reached the instance as {value!r}")
    errors = per_instance("".join(line + "\n" for line in result.stderr.splitlines() if line.startswith("[1,")),
                          "stderr")
    check(errors == {i: [f"err {i}"] for i in range(4)}, f"stderr tags: {errors}\n{result.stderr}")


def oversubscription(popdist, testbed):
    """n1 and n2 have 4 CPUs each; 6 instances on each node's 4 slots need srun's --overcommit."""
    env = slurm_environment(popdist, testbed)
    with tempfile.NamedTemporaryFile("w", suffix=".hosts") as hostfile:
        hostfile.write("n1 slots=4\nn2 slots=4\n")
        hostfile.flush()
        result = run(popdist_run(popdist, "--hostfile", hostfile.name, "--num-instances", "12", "sh", "-c",
                                 'echo "$(hostname) $POPDIST_LOCAL_INSTANCE_INDEX"'), env, timeout=90)
    check(result.returncode == 0, describe(result))
    check(per_instance(result.stdout) == {i: [f"n{i // 6 + 1} {i % 6}"] for i in range(12)}, describe(result))


def failing_instance(popdist, testbed):
    """srun (--kill-on-bad-exit=0) lets the others run on: popdist run stops them with one SIGTERM
    each (to the step, through scancel), its status is the failed instance's, and the report names
    it first."""
    env = slurm_environment(popdist, testbed)
    with tempfile.TemporaryDirectory() as tmp:
        report = os.path.join(tmp, "report.json")
        # each stop signal recorded; a second one within the second after the first would be too
        program = (f'trap "echo int-$RANK >> {tmp}/stopped; stop=1" INT; '
                   f'trap "echo term-$RANK >> {tmp}/stopped; stop=1" TERM; '
                   'if [ "$RANK" = 1 ]; then sleep 1; echo broken >&2; exit 3; fi; '
                   'while [ -z "$stop" ]; do sleep 0.1; done; sleep 1; exit 5')
        started = time.monotonic()
        result = run(popdist_run(popdist, "--report-file", report, "--host", "n1,n2", "--num-instances", "2",
                                 "sh", "-c", program), env, timeout=90)
        took = time.monotonic() - started
        check(result.returncode == 3, describe(result))
        check(took < 60, f"the others were not ended: {took:.1f} s\n{describe(result)}")
        check("instance 1" in result.stderr and "broken" in result.stderr, describe(result))
        first = result.stderr.index("instance 1")
        check("instance 0" not in result.stderr or result.stderr.index("instance 0") > first,
              f"the root cause is not named first:\n{result.stderr}")
        stopped = open(f"{tmp}/stopped").read().split() if os.path.exists(f"{tmp}/stopped") else []
        check(stopped == ["term-0"], f"instance 0 was not stopped by one SIGTERM: {stopped}\n{describe(result)}")
        with open(report) as file:
            outcome = json.load(file)
        check(outcome["status"] == 3, f"report file: {outcome}")


def stop_twice(popdist, testbed, env, tmp, extra=()):
    """Starts a 2-instance job whose instances record each USR1, INT and TERM they get; sends
    popdist run SIGUSR1, then SIGTERM. Returns (usr1 deliveries, stop deliveries, status, stderr)."""
    # each signal recorded by name; a second delivery within a second would be too
    program = (f'trap "echo usr1-$RANK >> {tmp}/usr1" USR1; '
               f'trap "echo int-$RANK >> {tmp}/stop; stop=1" INT; trap "echo term-$RANK >> {tmp}/stop; stop=1" TERM; '
               f'echo ready-$RANK >> {tmp}/ready; while [ -z "$stop" ]; do sleep 0.1; done; sleep 1; exit 9')
    process = subprocess.Popen([*popdist_run(popdist, "-v", "--host", "n1,n2", "--num-instances", "2", *extra), "sh",
                                "-c", program], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _, err = usr1_then_term(process, tmp, ready_timeout=60, end_timeout=60)
    stops = sorted(open(f"{tmp}/stop").read().split()) if os.path.exists(f"{tmp}/stop") else []
    return sorted(open(f"{tmp}/usr1").read().split()), stops, process.returncode, err


def signals(popdist, testbed):
    """SIGUSR1 reaches each instance exactly once; a SIGTERM to popdist run then reaches each
    instance as one SIGTERM (srun's own SIGTERM would SIGKILL them: popdist run passes it on to the
    step with scancel), and the job ends as under Open MPI: the instances' status, no failure report."""
    env = slurm_environment(popdist, testbed)
    with tempfile.TemporaryDirectory() as tmp:
        usr1, stops, status, err = stop_twice(popdist, testbed, env, tmp, ("--report-file", f"{tmp}/report.json"))
        report = json.load(open(f"{tmp}/report.json")) if os.path.exists(f"{tmp}/report.json") else {}
    check(report.get("stopped") is True and report.get("status") == 9,
          f"report file: {report}")
    check(usr1 == ["usr1-0", "usr1-1"], f"SIGUSR1 deliveries: {usr1}\n{err}")
    check(stops == ["term-0", "term-1"], f"stops: {stops}, exit {status}\n{err}")
    check(status == 9 and "the job failed" not in err, f"exit {status}\n{err}")
    check(re.search(r"^popdist run: Terminated passed on to srun's step popdist-run-\w{6} with scancel$", err, re.M),
          f"-v does not say how the SIGTERM went on:\n{err}")


def term_fallback(popdist, testbed):
    """When Slurm cannot name the step (here a squeue beside srun that fails), a SIGTERM to popdist
    run still stops every instance gracefully, as srun's SIGINT, once each, and -v says so."""
    env = slurm_environment(popdist, testbed)
    with tempfile.TemporaryDirectory() as tmp:
        os.symlink(shutil.which("srun", path=env["PATH"]), os.path.join(tmp, "srun"))
        with open(os.path.join(tmp, "squeue"), "w") as squeue:
            squeue.write("#!/bin/sh\necho 'squeue: error: the controller is down (a test)' >&2\nexit 1\n")
        os.chmod(os.path.join(tmp, "squeue"), 0o755)
        env = dict(env, PATH=tmp + os.pathsep + env["PATH"])
        usr1, stops, status, err = stop_twice(popdist, testbed, env, tmp)
    check(stops == ["int-0", "int-1"], f"stops: {stops}, exit {status}\n{err}")
    check(status == 9, f"exit {status}\n{err}")
    check("could not pass Terminated on to srun's step" in err and "the controller is down (a test)" in err
          and "stopping srun with SIGINT instead" in err, f"-v does not say why:\n{err}")


def interrupt(popdist, testbed):
    """Ctrl-C (SIGINT to popdist run): one SIGINT to every instance, whose handler runs; the status
    is the instances' (7)."""
    env = slurm_environment(popdist, testbed)
    with tempfile.TemporaryDirectory() as tmp:
        program = (f'trap "echo int-$RANK >> {tmp}/int; stop=1" INT; echo ready-$RANK >> {tmp}/ready; '
                   'while [ -z "$stop" ]; do sleep 0.1; done; sleep 1; exit 7')
        process = subprocess.Popen(popdist_run(popdist, "--host", "n1,n2", "--num-instances", "2", "sh", "-c", program),
                                   env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            wait_for(f"{tmp}/ready", 2, timeout=60)
            process.send_signal(signal.SIGINT)
            out, err = process.communicate(timeout=60)
        finally:
            if process.poll() is None:
                process.kill()
        check(sorted(open(f"{tmp}/int").read().split()) == ["int-0", "int-1"], f"exit {process.returncode}\n{err}")
        check(process.returncode == 7, f"exit {process.returncode}\n{out}\n{err}")


def stacks_and_stall(popdist, testbed):
    """`popdist stacks` reaches the Python instances of an srun job on both nodes, and
    --stall-timeout ends a silent job with the report of where each instance is (exit 125)."""
    command = popdist_run(popdist, "--host", "n1,n2", "--num-instances", "2", "--stall-timeout", "5",
                          sys.executable, "-c", STALLED)
    check_stacks_then_stall(popdist, slurm_environment(popdist, testbed), command, settle=2)


def killed(popdist, testbed):
    """popdist run killed with SIGKILL leaves no instance, agent or srun behind."""
    check_killed_leaves_nothing(popdist_run(popdist, "--host", "n1,n2", "--num-instances", "2"),
                                slurm_environment(popdist, testbed), f"popdist-srun-killed-{os.getpid()}",
                                running=5, ready_timeout=60, left_within=20)  # srun, agents, programs


def restarts_in_allocation(popdist, testbed):
    """--max-restarts inside an allocation: each attempt a new step of the same job; --log-dir keeps
    each attempt's output per instance."""
    env = slurm_environment(popdist, testbed)
    program = 'echo "step $SLURM_JOB_ID.$SLURM_STEP_ID attempt $POPDIST_RESTART_COUNT"; [ "$POPDIST_RESTART_COUNT" = 1 ]'
    with tempfile.TemporaryDirectory() as logs:
        result = run(["salloc", "-N2", "-n2", "--time=2",
                      *popdist_run(popdist, "--max-restarts", "1", "--log-dir", logs, "--tee", "--num-instances", "2",
                                   "sh", "-c", program)], env, timeout=120)
        logged = {}
        for attempt in (0, 1):
            for instance in (0, 1):
                path = os.path.join(logs, f"attempt_{attempt}", str(instance), "stdout.log")
                logged[(attempt, instance)] = open(path).read() if os.path.exists(path) else None
    check(result.returncode == 0 and "restarting the whole job" in result.stderr, describe(result))
    lines = per_instance(result.stdout)
    steps = {line.split()[1] for output in lines.values() for line in output}
    jobs = {step.split(".")[0] for step in steps}
    check(len(steps) == 2 and len(jobs) == 1, f"steps {steps}\n{describe(result)}")
    check(sorted(line.split()[-1] for output in lines.values() for line in output) == ["0", "0", "1", "1"],
          describe(result))
    for (attempt, instance), text in logged.items():
        check(text is not None and re.fullmatch(rf"step {sorted(jobs)[0]}\.\d+ attempt {attempt}\n", text),
              f"--log-dir, attempt {attempt} instance {instance}: {text!r}")


def batch_recipe(popdist, testbed):
    """The Slurm recipe for srun sites: `exec popdist run --backend srun` in an sbatch script; a
    SIGUSR1 to the batch shell (as `#SBATCH --signal=B:USR1@60` sends it; here `scancel --batch`)
    reaches each instance once, on both nodes, and the job ends by itself."""
    env = slurm_environment(popdist, testbed)
    with tempfile.TemporaryDirectory() as tmp:
        program = (f'trap "echo usr1-$RANK-$(hostname) >> {tmp}/usr1" USR1; echo ready-$RANK >> {tmp}/ready; '
                   f'i=0; while [ $i -lt 300 ] && [ ! -e {tmp}/end ]; do sleep 0.1; i=$((i+1)); done; echo done-$RANK')
        job = submit(env, tmp, f"exec {popdist} run --backend srun --num-instances 2 sh -c '{program}'\n")
        try:
            wait_for(f"{tmp}/ready", 2, timeout=60)
            signalled = run(["scancel", "--batch", "--signal=USR1", job], env)
            check(signalled.returncode == 0, describe(signalled))
            wait_for(f"{tmp}/usr1", 2)
            time.sleep(1)  # a second delivery would arrive by now
            open(f"{tmp}/end", "w").close()
            deadline = time.monotonic() + 60
            while job_field(env, job, "JobState") not in ("COMPLETED", "FAILED", "CANCELLED") \
                    and time.monotonic() < deadline:
                time.sleep(0.2)
            state = job_field(env, job, "JobState")
        finally:
            run(["scancel", job], env)
        usr1 = sorted(open(f"{tmp}/usr1").read().split())
        out = read(os.path.join(tmp, "out"))
    check(usr1 == ["usr1-0-n1", "usr1-1-n2"], f"SIGUSR1 deliveries: {usr1}\n{out}")
    check(state == "COMPLETED" and "[1,0]<stdout>:done-0" in out and "[1,1]<stdout>:done-1" in out,
          f"job {job}: {state}\n{out}")


def slurmd_pid(testbed, node):
    """The pid of the testbed's slurmd of `node` (slurm.conf's SlurmdPidFile)."""
    with open(os.path.join(testbed, "slurm", "slurm.conf")) as conf:
        pattern = re.search(r"^SlurmdPidFile=(\S+)", conf.read(), re.M).group(1)
    with open(pattern.replace("%n", node)) as pid_file:
        return int(pid_file.read())


def node_processes(testbed, node):
    """Every process of the testbed's `node`: those in its slurmd's UTS namespace (slurm_up.sh)
    -- its slurmd, slurmstepds, agents and instances."""
    namespace = os.readlink(f"/proc/{slurmd_pid(testbed, node)}/ns/uts")
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if os.readlink(f"/proc/{pid}/ns/uts") == namespace:
                found.append(int(pid))
        except OSError:
            pass  # gone meanwhile
    return found


def down_node(popdist, testbed):
    """Inside an allocation with --no-kill, n2 freezes (every process of it SIGSTOPped: a failed
    node, which, unlike a live one, ReturnToService=2 does not put back in service at once) and
    Slurm marks it DOWN (scontrol). Slurm ends the step on both nodes; the report names n2, DOWN and
    Slurm's reason, and n2 alone as the lost host (122), on stderr and in the report file."""
    env = slurm_environment(popdist, testbed)
    marker = f"popdist-srun-down-{os.getpid()}"
    with tempfile.TemporaryDirectory() as tmp:
        program = ["sh", "-c", f'echo ready-$RANK >> {tmp}/ready; while :; do sleep 0.1; done', marker]
        process = subprocess.Popen(["salloc", "-N2", "-n2", "--no-kill", "--time=2",
                                    *popdist_run(popdist, "-v", "--host", "n1,n2", "--num-instances", "2",
                                                 "--report-file", f"{tmp}/report.json", *program)],
                                   env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        frozen = []
        try:
            wait_for(f"{tmp}/ready", 2, timeout=60)
            frozen = node_processes(testbed, "n2")
            for pid in frozen:
                with contextlib.suppress(ProcessLookupError):  # the loop's `sleep 0.1`s come and go
                    os.kill(pid, signal.SIGSTOP)  # the testbed's node n2, continued below
            downed = run(["scontrol", "update", "nodename=n2", "state=down", "reason=popdist-test"], env)
            check(downed.returncode == 0, describe(downed))
            downed_at = time.monotonic()
            out, err = process.communicate(timeout=90)
            print(f"popdist run ended {time.monotonic() - downed_at:.1f} s after n2 was marked DOWN")
        finally:
            if process.poll() is None:
                process.kill()
            for pid in frozen:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGCONT)
            kill_marked(marker)  # ours: n2's agent and instance, whose step Slurm ended
            run(["scontrol", "update", "nodename=n2", "state=resume"], env)
        report = json.load(open(f"{tmp}/report.json")) if os.path.exists(f"{tmp}/report.json") else {}
    check(process.returncode == 122, f"exit {process.returncode}\n{err}")
    check('Slurm took node n2 out of service: DOWN, not responding, reason "popdist-test"' in err
          or 'Slurm took node n2 out of service: DOWN, reason "popdist-test"' in err, f"n2 is not named:\n{err}")
    check("lost host: n2 (instance 1;" in err and "lost host: n1" not in err, err)
    check([host["host"] for host in report.get("lost_hosts", [])] == ["n2"], f"report file: {report}")
    wait_for_idle_nodes(env, seconds=60)  # n2 back in service for the checks that follow


def silent_node(tmp, marker, ranks_from):
    """A program whose instances from RANK `ranks_from` on stop their agents (SIGSTOP to $PPID):
    their node falls silent as a node cut off would. Slurm SIGKILLs the stopped agents when popdist
    run ends the step."""
    return ["sh", "-c", f'echo "attempt $POPDIST_RESTART_COUNT: $RANK of $WORLD_SIZE on $(hostname) step '
            f'$SLURM_JOB_ID.$SLURM_STEP_ID"; echo ready-$RANK >> {tmp}/ready; '
            f'if [ "$RANK" -ge {ranks_from} ]; then sleep 1.5; kill -STOP $PPID; sleep 60; fi; sleep 3', marker]


def host_timeout(popdist, testbed):
    """--host-timeout under srun: n2 falls silent; popdist run names it lost and ends the job with
    122 (Slurm keeps n2 in service: no Slurm line), leaving nothing running."""
    env = slurm_environment(popdist, testbed)
    marker = f"popdist-srun-silent-{os.getpid()}"
    with tempfile.TemporaryDirectory() as tmp:
        try:
            started = time.monotonic()
            result = run(popdist_run(popdist, "--host", "n1,n2", "--num-instances", "2", "--host-timeout", "2",
                                     *silent_node(tmp, marker, 1)), env, timeout=90)
            print(f"popdist run ended {time.monotonic() - started:.1f} s after its start (n2 silent from 1.5 s on)")
            left = left_after(marker, 20)
        finally:
            kill_marked(marker)
    check(result.returncode == 122 and "lost host: n2 (instance 1;" in result.stderr, describe(result))
    check("lost host: n1" not in result.stderr and "Slurm took node" not in result.stderr, describe(result))
    check(not left, f"left behind: {left}")


def shrink(popdist, testbed):
    """--max-restarts 1 --min-instances 2 inside an allocation: n2 is lost in the first attempt, and
    the second runs without it, 2 instances on n1, as a new step of the same job, and succeeds."""
    env = slurm_environment(popdist, testbed)
    marker = f"popdist-srun-shrink-{os.getpid()}"
    with tempfile.TemporaryDirectory() as tmp:
        try:
            result = run(["salloc", "-N2", "-n4", "--time=3",
                          *popdist_run(popdist, "--host", "n1,n2", "--num-instances", "4", "--host-timeout", "2",
                                       "--max-restarts", "1", "--min-instances", "2", *silent_node(tmp, marker, 2))],
                         env, timeout=110)
        finally:
            kill_marked(marker)
    check(result.returncode == 0 and "left out of every later attempt: n2" in result.stderr, describe(result))
    lines = [line.split(":", 1)[1] for line in result.stdout.splitlines() if ":attempt " in line]
    second = sorted(line.rsplit(" step ", 1)[0] for line in lines if line.startswith("attempt 1:"))
    check(second == ["attempt 1: 0 of 2 on n1", "attempt 1: 1 of 2 on n1"],
          f"second attempt: {second}\n{describe(result)}")
    steps = {line.rsplit(" step ", 1)[1] for line in lines}
    check(len(steps) == 2 and len({step.split(".")[0] for step in steps}) == 1, f"steps {steps}\n{describe(result)}")


def pmi_fd(popdist, testbed):
    """srun --mpi=pmi2 (through --mpi-global-args): PMI_FD reaches each program through its agent,
    open (a socket), with PMI_RANK and PMI_SIZE."""
    env = slurm_environment(popdist, testbed)
    program = 'echo "$PMI_RANK $PMI_SIZE $PMI_FD $(readlink /proc/self/fd/$PMI_FD)"'
    result = run(popdist_run(popdist, "--mpi-global-args=--mpi=pmi2", "--host", "n1,n2", "--num-instances", "2",
                             "sh", "-c", program), env, timeout=90)
    check(result.returncode == 0, describe(result))
    lines = per_instance(result.stdout)
    check(sorted(lines) == [0, 1], describe(result))
    for instance, output in lines.items():
        words = output[0].split()
        check(len(words) == 4 and words[:2] == [str(instance), "2"] and words[2].isdigit()
              and words[3].startswith("socket:"), f"instance {instance}: {output}\n{describe(result)}")


CHECKS = {
    "dry-run": dry_run, "two-nodes": two_nodes, "oversubscription": oversubscription,
    "failing-instance": failing_instance, "signals": signals, "term-fallback": term_fallback, "interrupt": interrupt,
    "stacks-and-stall": stacks_and_stall, "killed": killed,
    "restarts-in-allocation": restarts_in_allocation, "batch-recipe": batch_recipe, "down-node": down_node,
    "host-timeout": host_timeout, "shrink": shrink, "pmi-fd": pmi_fd,
}

if __name__ == "__main__":
    sys.exit(main(CHECKS, sys.argv))
