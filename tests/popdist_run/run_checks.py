#!/usr/bin/env python3
"""Real runs of `popdist run` (Open MPI's mpirun underneath): every instance's view, fake hosts,
failures, signals, --dry-run and validation. Usage: run_checks.py <check> <popdist> [testbed]."""

import os
import shutil
import re
import shlex
import signal
import subprocess
import sys
import tempfile
import time

from launcher_common import (REPORT, TAG, CheckFailed, RecordingMpirun, check, check_views, describe,
                             fake_hosts_agent, json_after_header, main, mpi_test_environment, run, tagged_streams)



def popdist_env(popdist):
    return mpi_test_environment(os.path.dirname(os.path.abspath(popdist)))


def single_host(popdist, instances):
    instances = int(instances)
    result = run([popdist, "run", "--num-instances", str(instances), "--num-replicas", "8", "--ipus-per-replica", "2",
                  "--", "sh", "-c", REPORT], env=popdist_env(popdist))
    check_views(result, instances, 8, 2, [None])


def fake_hosts(popdist, testbed):
    agent = f"--mca plm_rsh_agent {fake_hosts_agent(testbed)}"
    env = popdist_env(popdist)
    with tempfile.TemporaryDirectory() as tmp:
        env["TMPDIR"] = tmp  # fake hosts' session directories go away with the test
        result = run([popdist, "run", "--num-instances", "4", "--num-replicas", "8", "--host", "hostA,hostB",
                      "--mpi-global-args", agent, "--", "sh", "-c", REPORT], env=env)
        check_views(result, 4, 8, 1, ["hostA", "hostB"])
        # the same through a hostfile with a bracket range and slots
        hostfile = os.path.join(tmp, "hosts")
        with open(hostfile, "w") as f:
            f.write("# two fake hosts\nfake[1-2] slots=2\n")
        result = run([popdist, "run", "--num-instances", "4", "--num-replicas", "4", "--hostfile", hostfile,
                      "--mpi-global-args", agent, "--", "sh", "-c", REPORT], env=env)
        check_views(result, 4, 4, 1, ["fake1", "fake2"])


def numa_aware(popdist):
    # Open MPI accepts the NUMA mapping and binding with the planned placement (also oversubscribed).
    result = run([popdist, "run", "--numa-aware", "--num-instances", "4", "--num-replicas", "8", "--", "sh", "-c",
                  REPORT], env=popdist_env(popdist))
    check_views(result, 4, 8, 1, [None])


def failing_instance(popdist):
    # Instance 1 fails at once; the others would sleep 30 s: mpirun must tear them down.
    script = 'if [ "$OMPI_COMM_WORLD_RANK" = 1 ]; then exit 3; fi; exec sleep 30'
    start = time.monotonic()
    result = run([popdist, "run", "--num-instances", "3", "--num-replicas", "3", "--", "sh", "-c", script],
                 env=popdist_env(popdist), timeout=25)
    check(result.returncode == 3, f"expected the failing instance's status 3: {describe(result)}")
    print(f"failing instance: exit {result.returncode} after {time.monotonic() - start:.2f} s")
    result = run([popdist, "run", "--num-instances", "2", "--num-replicas", "2", "--", "sh", "-c", "kill -9 $$"],
                 env=popdist_env(popdist))
    check(result.returncode != 0, f"an instance killed by a signal must fail the run: {describe(result)}")


