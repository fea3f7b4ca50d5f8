"""`popdist run --backend hydra`: whole jobs under the real mpiexec.hydra (MPICH) on one host and on
the testbed's fake hosts. The programs need no MPI of the library's (it is built against Open
MPI): `sh -c`, and `popdist topology`, which reads the environment.

Usage: hydra_backend_checks.py <check> <popdist> [<testbed>]
Environment: POPDIST_TEST_HYDRA_BIN, another hydra's bin directory (tests/mpi_wheels: PyPI's MPICH
and Intel MPI; its mpiexec.hydra, else its mpiexec), and POPDIST_TEST_HYDRA_FAMILY, what popdist
run must call it ("MPICH hydra", "Intel MPI"). Default: Debian's /usr/bin/mpiexec.hydra, MPICH."""

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

from launcher_common import TAG, CheckFailed, check, describe, fake_hosts_agent, main, mpi_test_environment, run, skip

BIN = os.environ.get("POPDIST_TEST_HYDRA_BIN", "/usr/bin")
HYDRA = os.path.join(BIN, "mpiexec.hydra" if os.path.exists(os.path.join(BIN, "mpiexec.hydra")) else "mpiexec")
FAMILY = os.environ.get("POPDIST_TEST_HYDRA_FAMILY", "MPICH hydra")


def environment(popdist):
    if not os.path.exists(HYDRA):
        skip(f"{HYDRA} is not installed: apt-get install mpich (.ci/install-deps)")
    env = mpi_test_environment(os.path.dirname(os.path.abspath(popdist)))
    here = os.path.dirname(os.path.abspath(popdist))
    env["PATH"] = os.pathsep.join([here] + ([BIN] if BIN != "/usr/bin" else []) + ["/usr/bin", "/bin"])
    return env


def popdist_run(popdist, *words):
    return [popdist, "run", "--backend", "hydra", *words]


def per_instance(text, stream="stdout"):
    """{instance: [lines]} from output tagged as Open MPI's --tag-output tags it ([1,I]<stdout>:, by
    the agents under hydra); every line must be tagged, whole."""
    lines = {}
    for line in text.splitlines():
        match = TAG.match(line)
        check(match and match.group(3) == stream, f"a line without its {stream} tag: {line!r} in\n{text}")
        lines.setdefault(int(match.group(2)), []).append(line[match.end():])
    return lines


def dry_run(popdist):
    env = environment(popdist)
    result = run(popdist_run(popdist, "--dry-run", "--num-instances", "2", "--host", "hostA:1,hostB:1", "true"), env)
    check(result.returncode == 0, describe(result))
    lines = result.stdout.splitlines()
    check(lines[0].startswith(f"{os.path.basename(HYDRA)} -hosts hostA,hostB -ppn 1 -genv "), describe(result))
    check(re.search(r" -n 2 \S*popdist _instance ", lines[0]) and " --tag-output -- true" in lines[0]
          and "slots" not in lines[0], describe(result))
    check(re.search(rf"^popdist run: backend hydra: {FAMILY} \S+ at {re.escape(HYDRA)}$", result.stderr, re.M),
          describe(result))
    vv = run(popdist_run(popdist, "-vv", "--num-instances", "1", "true"), env)
    check(vv.returncode == 0 and f"popdist run: backend hydra: {FAMILY}" in vv.stderr
          and f"\n{os.path.basename(HYDRA)} " in vv.stderr, describe(vv))
    # An MPICH-only machine: `mpirun` is hydra's, and auto finds it by its --version, not its name.
    with tempfile.TemporaryDirectory() as tmp:
        os.symlink(HYDRA, os.path.join(tmp, "mpirun"))
        auto = run([popdist, "run", "--dry-run", "--num-instances", "2", "true"],
                   dict(env, PATH=os.path.dirname(os.path.abspath(popdist)) + os.pathsep + tmp))
        check(auto.returncode == 0 and auto.stdout.startswith("mpirun -genv "), describe(auto))
        check(f"backend hydra: {FAMILY}" in auto.stderr, describe(auto))
        # Open MPI asked for, only hydra there: refused before anything starts, naming what was found.
        refused = run([popdist, "run", "--backend", "openmpi", "--num-instances", "2", "true"],
                      dict(env, PATH=os.path.dirname(os.path.abspath(popdist)) + os.pathsep + tmp))
        check(refused.returncode == 127 and refused.stdout == "", describe(refused))
        check(f"{tmp}/mpirun says '" in refused.stderr and f"({FAMILY}" in refused.stderr
              and "install Open MPI" in refused.stderr, describe(refused))