def signal_forwarding(popdist, signum=signal.SIGTERM, ignoring=""):
    # SIGTERM to popdist run reaches mpirun, which ends every instance; nothing is left behind.
    # SIGKILL cannot be forwarded: the parent-death signal of mpirun does it (see killed()).
    token = f"{os.getpid()}.{int(time.time())}"
    proc = subprocess.Popen([popdist, "run", "--num-instances", "2", "--num-replicas", "2", "--", "sh", "-c",
                             f"{ignoring}exec sleep 29.{token.replace('.', '')}"], env=popdist_env(popdist),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and len(sleepers(token)) < 2:
            time.sleep(0.05)
        check(len(sleepers(token)) == 2, "the two instances did not start")
        proc.send_signal(signum)
        out, err = proc.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise CheckFailed(f"popdist run did not end after {signal.Signals(signum).name}")
    check(proc.returncode != 0, f"{signal.Signals(signum).name} must end the run with a failure status, got "
                                f"{proc.returncode}")
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and (sleepers(token) or mpiruns(token)):
        time.sleep(0.05)
    left = sleepers(token) + mpiruns(token)
    check(not left, f"processes left running after {signal.Signals(signum).name} to popdist run: {left}")


def killed(popdist):
    # SIGKILL to popdist run (the OOM killer, `timeout -s KILL`, a scheduler): it forwards nothing,
    # yet mpirun and every instance end -- even instances that ignore SIGTERM and SIGINT.
    signal_forwarding(popdist, signal.SIGKILL)
    signal_forwarding(popdist, signal.SIGKILL, ignoring="trap '' TERM INT; ")


def mpiruns(token):
    """The mpirun processes running the instances of `token` (their command line names it)."""
    return [pid for pid, cmdline in command_lines() if cmdline.startswith(b"mpirun\0") and
            token.replace(".", "").encode() in cmdline]


def command_lines():
    for pid in os.listdir("/proc"):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                yield int(pid), f.read()
        except (OSError, ValueError):
            pass


def sleepers(token):
    pids = []
    for pid in os.listdir("/proc"):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmdline = f.read()
                if cmdline.startswith(b"sleep\0") and token.replace(".", "").encode() in cmdline:
                    pids.append(int(pid))
        except (OSError, ValueError):
            pass
    return pids


def python_startup_directory(popdist):
    """Where `popdist run` finds its Python start-up hook: ../share/popdist/python-startup."""
    return os.path.normpath(os.path.join(os.path.dirname(os.path.realpath(popdist)), "..", "share", "popdist",
                                         "python-startup"))


def python_startup(popdist):
    """Python instances start with popdist run's hook first on PYTHONPATH (it tears torch.distributed
    down at exit, tools/agent/python_startup/sitecustomize.py); the user's PYTHONPATH and own
    sitecustomize still count, the hook's directory is off sys.path once it ran, and
    POPDIST_PYTHON_EXIT_HOOK=0 leaves PYTHONPATH as the user set it."""
    hook = python_startup_directory(popdist)
    check(os.path.exists(os.path.join(hook, "sitecustomize.py")), f"no start-up hook in {hook}")
    probe = ("import atexit, os, sys; print('probe', os.environ['PYTHONPATH'], os.environ.get('USER_SITE_RAN'), "
             "any('python-startup' in p for p in sys.path), sys.modules['sitecustomize'].__file__)")
    with tempfile.TemporaryDirectory() as user_dir:
        with open(os.path.join(user_dir, "sitecustomize.py"), "w") as f:
            f.write("import os\nos.environ['USER_SITE_RAN'] = 'yes'\n")
        # (PopRun lines forward PYTHONPATH by name themselves: the hook stays)
        for switch, options, expected_path in (("1", [], f"{hook}:{user_dir}"),
                                               ("1", ["--mpi-local-args=-x PYTHONPATH"], f"{hook}:{user_dir}"),
                                               ("0", [], user_dir)):
            env = dict(popdist_env(popdist), PYTHONPATH=user_dir, POPDIST_PYTHON_EXIT_HOOK=switch)
            result = run([popdist, "run", "--num-instances", "2", *options, sys.executable, "-c", probe], env=env)
            check(result.returncode == 0, describe(result))
            probes = [line.split("probe ", 1)[1].split() for line in result.stdout.splitlines() if "probe " in line]
            check(len(probes) == 2, describe(result))
            for path, user_site_ran, hook_on_sys_path, sitecustomize in probes:
                check(path == expected_path, f"hook {switch}: PYTHONPATH {path}, expected {expected_path}")
                check(user_site_ran == "yes" and sitecustomize == os.path.join(user_dir, "sitecustomize.py"),
                      f"hook {switch}: the user's sitecustomize did not run: {describe(result)}")
                check(hook_on_sys_path == "False", f"hook {switch}: the hook's directory stayed on sys.path")
    print(f"the hook ({hook}) goes first on PYTHONPATH, the user's sitecustomize still runs, =0 turns it off")


def dry_run(popdist):
    env = popdist_env(popdist)
    for name in ("LD_LIBRARY_PATH", "PYTHONPATH", "POPDIST_LOG_LEVEL", "POPDIST_SYNC_TIMEOUT", "OMP_NUM_THREADS"):
        env.pop(name, None)
    root = ["--allow-run-as-root"] if os.geteuid() == 0 else []
    job_dir = os.path.join(env.get("TMPDIR") or "/tmp", "popdist-run-XXXXXX")  # made when a job starts
    result = run([popdist, "run", "--dry-run", "--num-instances", "2", "--num-replicas", "4",
                  "--ipus-per-replica", "2", "--host", "a:1,b:1", "--mpi-global-args", "--mca btl self,tcp",
                  "--mpi-local-args", "-x MYVAR=1", "--master-addr", "10.0.0.5", "--master-port", "29500",
                  "--", "echo", "it's", "a b"], env=env)
    check(result.returncode == 0, describe(result))
    lines = result.stdout.splitlines()

    def torchrun(i):  # torchrun's variables, after the POPDIST_* ones
        return (f"RANK={i} WORLD_SIZE=2 LOCAL_RANK=0 LOCAL_WORLD_SIZE=1 GROUP_RANK={i} GROUP_WORLD_SIZE=2 "
                "MASTER_ADDR=10.0.0.5 MASTER_PORT=29500")

    # one app context for both instances: each agent derives its own variables from its rank
    # the channel: this machine's address towards the hosts (it depends on the machine), a port made at run time
    channel = re.search(r"POPDIST_CHANNEL_ADDRESS=([^:\s']+):<port>", lines[0] if lines else "")
    check(channel is not None, f"the channel's address in the dry-run command: {result.stdout}")
    # the channel's key: derived on each host from the user's key file; only the job's nonce and the
    # key's id travel (tools/channel/job_key.hpp), made at run time
    context = ["-np", "2", "-x", "PATH", "-x", "PYTHONPATH", "-x", "POPDIST_CHANNEL_TAG",
               "-x", "MASTER_ADDR=10.0.0.5", "-x", "MASTER_PORT=29500",
               "-x", "POPDIST_RESTART_COUNT=0", "-x", "TORCHELASTIC_RESTART_COUNT=0",
               "-x", "TORCHELASTIC_MAX_RESTARTS=0", "-x", "TORCHELASTIC_RUN_ID=popdist-run-29500",
               "-x", "TORCHELASTIC_USE_AGENT_STORE=False", "-x", f"POPDIST_RUN_JOB_DIR={job_dir}",
               "-x", "POPDIST_CHANNEL_NONCE=<nonce>", "-x", "POPDIST_CHANNEL_KEY_ID=<key id>",
               "-x", f"POPDIST_CHANNEL_ADDRESS={channel.group(1)}:<port>",
               "-x", "POPDIST_HOST_TIMEOUT_MS=10000", "-x", "POPDIST_GRACE_PERIOD=1", "-x", "MYVAR=1",
               os.path.realpath(popdist), "_instance", "--plan", "2,4,2,2", "--job-dir", job_dir, "--omp-threads",
               "--", "echo", "it's", "a b"]
    expected = ["mpirun", *root, "--host", "a:1,b:1", "--map-by", "ppr:1:node", "--tag-output", "--bind-to", "none",
                "--mca", "odls_base_sigkill_timeout", "1", "--mca", "btl", "self,tcp", *context]
    check(lines[0] == shlex.join(expected).replace("'\"'\"'", "'\\''"),
          f"dry-run command:\n{lines[0]}\nexpected:\n{shlex.join(expected)}")
    check(shlex.split(lines[0]) == expected, "the printed command does not split back into the same words")
    check(lines[1:] == [
        "instance 0 on a: POPDIST_NUM_TOTAL_REPLICAS=4 POPDIST_NUM_LOCAL_REPLICAS=2 POPDIST_REPLICA_INDEX_OFFSET=0 "
        "POPDIST_NUM_IPUS_PER_REPLICA=2 POPDIST_UNIFORM_REPLICAS_PER_INSTANCE=1 POPDIST_LOCAL_INSTANCE_INDEX=0 "
        + torchrun(0),
        "instance 1 on b: POPDIST_NUM_TOTAL_REPLICAS=4 POPDIST_NUM_LOCAL_REPLICAS=2 POPDIST_REPLICA_INDEX_OFFSET=2 "
        "POPDIST_NUM_IPUS_PER_REPLICA=2 POPDIST_UNIFORM_REPLICAS_PER_INSTANCE=1 POPDIST_LOCAL_INSTANCE_INDEX=0 "
        + torchrun(1)],
        f"per-instance variables:\n{result.stdout}")
    # a quiet dry run says on stderr only which backend the command is for
    check(re.fullmatch(r"popdist run: backend openmpi: Open MPI \S+ at \S+/mpirun\n", result.stderr),
          f"a quiet dry run prints only the backend on stderr: {result.stderr}")

    # Single host: the printed command, pasted into a shell, runs the job just like popdist run.
    args = ["--num-instances", "2", "--num-replicas", "2", "--", "sh", "-c", "echo \"$1 $POPDIST_REPLICA_INDEX_OFFSET\"",
            "sh", "it's"]
    printed = run([popdist, "run", "--dry-run", *args], env=env)
    check(printed.returncode == 0, describe(printed))
    command = printed.stdout.splitlines()[0]
    check(" --mca pml ^cm " in command, f"single host: expected --mca pml ^cm in {command}")
    pasted = run(["sh", "-c", command], env=env)
    direct = run([popdist, "run", *args], env=env)
    outputs = [sorted(line.split(":", 1)[1] for line in r.stdout.splitlines()) for r in (pasted, direct)]
    check(pasted.returncode == 0 and direct.returncode == 0, f"{describe(pasted)}\n{describe(direct)}")
    check(outputs[0] == outputs[1] == ["it's 0", "it's 1"], f"pasted {outputs[0]} vs direct {outputs[1]}")
    dry_run_prints_what_runs(popdist, env)


def dry_run_prints_what_runs(popdist, env):
    """The printed command is the one that runs, but for the job directory's name, made at run time
    (a stand-in mpirun records its argv), on one host and on two."""
    with RecordingMpirun(env) as mpirun:
        env = dict(mpirun.env, TMPDIR=mpirun.directory)
        for hosts in ([], ["--host", "a:1,b:1"]):
            args = ["run", *hosts, "--num-instances", "2", "--master-port", "29500", "--", "prog", "arg"]
            dry = run([popdist, *args[:1], "--dry-run", *args[1:]], env=env)
            ran = run([popdist, *args], env=env)
            check(dry.returncode == 0 and ran.returncode == 0, f"{describe(dry)}\n{describe(ran)}")
            words = mpirun.words()
            printed = shlex.split(dry.stdout.splitlines()[0])[1:]
            made = re.sub(r"popdist-run-\w{6}", "popdist-run-XXXXXX", "\n".join(words))
            made = re.sub(r"(POPDIST_CHANNEL_ADDRESS=.*):\d+", r"\1:<port>", made)
            made = re.sub(r"POPDIST_CHANNEL_NONCE=[0-9a-f]{64}", "POPDIST_CHANNEL_NONCE=<nonce>", made)
            made = re.sub(r"POPDIST_CHANNEL_KEY_ID=[0-9a-f]{16}", "POPDIST_CHANNEL_KEY_ID=<key id>", made).splitlines()
            check(printed == made, f"{hosts}: --dry-run printed\n{printed}\nbut ran\n{words}")


def verbose(popdist):
    env = popdist_env(popdist)
    result = run([popdist, "run", "-v", "--num-instances", "2", "--num-replicas", "2", "--", "true"], env=env)
    check(result.returncode == 0, describe(result))
    check("added --mca pml ^cm" in result.stderr, f"-v must say it added pml ^cm: {result.stderr}")
    result = run([popdist, "run", "-v", "--num-instances", "2", "--num-replicas", "2",
                  "--mpi-global-args", "--mca pml ob1", "--", "true"], env=env)
    check(result.returncode == 0, describe(result))
    check("not adding --mca pml ^cm" in result.stderr and "--mca pml" in result.stderr, result.stderr)
    env["OMPI_MCA_pml"] = "ob1"
    result = run([popdist, "run", "-vv", "--", "true"], env=env)
    check(result.returncode == 0, describe(result))
    check("OMPI_MCA_pml=ob1 is set: not adding" in result.stderr, result.stderr)
    printed = [line for line in result.stderr.splitlines() if line.startswith("mpirun ")]
    check(len(printed) == 1 and "pml" not in printed[0], f"-vv prints the command, without pml: {result.stderr}")


def only_output(popdist):
    script = 'echo "out-$OMPI_COMM_WORLD_RANK"; echo "err-$OMPI_COMM_WORLD_RANK" >&2'
    result = run([popdist, "run", "--num-instances", "3", "--num-replicas", "3", "--only-output-from-instance", "1",
                  "--", "sh", "-c", script], env=popdist_env(popdist))
    check(result.returncode == 0, describe(result))
    check("out-1" in result.stdout and "out-0" not in result.stdout and "out-2" not in result.stdout, describe(result))
    check("err-1" in result.stderr and "err-0" not in result.stderr and "err-2" not in result.stderr, describe(result))
    check("hides the output of every other instance" in result.stderr, "the warning is missing: " + result.stderr)


def print_topology(popdist):
    result = run([popdist, "run", "--print-topology", "--num-instances", "2", "--num-replicas", "4",
                  "--ipus-per-replica", "2", "--", "true"], env=popdist_env(popdist))
    check(result.returncode == 0, describe(result))
    rows = {line.split("|")[1].strip(): [c.strip() for c in line.split("|")[2:-1]]
            for line in result.stdout.splitlines() if line.startswith("| ") and "topology" not in line}
    check(rows == {"hosts": ["localhost"], "instances": ["0", "1"], "replicas": ["0", "1", "2", "3"],
                   "devices": ["0-1", "2-3", "4-5", "6-7"]}, f"table rows {rows}\n{result.stdout}")


VALIDATION_CASES = [
    (["--num-instances", "3", "--num-replicas", "8", "--", "true"], 2,
     "--num-replicas 8 is not divisible by --num-instances 3"),
    (["--num-instances", "4", "--num-replicas", "4", "--host", "a,b,c", "--", "true"], 2,
     "--num-instances 4 is not divisible by the 3 hosts of --host (a, b, c)"),
    (["--num-instances", "0", "--", "true"], 2, "--num-instances: '0' is out of range; expected a whole number from 1"),
    (["--num-instances", "4", "--num-replicas", "1", "--", "true"], 2,
     "--num-replicas 1 is not divisible by --num-instances 4"),
    (["--num-replicas", "-1", "--", "true"], 2, "--num-replicas: '-1' is not a whole number"),
    (["--ipus-per-replica", "0", "--", "true"], 2, "--ipus-per-replica: '0' is out of range"),
    (["--bogus", "--", "true"], 2, "'--bogus' is not an option of popdist run"),
    ([], 2, "no program to run"),
    (["--num-instances", "2"], 2, "no program to run"),
    (["--print-topology", "python3", "true"], 2, "--print-topology: 'python3' is not a boolean"),
    (["--import-config", "p.cfg", "true"], 2, "--import-config: 'p.cfg': refused"),
    (["--num-ilds", "3", "--num-replicas", "4", "true"], 2, "do not divide into 3 IPU-Link domains"),
    (["--host", "n[1-", "--", "true"], 2, "--host 'n[1-': '[' without a closing ']'"),
    (["--host", "a:0", "--", "true"], 2, "slots '0' in 'a:0' must be a whole number >= 1"),
    (["--host", "a,a", "--num-instances", "2", "--num-replicas", "2", "--", "true"], 2, "host 'a' is listed more"),
    (["--hostfile", "/nonexistent/hosts", "--", "true"], 2, "--hostfile: cannot read '/nonexistent/hosts'"),
    (["--host", "a", "--hostfile", "/etc/hostname", "--", "true"], 2, "--hostfile"),
    (["--num-instances", "2", "--num-replicas", "2", "--only-output-from-instance", "2", "--", "true"], 2,
     "--only-output-from-instance 2: out of range; the instances are 0..1"),
    (["--mpi-global-args", "-x 'A", "--", "true"], 2, "--mpi-global-args '-x \\'A': unterminated single quote"),
    (["--num-replicas", "3", "--", "true"], 2, "3 replicas x 1 IPUs per replica = 3 IPUs, which is not 1 or a power"),
]


def validation(popdist):
    env = popdist_env(popdist)
    with tempfile.TemporaryDirectory() as tmp:
        marker = os.path.join(tmp, "started")
        for args, status, message in VALIDATION_CASES:
            # the program would leave a marker: validation must fail before anything starts
            argv = [popdist, "run", *args]
            if argv[-1] == "true":
                argv[-1:] = ["touch", marker]
            result = run(argv, env=env)
            check(result.returncode == status and message in result.stderr,
                  f"{argv}: expected exit {status} and {message!r}\n{describe(result)}")
            check(not os.path.exists(marker), f"{argv}: the program started despite the error")
        # no launcher on PATH: name what was looked for, where, and what to do
        env_no_mpi = dict(env, PATH=tmp)
        result = run([popdist, "run", "--", "touch", marker], env=env_no_mpi)
        check(result.returncode == 127 and f"looked for mpirun, mpiexec, srun on PATH ({tmp}); found none" in result.stderr
              and "install Open MPI" in result.stderr, describe(result))
        check(not os.path.exists(marker), "the program started without mpirun")
        # An mpirun popdist does not know, then an Open MPI mpiexec: auto says what it passed over.
        with open(os.path.join(tmp, "mpirun"), "w") as fake:
            fake.write("#!/bin/sh\necho 'Frobnicator launcher 9.9'\n")
        os.chmod(os.path.join(tmp, "mpirun"), 0o755)
        os.symlink(shutil.which("mpiexec", path=env["PATH"]), os.path.join(tmp, "mpiexec"))
        result = run([popdist, "run", "--dry-run", "--num-instances", "2", "true"], env=env_no_mpi)
        check(result.returncode == 0 and f"passed over {tmp}/mpirun says 'Frobnicator launcher 9.9' (no launcher "
              f"popdist run knows); using Open MPI" in result.stderr and result.stdout.startswith("mpiexec "),
              describe(result))


def ignored_warning(popdist):
    """The issue's line: PopRun options without effect here are named on one warning line,
    printed once, before the program starts (its first stderr line comes after)."""
    with tempfile.TemporaryDirectory() as tmp:
        result = run([popdist, "run", "--num-instances", "2", "--update-partition=yes", "--vipu-server-timeout", "300",
                      "--offline-mode=yes", "--executable-cache-path", tmp, "--", "sh", "-c",
                      'echo "started $POPDIST_EXECUTABLE_CACHE_PATH" >&2'], env=popdist_env(popdist))
        check(result.returncode == 0, describe(result))
        lines = result.stderr.splitlines()
        warnings = [i for i, line in enumerate(lines) if "warning: ignored PopRun options" in line]
        started = [i for i, line in enumerate(lines) if f"started {tmp}" in line]
        check(len(warnings) == 1 and len(started) == 2, describe(result))
        check(warnings[0] < min(started), f"the warning must come before the job starts: {describe(result)}")
        for name in ["--update-partition 'yes'", "--vipu-server-timeout '300'", "--offline-mode 'yes'"]:
            check(name in lines[warnings[0]], f"{name} is not named: {describe(result)}")
        check("--executable-cache-path" not in lines[warnings[0]], f"a kept option is not ignored: {describe(result)}")


def poprun_corpus(popdist, testbed):
    """PopRun lines of the shapes of public repositories (poprun_corpus.py), run verbatim by bash
    with `poprun` being `popdist run`, on the testbed's fake hosts: each must run with the planned
    topology, print one warning line naming exactly its ignored options, and give the variables
    its kept options promise."""
    from poprun_corpus import CORPUS
    here = os.path.dirname(os.path.abspath(__file__))
    env = popdist_env(popdist)
    env["OMPI_MCA_plm_rsh_agent"] = fake_hosts_agent(testbed)  # the lines stay as written
    with tempfile.TemporaryDirectory() as tmp:
        env["TMPDIR"] = tmp
        wrapper = os.path.join(tmp, "bin", "poprun")
        os.makedirs(os.path.dirname(wrapper))
        with open(wrapper, "w") as f:
            f.write(f'#!/bin/sh\nexec {shlex.quote(os.path.abspath(popdist))} run "$@"\n')
        os.chmod(wrapper, 0o755)
        env["PATH"] = os.path.dirname(wrapper) + os.pathsep + env["PATH"]
        env.update(PRINTER=os.path.join(here, "topology_printer.py"), HOSTS="hostA,hostB", NETMASK="127.0.0.0/8",
                   VIPU_SERVER_HOST="10.1.3.101", PARTITION="pod64-partition", ALLOCATION="c64",
                   CACHE=os.path.join(tmp, "exec_cache"))
        for line, job in CORPUS:
            result = run(["bash", "-c", line], env=env, timeout=90)
            what = f"{line}\n{describe(result)}"
            check(result.returncode == 0, what)
            warnings = [l for l in result.stderr.splitlines() if "warning: ignored PopRun options" in l]
            check(len(warnings) == (1 if job["ignored"] else 0), f"expected one ignored-options warning: {what}")
            named = re.findall(r"(--[a-z-]+) '", warnings[0]) if warnings else []
            check(named == job["ignored"], f"the warning names {named}, expected {job['ignored']}: {what}")
            check("error:" not in result.stderr, what)
            # --print-topology's box comes before the instances' (tagged) output
            start = TAG.search(result.stdout) if job["instances"] > 1 else re.search("^HOST=", result.stdout, re.M)
            check(start is not None, f"no output from the instances: {what}")
            table, output = result.stdout[:start.start()], result.stdout[start.start():]
            check(("| hosts" in table) == ("--print-topology" in line), f"topology table: {what}")
            hosts = job["hosts"] or [None]
            instances = job["instances"]
            if "only" in job:
                ranks = tagged_streams(output)
                check(sorted(ranks) == [job["only"]], f"only instance {job['only']} should print: {what}")
            elif instances == 1:  # one instance: its output is not tagged
                ranks = {0: output.splitlines()}
                header, view = json_after_header(ranks[0])
                check((view["num_instances"], view["num_total_replicas"], view["ipus_per_replica"]) ==
                      (1, job["replicas"], job["ipus"]), f"{view}: {what}")
            else:
                check_views(subprocess.CompletedProcess(result.args, 0, output, result.stderr), instances,
                            job["replicas"], job["ipus"], hosts)
                ranks = tagged_streams(output)
            for rank, lines in ranks.items():
                header, _ = json_after_header(lines)
                check(header["CACHE"] == (env["CACHE"] if job.get("cache") else "unset"), f"{header}: {what}")
                target = f'{{"ipuLinkDomainSize":"{job["ild"]}"}}' if "ild" in job else "unset"
                check(header["TARGET"] == target, f"instance {rank}: TARGET {header['TARGET']}: {what}")
        print(f"{len(CORPUS)} PopRun lines ran")


# Each line of the program's output is written in pieces: Python's print under PYTHONUNBUFFERED=1
# (the text, then the newline), and a shell printf of half a line, a pause, the other half.
PIECEWISE = ("import sys, time\n"
             "for i in range(3):\n"
             "    print('py-line', i, 'of', sys.argv[1])\n"
             "    sys.stdout.write('half-'); sys.stdout.flush(); time.sleep(0.05); print('done')\n"
             "    print('err-line', i, file=sys.stderr)\n"
             "sys.stdout.write('no newline at the end')\n")


def whole_lines(popdist):
    """Every line of every instance carries exactly one Open MPI tag, in every output mode."""
    env = dict(popdist_env(popdist), PYTHONUNBUFFERED="1")
    tag = r"\[\d+,\d+\]<std(?:out|err)>:"

    one_tag = re.compile(f"^{tag}(?!.*{tag})")
    for mode in ([], ["--only-output-from-instance", "1"], ["--mpi-global-args=--tag-output"]):
        result = run([popdist, "run", "--num-instances", "3", "--num-replicas", "3", *mode,
                      sys.executable, "-c", PIECEWISE, "x"], env=env)
        check(result.returncode == 0, describe(result))
        lines = [line for line in (result.stdout + result.stderr).splitlines() if not line.startswith("popdist run:")]
        bad = [line for line in lines if not one_tag.search(line)]
        check(not bad, f"{mode}: lines without exactly one tag: {bad}\n{describe(result)}")
        visible = 1 if mode and mode[0] == "--only-output-from-instance" else 3
        check(sum("half-done" in line for line in lines) == 3 * visible, f"{mode}: {describe(result)}")
        check(sum(line.endswith("no newline at the end") for line in lines) == visible, f"{mode}: {describe(result)}")
        print(f"{mode or 'default'}: {len(lines)} lines, one tag each")
    # the program's exit status and signals still come through
    result = run([popdist, "run", "--num-instances", "2", "sh", "-c", "exit 5"], env=env)
    check(result.returncode == 5, f"status 5 expected: {describe(result)}")
    # and the agent alone (no channel: started by hand) ends as its program did, its job
    # directory made on this host when missing (a node-local /tmp), private, and removed at its end
    with tempfile.TemporaryDirectory() as directory:
        job_dir = os.path.join(directory, "missing-tmpdir", "popdist-run-here")
        for program, returned in ((["sh", "-c", "exit 5"], 5), (["sh", "-c", "kill -KILL $$"], -9), (["true"], 0),
                                  (["sh", "-c", 'stat -c %a "$POPDIST_RUN_JOB_DIR"; ls -A "$POPDIST_RUN_JOB_DIR"'], 0)):
            result = run([popdist, "_instance", "--plan", "1,1,1,1", "--job-dir", job_dir, "--", *program],
                         env=dict(env, OMPI_COMM_WORLD_RANK="0"))
            check(result.returncode == returned, f"{program}: {returned} expected: {describe(result)}")
            check(os.listdir(directory) == [], f"the agent left {os.listdir(directory)} in {directory}")
        check(result.stdout.split() == ["700", ".made-by-agents", "instance0.agent"],
              f"a private directory, marked as the agents', expected: {describe(result)}")
        # a directory the agent did not make stays, with what others put there
        os.makedirs(job_dir)
        open(os.path.join(job_dir, "popdist-run.pid"), "w").close()
        result = run([popdist, "_instance", "--plan", "1,1,1,1", "--job-dir", job_dir, "--", "true"],
                     env=dict(env, OMPI_COMM_WORLD_RANK="0"))
        check(os.listdir(job_dir) == ["popdist-run.pid"], f"{job_dir} was changed: {os.listdir(job_dir)}")
        print("the agent alone ended with 5, SIGKILL and 0, and removed only what it made")


def unreachable_channel(popdist):
    """Agents told of a channel on a closed port end promptly (not after the client's 30 s
    connect_timeout), as their programs did, each with one warning: two agents of one host (the
    relay that cannot reach popdist run, and the one that waits for its Welcome)."""
    import socket
    with socket.socket() as probe:  # a port nobody listens on once this socket is closed
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = dict(popdist_env(popdist), POPDIST_CHANNEL_ADDRESS=f"127.0.0.1:{port}",
               POPDIST_CHANNEL_SECRET="ab" * 32, POPDIST_CHANNEL_NONCE="cd" * 32, POPDIST_CHANNEL_TAG="ef" * 8,
               POPDIST_CHANNEL_HOST=f"dead-port-{os.getpid()}")
    with tempfile.TemporaryDirectory() as job_dir:
        started = time.monotonic()
        agents = [subprocess.Popen([popdist, "_instance", "--plan", "2,2,1,1", "--job-dir", job_dir, "--",
                                    "sh", "-c", f"sleep 0.2; exit {3 + rank}"],
                                   env=dict(env, OMPI_COMM_WORLD_RANK=str(rank)), stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True) for rank in range(2)]
        results = [agent.communicate(timeout=60) + (agent.returncode, time.monotonic() - started)
                   for agent in agents]
    for rank, (out, err, status, seconds) in enumerate(results):
        print(f"instance {rank}: status {status} after {seconds:.2f} s; stderr: {err.strip()}")
        check(status == 3 + rank, f"instance {rank}: its program's status {3 + rank} expected, got {status}")
        # 0.2 s of program + at most 1 s of waiting for the channel, with room for a loaded machine
        check(seconds < 4, f"instance {rank} took {seconds:.1f} s to end: the dead channel held it")
        warnings = err.count("no channel to popdist run")
        check(warnings == 1, f"instance {rank}: one warning expected, got {warnings}:\n{err}")
        check(f"instance {rank}: no channel" in err, f"instance {rank}'s warning does not name it:\n{err}")


def verbatim_program(popdist):
    """The program's words reach it as typed, ':' included (mpirun would read a bare ':' as the start
    of another app context and run what follows)."""
    env = popdist_env(popdist)
    with tempfile.TemporaryDirectory() as directory:
        marker = os.path.join(directory, "INJECTED")
        words = ["x", ":", "-np", "1", "/usr/bin/touch", marker, ":", "a:b", "", "$HOME"]
        program = [sys.executable, "-c", "import sys; print(repr(sys.argv[1:]))", *words]
        for mode in ([], ["--only-output-from-instance", "0"], ["--num-instances", "1"]):
            result = run([popdist, "run", "--num-instances", "2", *mode, "--", *program], env=env)
            check(result.returncode == 0, f"{mode}: {describe(result)}")
            printed = [re.sub(r"^\[\d+,\d+\]<stdout>:", "", line) for line in result.stdout.splitlines()]
            expected = 1 if mode else 2
            check(printed == [repr(words)] * expected, f"{mode}: expected {expected} x {words}: {describe(result)}")
            check(not os.path.exists(marker), f"{mode}: a ':' in the program's arguments started another program")
        print("':' among the program's arguments reaches it verbatim, with and without tags or silencing")


# Draws progress in place, both ways (C's "text\r", tqdm's "\rtext"), and after each update waits
# until the reader has seen it (a file named after the update): a relay that held an update until
# the line ends would leave the program waiting (it gives up after 60 s, failing the job).
PROGRESS = r"""
import os, sys, time
acks = sys.argv[1]
def draw(text, name):
    os.write(1, text.encode())
    deadline = time.monotonic() + 60
    while not os.path.exists(os.path.join(acks, name)):
        if time.monotonic() > deadline:
            sys.exit(f"the reader never saw {text!r}")
        time.sleep(0.02)
for k in (1, 2):
    draw(f"c-style {k}/2\r", f"c{k}")
for k in (1, 2):
    draw(f"\rtqdm-style {k}/2", f"t{k}")
os.write(1, b"\ndone\n")
"""


def progress(popdist):
    """Carriage-return progress is passed on live: each update reaches the terminal while the program waits,
    tagged once, never glued to a tag mid-update (a reader that acknowledges what it saw)."""
    tag = rb"\[\d+,0\]<stdout>:"
    updates = [(rb"c-style 1/2\r", "c1"), (rb"c-style 2/2\r", "c2"), (rb"tqdm-style 1/2", "t1"),
               (rb"tqdm-style 2/2", "t2")]
    with tempfile.TemporaryDirectory() as acks:
        process = subprocess.Popen([popdist, "run", "--num-instances", "1", "--mpi-global-args", "--tag-output", "--",
                                    sys.executable, "-c", PROGRESS, acks], stdout=subprocess.PIPE,
                                   env=popdist_env(popdist), start_new_session=True)
        seen = b""
        try:
            for pattern, name in updates:
                while not re.search(tag + pattern, seen):
                    chunk = os.read(process.stdout.fileno(), 4096)
                    check(chunk, f"output ended before {pattern!r} was seen: {seen!r}")
                    seen += chunk
                open(os.path.join(acks, name), "w").close()
            seen += process.stdout.read()
            status = process.wait(timeout=60)
        finally:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
    check(status == 0, f"the program did not see its updates acknowledged: exit {status}, output {seen!r}")
    for pattern, _ in updates:
        text = pattern.replace(b"\\r", b"").replace(b"\r", b"")
        check(len(re.findall(tag + re.escape(text), seen)) == 1 and seen.count(text) == 1,
              f"{text!r} must appear once, right after one tag: {seen!r}")
    check(re.search(tag + rb"done\n", seen), f"the last line: {seen!r}")
    print(f"4 updates seen live, one tag each: {seen!r}")


def slurm_dead_instance(popdist, testbed):
    """Inside an allocation, an instance that dies before init() ends the whole job at once: mpirun
    stops the others (which wait for it in MPI_Init), and Open MPI's daemons run under srun
    --kill-on-bad-exit. Nothing is left behind."""
    from testbed_checks import slurm_environment
    env = slurm_environment(popdist, testbed)
    token = f"{os.getpid()}{int(time.time())}"
    script = (f'if [ "$OMPI_COMM_WORLD_RANK" = 1 ]; then exit 3; fi; '
              f'exec {shlex.quote(sys.executable)} -c "import popdist; popdist.init(); import time; time.sleep(29.{token})"')
    start = time.monotonic()
    result = run(["salloc", "-N2", "-n2", "--time=1", popdist, "run", "--num-instances", "2", "--", "sh", "-c", script],
                 env=env, timeout=90)
    elapsed = time.monotonic() - start
    check(result.returncode != 0, f"a dead instance must fail the job: {describe(result)}")
    check(elapsed < 45, f"the job took {elapsed:.1f} s to end after instance 1 died")
    deadline = time.monotonic() + 10
    left = []
    while time.monotonic() < deadline:
        left = [pid for pid in os.listdir("/proc") if pid.isdigit() and token.encode() in _cmdline(pid)]
        if not left:
            break
        time.sleep(0.1)
    check(not left, f"processes left behind: {left}")
    print(f"dead instance inside Slurm: exit {result.returncode} after {elapsed:.2f} s")


def _cmdline(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read()
    except OSError:
        return b""


CHECKS = {
    "single-host": single_host, "fake-hosts": fake_hosts, "poprun-corpus": poprun_corpus,
    "ignored-warning": ignored_warning, "numa-aware": numa_aware, "failing-instance": failing_instance,
    "signal-forwarding": signal_forwarding, "killed": killed, "dry-run": dry_run, "verbose": verbose, "only-output": only_output,
    "print-topology": print_topology, "validation": validation, "whole-lines": whole_lines,
    "verbatim-program": verbatim_program, "progress": progress, "python-startup": python_startup,
    "slurm-dead-instance": slurm_dead_instance, "unreachable-channel": unreachable_channel,
}

if __name__ == "__main__":
    sys.exit(main(CHECKS, sys.argv))