def single_host(popdist):
    env = dict(environment(popdist), MY_VALUE="a b  $HOME 'q' \"d\"")
    program = ('printf "%s|%s|%s|%s|%s\\n" "$POPDIST_REPLICA_INDEX_OFFSET" "$RANK" "$LOCAL_RANK" "$MY_VALUE" '
               '"$( [ -n "$PMI_FD" ] && [ -e /proc/self/fd/$PMI_FD ] && echo open || echo closed)"; '
               'echo "err $RANK" >&2; popdist topology --json; printf "one line in "; sleep 0.2; printf "two pieces\\n"')
    result = run(popdist_run(popdist, "--num-instances", "2", "--num-replicas", "4", "sh", "-c", program), env)
    check(result.returncode == 0, describe(result))
    lines = per_instance(result.stdout)
    check(sorted(lines) == [0, 1], describe(result))
    for instance, output in lines.items():
        offset, rank, local, value, pmi_fd = output[0].split("|")
        check((offset, rank, local) == (str(2 * instance), str(instance), str(instance)), describe(result))
        check(value == env["MY_VALUE"], f"MY_VALUE reached the instance as {value!r}")
        check(pmi_fd == "open", f"PMI_FD does not reach the program through the agent: {output[0]}")
        check(output[-1] == "one line in two pieces", f"instance {instance}: the last line is {output[-1]!r}")
        topology = json.loads("\n".join(output[1:-1]))
        check(topology["instance_index"] == instance and topology["num_instances"] == 2
              and topology["num_local_replicas"] == 2, f"instance {instance}: {topology}")
    errors = per_instance("".join(line + "\n" for line in result.stderr.splitlines() if line.startswith("[1,")),
                          "stderr")
    check(errors == {0: ["err 0"], 1: ["err 1"]}, f"stderr tags: {errors}\n{result.stderr}")


def hosts_and_oversubscription(popdist):
    env = environment(popdist)
    with tempfile.NamedTemporaryFile("w", suffix=".hosts") as hostfile:
        hostfile.write("# one slot, three instances: hydra needs no oversubscription option\nlocalhost slots=1\n")
        hostfile.flush()
        result = run(popdist_run(popdist, "--hostfile", hostfile.name, "--num-instances", "3", "sh", "-c",
                                 'echo "$POPDIST_LOCAL_INSTANCE_INDEX $MPI_LOCALNRANKS"'), env)
    check(result.returncode == 0, describe(result))
    lines = per_instance(result.stdout)
    check(lines == {0: ["0 3"], 1: ["1 3"], 2: ["2 3"]}, describe(result))


def failing_instance(popdist):
    """hydra lets the others run on after a failure: popdist run ends them, and its status is the
    failed instance's (3), not hydra's combination of the raw statuses."""
    env = environment(popdist)
    with tempfile.TemporaryDirectory() as tmp:
        report = os.path.join(tmp, "report.json")
        program = 'if [ "$RANK" = 1 ]; then echo broken >&2; exit 3; fi; sleep 100'
        started = time.monotonic()
        result = run(popdist_run(popdist, "--report-file", report, "--num-instances", "2", "sh", "-c", program),
                     env, timeout=60)
        took = time.monotonic() - started
        check(result.returncode == 3, describe(result))
        check(took < 50, f"the others were not ended: {took:.1f} s\n{describe(result)}")
        check("the job failed" in result.stderr and "instance 1" in result.stderr and "broken" in result.stderr,
              describe(result))
        first = result.stderr.index("instance 1")
        check("instance 0" not in result.stderr or result.stderr.index("instance 0") > first,
              f"the root cause is not named first:\n{result.stderr}")
        with open(report) as file:
            outcome = json.load(file)
        check(outcome["status"] == 3, f"report file: {outcome}")


def restarts_and_logs(popdist):
    env = environment(popdist)
    with tempfile.TemporaryDirectory() as tmp, tempfile.TemporaryDirectory() as marks:
        # Each instance fails only once both have started: the first failure ends the others, and
        # an instance its launcher had not started yet (a loaded machine) would have no log.
        program = (f'echo "out $RANK attempt $POPDIST_RESTART_COUNT"; touch {marks}/$POPDIST_RESTART_COUNT-$RANK; '
                   f'while [ "$(ls {marks} | grep -c "^$POPDIST_RESTART_COUNT-")" -lt 2 ]; do sleep 0.05; done; '
                   '[ "$POPDIST_RESTART_COUNT" = 1 ]')
        result = run(popdist_run(popdist, "--max-restarts", "1", "--log-dir", tmp, "--num-instances", "2",
                                 "sh", "-c", program), env, timeout=90)
        check(result.returncode == 0 and "restarting the whole job" in result.stderr, describe(result))
        for attempt in (0, 1):
            for instance in (0, 1):
                with open(os.path.join(tmp, f"attempt_{attempt}", str(instance), "stdout.log")) as file:
                    text = file.read()
                check(text == f"out {instance} attempt {attempt}\n", f"attempt {attempt} instance {instance}: {text!r}")


def wait_for(path, count, timeout=30):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if os.path.exists(path) and len(open(path).read().split()) >= count:
            return
        time.sleep(0.1)
    raise CheckFailed(f"{path} did not get {count} words within {timeout} s")


def usr1_then_term(process, tmp, ready_timeout=30, end_timeout=30):
    """Once both instances wrote {tmp}/ready: SIGUSR1 to popdist run, and once both recorded it in
    {tmp}/usr1, a second later SIGTERM; returns the job's (stdout, stderr)."""
    try:
        wait_for(f"{tmp}/ready", 2, timeout=ready_timeout)
        process.send_signal(signal.SIGUSR1)
        wait_for(f"{tmp}/usr1", 2)
        time.sleep(1)  # a second delivery would arrive by now
        process.send_signal(signal.SIGTERM)
        return process.communicate(timeout=end_timeout)
    finally:
        if process.poll() is None:
            process.kill()


def signals(popdist):
    """SIGUSR1 reaches each instance exactly once (hydra signals the agent's whole group), then
    SIGTERM ends the job gracefully: each instance's own handler runs."""
    env = environment(popdist)
    with tempfile.TemporaryDirectory() as tmp:
        program = (f'trap "echo usr1-$RANK >> {tmp}/usr1" USR1; trap "echo term-$RANK >> {tmp}/term; exit 9" TERM; '
                   f'echo ready-$RANK >> {tmp}/ready; while :; do sleep 0.1; done')
        process = subprocess.Popen(popdist_run(popdist, "--num-instances", "2", "sh", "-c", program), env=env,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        _, err = usr1_then_term(process, tmp)
        check(sorted(open(f"{tmp}/usr1").read().split()) == ["usr1-0", "usr1-1"],
              f"SIGUSR1 deliveries: {open(f'{tmp}/usr1').read().split()}")
        check(sorted(open(f"{tmp}/term").read().split()) == ["term-0", "term-1"], f"exit {process.returncode}\n{err}")
        check(process.returncode != 0, f"exit {process.returncode}")


def interrupt(popdist):
    """Ctrl-C (SIGINT to popdist run): hydra passes SIGINT on, so each instance's own handler runs
    once and the job ends with a failure status."""
    env = environment(popdist)
    with tempfile.TemporaryDirectory() as tmp:
        program = (f'trap "echo int-$RANK >> {tmp}/int; exit 7" INT; echo ready-$RANK >> {tmp}/ready; '
                   'while :; do sleep 0.1; done')
        process = subprocess.Popen(popdist_run(popdist, "--num-instances", "2", "sh", "-c", program), env=env,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            wait_for(f"{tmp}/ready", 2)
            process.send_signal(signal.SIGINT)
            out, err = process.communicate(timeout=30)
        finally:
            if process.poll() is None:
                process.kill()
        check(sorted(open(f"{tmp}/int").read().split()) == ["int-0", "int-1"], f"exit {process.returncode}\n{err}")
        check(process.returncode == 7, f"exit {process.returncode}\n{out}\n{err}")


STALLED = "import time\ndef waiting_here():\n    time.sleep(300)\nprint('ready', flush=True)\nwaiting_here()\n"


def stacks_and_stall(popdist):
    """`popdist stacks` reaches the Python instances of a hydra job, and --stall-timeout ends a silent
    job with the report of where each instance is (exit 125)."""
    command = popdist_run(popdist, "--num-instances", "2", "--stall-timeout", "4", sys.executable, "-c", STALLED)
    check_stacks_then_stall(popdist, environment(popdist), command, settle=1.5)


def check_stacks_then_stall(popdist, env, command, settle):
    """Runs `command` (2 instances of STALLED under --stall-timeout), asks `popdist stacks` `settle` s
    after its job directory appears (the instances then wait in waiting_here), and checks that both
    instances were located, then that the stall watch ended the job (125) saying where each was."""
    with tempfile.TemporaryDirectory() as tmp:
        env["TMPDIR"] = tmp  # this job's directory, apart from any other job's
        process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline and not [d for d in os.listdir(tmp) if d.startswith("popdist-run-")]:
                time.sleep(0.1)
            time.sleep(settle)
            job_dirs = [os.path.join(tmp, d) for d in os.listdir(tmp) if d.startswith("popdist-run-")]
            check(len(job_dirs) == 1, f"job directories: {job_dirs}")
            stacks = run([popdist, "stacks", "--job-dir", job_dirs[0]], env, timeout=30)
            out, err = process.communicate(timeout=60)
        finally:
            if process.poll() is None:
                process.kill()
    check(stacks.returncode == 0 and "instance 0: <string>:3 in waiting_here" in stacks.stdout
          and "instance 1: <string>:3 in waiting_here" in stacks.stdout, describe(stacks))
    check(process.returncode == 125 and "(--stall-timeout): where each instance is" in err
          and err.count("in waiting_here") >= 2, f"exit {process.returncode}\n{out}\n{err}")


def ignored_sigterm(popdist):
    """Instances that ignore SIGTERM: hydra would wait for them for ever; popdist run ends the job
    after the grace period (--grace-period 1, plus 2 s) with SIGKILL, status 143, nothing left."""
    env = environment(popdist)
    marker = f"popdist-hydra-ignored-{os.getpid()}"
    with tempfile.TemporaryDirectory() as tmp:
        program = [sys.executable, "-c", "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
                   f"open('{tmp}/ready', 'a').write('ready '); time.sleep(300)", marker]
        process = subprocess.Popen(popdist_run(popdist, "--num-instances", "2", *program), env=env,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            wait_for(f"{tmp}/ready", 2)
            process.send_signal(signal.SIGTERM)
            out, err = process.communicate(timeout=30)
            deadline = time.monotonic() + 10
            while marked_processes(marker) and time.monotonic() < deadline:
                time.sleep(0.2)
            left = marked_processes(marker)
        finally:
            if process.poll() is None:
                process.kill()
            kill_marked(marker)
    check(process.returncode == 143, f"exit {process.returncode}\n{out}\n{err}")
    check(not left, f"left behind: {left}")


def stalled_ignoring_sigterm(popdist):
    """--stall-timeout on instances that ignore SIGTERM: hydra's teardown would wait for ever; the
    job ends after the grace period, and nothing is left."""
    env = environment(popdist)
    marker = f"popdist-hydra-stalled-{os.getpid()}"
    program = [sys.executable, "-c", "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
               "time.sleep(300)", marker]
    try:
        result = run(popdist_run(popdist, "--num-instances", "2", "--stall-timeout", "2", *program), env, timeout=60)
        left = left_after(marker, 10)
    finally:
        kill_marked(marker)
    check(result.returncode == 125 and "(--stall-timeout): where each instance is" in result.stderr
          and "lost host" not in result.stderr, describe(result))
    check(not left, f"left behind: {left}")


def left_after(marker, seconds):
    """The processes marked `marker` still there after at most `seconds` (none: all gone in time)."""
    deadline = time.monotonic() + seconds
    while marked_processes(marker) and time.monotonic() < deadline:
        time.sleep(0.2)
    return marked_processes(marker)


def kill_marked(marker):
    """SIGKILL to every process marked `marker` (ours: started by the check); one that ends
    meanwhile (its job's teardown was still under way) is no error."""
    for pid in marked_processes(marker):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def marked_processes(marker):
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as file:
                if marker.encode() in file.read():
                    found.append(int(pid))
        except OSError:
            pass
    return found


def check_killed_leaves_nothing(command, env, marker, running, ready_timeout=30, left_within=15):
    """`command` (popdist run's words, the program still to come) on instances that ignore SIGTERM,
    SIGKILLed once both run (at least `running` processes carry `marker`: agents, programs, the
    launcher's): every process of the job is gone within `left_within` s."""
    with tempfile.TemporaryDirectory() as tmp:
        # the marker in the program's own command line (and its agent's): one process each
        program = [sys.executable, "-c", "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
                   f"open('{tmp}/ready', 'a').write('ready '); time.sleep(300)", marker]
        process = subprocess.Popen([*command, *program], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            wait_for(f"{tmp}/ready", 2, timeout=ready_timeout)
            check(len(marked_processes(marker)) >= running, f"not running: {marked_processes(marker)}")
            process.kill()
            process.wait()
            left = left_after(marker, left_within)
        finally:
            kill_marked(marker)
        check(not left, f"left behind after popdist run was killed: {left}")


def killed(popdist):
    """popdist run killed with SIGKILL leaves no instance, agent or hydra process behind (instances
    that ignore SIGTERM: hydra would wait for them; popdist run gives it SIGKILL)."""
    check_killed_leaves_nothing(popdist_run(popdist, "--num-instances", "2"), environment(popdist),
                                f"popdist-hydra-killed-{os.getpid()}", running=4)  # agents, programs


def fake_hosts(popdist, testbed):
    """Across the testbed's fake hosts with hydra's own ssh launcher and the testbed's agent."""
    env = environment(popdist)
    agent = fake_hosts_agent(testbed)
    with tempfile.TemporaryDirectory() as tmp:
        env["TMPDIR"] = tmp
        result = run(popdist_run(popdist, "--host", "hostA,hostB", "--num-instances", "4",
                                 "--mpi-global-args", f"-launcher ssh -launcher-exec {agent}",
                                 "sh", "-c", 'echo "$(hostname) $POPDIST_LOCAL_INSTANCE_INDEX $RANK"'), env, timeout=90)
    check(result.returncode == 0, describe(result))
    lines = per_instance(result.stdout)
    expected = {0: ["hostA 0 0"], 1: ["hostA 1 1"], 2: ["hostB 0 2"], 3: ["hostB 1 3"]}
    check(lines == expected, f"{lines}\n{describe(result)}")


CHECKS = {
    "dry-run": dry_run, "single-host": single_host, "hosts": hosts_and_oversubscription,
    "failing-instance": failing_instance, "restarts-and-logs": restarts_and_logs, "signals": signals,
    "interrupt": interrupt, "stacks-and-stall": stacks_and_stall,
    "ignored-sigterm": ignored_sigterm, "stalled-ignoring-sigterm": stalled_ignoring_sigterm, "killed": killed, "fake-hosts": fake_hosts,
}

if __name__ == "__main__":
    sys.exit(main(CHECKS, sys.argv))
