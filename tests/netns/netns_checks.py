#!/usr/bin/env python3
"""popdist on hosts that are network namespaces (the testbed's netns_setup.sh / netns_rsh.sh).

Each namespace h1, h2 has its own network stack (eth0 = 10.200.0.<i>), its own /etc/hosts and,
through `unshare --uts`, its own hostname, so Open MPI sees two real hosts talking over a bridge:
the closest this machine gets to a cluster. Used by CTest as

    netns_checks.py up <testbed>                        fixture setup: take the machine-wide lock
                                                        (testbed_lock.py), clear leftovers, create h1, h2, h3
    netns_checks.py down <testbed>                      fixture cleanup: remove them, verify they are gone,
                                                        give the lock back
    netns_checks.py mpirun-topology <popdist> <testbed> mpirun -np 4 popdist topology --all --json
    netns_checks.py popdist-run <popdist> <testbed>     popdist run --host h1,h2 -- popdist topology --json

Exit status: 0 pass, 1 a check failed (every failed check is printed), 77 skipped (the message
names what is missing).
"""
import json
import os
import re
import shutil
import signal
import subprocess
import sys

HOSTS = ["h1", "h2"]
# The fixture makes one more host for the 3-host checks of cross_host_checks.py.
FIXTURE_HOSTS = ["h1", "h2", "h3"]
INSTANCES = 4
REPLICAS = 8
SKIP = 77
# popdist run's --backend in the checks across private-/tmp hosts (run_host_check).
BACKEND = "openmpi"
# Below CTest's TIMEOUT (120 s) so a hang is reported by us, with the output so far.
RUN_TIMEOUT = 90

# Open MPI inside the namespaces: the only interface besides lo is eth0 (10.200.0.x), and the
# ranks on different hosts must talk over it, so TCP is the transport for both the runtime (oob)
# and MPI (btl). pml ob1 skips the ~200 ms probe for fabrics that do not exist here;
# --oversubscribe because 4 ranks share 2 cores; yield_when_idle keeps waiting ranks from spinning.
OPEN_MPI_ARGS = ["--mca", "btl_tcp_if_include", "eth0", "--mca", "oob_tcp_if_include", "eth0",
                 "--mca", "pml", "ob1", "--mca", "mpi_yield_when_idle", "1", "--oversubscribe"]


def skip(reason):
    print(f"SKIP: {reason}")
    sys.exit(SKIP)


def fail(message):
    print(f"FAILED: {message}")
    sys.exit(1)


def check(condition, message):
    if not condition:
        fail(message)


def require_testbed(testbed):
    """Skips (77) unless the testbed scripts, `ip netns`, `unshare` and mpirun are usable."""
    if os.geteuid() != 0:
        skip("not root: creating network namespaces (`ip netns add`) needs root")
    for script in ("netns_setup.sh", "netns_rsh.sh", "on_host.sh"):
        if not os.access(os.path.join(testbed, script), os.X_OK):
            skip(f"the network-namespace testbed script {testbed}/{script} is absent or not executable")
    if shutil.which("ip") is None:
        skip("`ip` (iproute2) is not installed, so there is no `ip netns`")
    probe = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True)
    if probe.returncode != 0:
        skip(f"`ip netns list` fails (needs root / CAP_SYS_ADMIN): {probe.stderr.strip()}")
    if shutil.which("unshare") is None:
        skip("`unshare` (util-linux) is not installed; the testbed needs it for per-host hostnames")


def require_mpirun():
    if shutil.which("mpirun") is None:
        skip("mpirun (Open MPI) is not on PATH")


def namespaces():
    listing = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=True).stdout
    return {line.split()[0] for line in listing.splitlines() if line.strip()}


def run(command, env=None):
    """Runs command in its own process group; on timeout kills the whole group (mpirun, the
    agents, the orted in h2 and the ranks) so nothing is left behind."""
    print("+ " + " ".join(command), flush=True)
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                               start_new_session=True)
    try:
        out, err = process.communicate(timeout=RUN_TIMEOUT)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        out, err = process.communicate()
        print(f"TIMEOUT after {RUN_TIMEOUT} s\nstdout:\n{out}\nstderr:\n{err}")
        sys.exit(1)
    if err.strip():
        print(f"stderr:\n{err}")
    return process.returncode, out


class Checks:
    """Collects every failed check, so one run reports all that is wrong."""

    def __init__(self):
        self.failures = []

    def equal(self, what, actual, expected):
        if actual != expected:
            self.failures.append(f"{what}: got {actual!r}, expected {expected!r}")

    def finish(self, output):
        if self.failures:
            print("FAILED checks:\n  " + "\n  ".join(self.failures) + f"\noutput was:\n{output}")
            return 1
        print("all checks passed")
        return 0


def check_per_host(checks, instances_by_index, hostname_of):
    """The layout both launches must produce: 2 instances on each of h1 and h2, local indices
    0 and 1 (in instance order) on each host, 2 local instances everywhere."""
    by_host = {}
    for index in sorted(instances_by_index):
        by_host.setdefault(hostname_of(index), []).append(index)
    checks.equal("hostnames", sorted(by_host), HOSTS)
    for host, indices in sorted(by_host.items()):
        checks.equal(f"number of instances on {host}", len(indices), INSTANCES // len(HOSTS))
        checks.equal(f"local_instance_index of instances {indices} on {host}",
                     [instances_by_index[i]["local_instance_index"] for i in indices], list(range(len(indices))))
        for i in indices:
            checks.equal(f"num_local_instances of instance {i} on {host}",
                         instances_by_index[i]["num_local_instances"], len(indices))
    return by_host


def hosts_are_up():
    """True when the fixture's namespaces exist; otherwise says which are missing."""
    missing = set(HOSTS) - namespaces()
    if missing:
        print(f"the namespaces {sorted(missing)} do not exist: the fixture netns.up did not run or failed")
    return not missing


def mpirun_topology(popdist, testbed):
    require_testbed(testbed)
    require_mpirun()
    if not hosts_are_up():
        return 1
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    # The agent scrubs the environment like ssh: the ranks on h2 get only what mpirun forwards,
    # which is why the MCA settings are command-line options (forwarded to the remote orted)
    # rather than OMPI_MCA_* variables.
    command = [os.path.join(testbed, "on_host.sh"), HOSTS[0], "mpirun",
               "--mca", "plm_rsh_agent", os.path.join(testbed, "netns_rsh.sh"),
               "--host", ",".join(f"{h}:2" for h in HOSTS), "-np", str(INSTANCES),
               *OPEN_MPI_ARGS,
               popdist, "topology", "--all", "--json"]
    status, out = run(command, env)
    checks = Checks()
    checks.equal("exit status of mpirun", status, 0)
    try:
        report = json.loads(out)
    except json.JSONDecodeError as error:
        print(f"`topology --all --json` did not print one JSON object ({error}); output:\n{out}")
        return 1
    instances = report.get("instances", [])
    checks.equal("number of instances", len(instances), INSTANCES)
    checks.equal("anomalies", report.get("anomalies"), [])
    by_index = {i["instance_index"]: i for i in instances}
    checks.equal("instance indices", sorted(by_index), list(range(INSTANCES)))
    for index, instance in sorted(by_index.items()):
        checks.equal(f"launcher of instance {index}", instance["launcher"], "openmpi")
        checks.equal(f"num_instances of instance {index}", instance["num_instances"], INSTANCES)
        checks.equal(f"warnings of instance {index}", instance["warnings"], [])
        checks.equal(f"provenance of host_index of instance {index}", instance["provenance"].get("host_index"), "mpi")
    by_host = check_per_host(checks, by_index, lambda i: by_index[i]["hostname"])
    # mpirun fills h1's 2 slots first, so h1 is host 0 and h2 host 1; every instance on a host
    # must agree on its index.
    for position, host in enumerate(HOSTS):
        checks.equal(f"host_index of the instances on {host}",
                     sorted({by_index[i]["host_index"] for i in by_host.get(host, [])}), [position])
    return checks.finish(out)


TAGGED_LINE = re.compile(r"^\[\d+,(\d+)\]<stdout>:(.*)$")


def popdist_run(popdist, testbed, backend="openmpi"):
    require_testbed(testbed)
    require_mpirun()
    if backend == "hydra" and not os.path.exists("/usr/bin/mpiexec.hydra"):
        skip("/usr/bin/mpiexec.hydra is not installed: apt-get install mpich (.ci/install-deps)")
    if not hosts_are_up():
        return 1
    # No OMPI_ALLOW_RUN_AS_ROOT here: `popdist run` must supply what Open MPI needs by itself.
    # Each instance prints its hostname (set per namespace by the agent) and then its own view.
    program = ["/bin/sh", "-c", f'echo "hostname=$(hostname)" && exec "{popdist}" topology --json']
    agent = os.path.join(testbed, "netns_rsh.sh")
    # hydra: its own ssh launcher with the testbed's agent, its network interface named
    global_args = (["-launcher", "ssh", "-launcher-exec", agent, "-iface", "eth0"] if backend == "hydra"
                   else ["--mca", "plm_rsh_agent", agent, *OPEN_MPI_ARGS])
    command = [os.path.join(testbed, "on_host.sh"), HOSTS[0], popdist, "run", "--backend", backend,
               "--num-instances", str(INSTANCES), "--num-replicas", str(REPLICAS), "--host", ",".join(HOSTS),
               "--mpi-global-args", " ".join(global_args), "--", *program]
    status, out = run(command)
    checks = Checks()
    checks.equal("exit status of popdist run", status, 0)
    # `popdist run` tags every line with [job,rank]<stdout>: (under hydra, its agents do) so the
    # ranks' outputs can be separated.
    lines_by_rank = {}
    for line in out.splitlines():
        match = TAGGED_LINE.match(line)
        if match:
            lines_by_rank.setdefault(int(match.group(1)), []).append(match.group(2))
    checks.equal("ranks that printed", sorted(lines_by_rank), list(range(INSTANCES)))
    by_index, hostnames = {}, {}
    for rank, lines in sorted(lines_by_rank.items()):
        if not lines or not lines[0].startswith("hostname="):
            checks.failures.append(f"rank {rank} did not print its hostname first: {lines[:1]}")
            continue
        hostnames[rank] = lines[0].removeprefix("hostname=")
        try:
            view = json.loads("\n".join(lines[1:]))
        except json.JSONDecodeError as error:
            checks.failures.append(f"rank {rank} did not print one JSON object ({error})")
            continue
        checks.equal(f"instance_index printed by rank {rank}", view["instance_index"], rank)
        by_index[rank] = view
    if checks.failures:
        return checks.finish(out)
    per_instance = REPLICAS // INSTANCES
    for index, view in sorted(by_index.items()):
        checks.equal(f"launcher of instance {index}", view["launcher"], "mpich" if backend == "hydra" else "openmpi")
        checks.equal(f"num_instances of instance {index}", view["num_instances"], INSTANCES)
        checks.equal(f"num_local_replicas of instance {index}", view["num_local_replicas"], per_instance)
        checks.equal(f"num_total_replicas of instance {index}", view["num_total_replicas"], REPLICAS)
        checks.equal(f"replica_index_offset of instance {index}", view["replica_index_offset"], index * per_instance)
        checks.equal(f"popdist_env_set of instance {index}", view["popdist_env_set"], True)
        checks.equal(f"where local_instance_index of instance {index} came from",
                     view["provenance"].get("local_instance_index"), "POPDIST_LOCAL_INSTANCE_INDEX")
        checks.equal(f"warnings of instance {index}", view["warnings"], [])
    check_per_host(checks, by_index, lambda i: hostnames[i])
    # Instances are divided evenly and in order among the hosts: 0, 1 on h1 and 2, 3 on h2.
    checks.equal("hostnames of instances 0..3", [hostnames[i] for i in sorted(hostnames)],
                 [h for h in HOSTS for _ in range(INSTANCES // len(HOSTS))])
    return checks.finish(out)


def testbed_lock(testbed, action):
    """The testbeds' machine-wide lock (testbed_lock.py), for the run that started this fixture
    script (CTest); the exit status of `testbed_lock.py <action> netns`."""
    return subprocess.run([sys.executable, os.path.join(testbed, "testbed_lock.py"), action, "netns",
                           "--run", str(os.getppid())]).returncode


def setup(testbed):
    require_testbed(testbed)
    script = os.path.join(testbed, "netns_setup.sh")
    # Another run (another build tree) may be using the namespaces: wait for it, then take them.
    if testbed_lock(testbed, "take") != 0:
        return 1
    # Namespaces left by an interrupted run would make `ip netns add` fail: remove them first.
    subprocess.run([script, "down", str(len(FIXTURE_HOSTS))], check=False)
    result = subprocess.run([script, "up", str(len(FIXTURE_HOSTS))])
    if result.returncode != 0:
        print(f"{script} up {len(FIXTURE_HOSTS)} failed with status {result.returncode}")
        return 1
    missing = set(FIXTURE_HOSTS) - namespaces()
    if missing:
        print(f"{script} up {len(FIXTURE_HOSTS)} succeeded but the namespaces {sorted(missing)} do not exist")
        return 1
    return 0


def cleanup(testbed):
    script = os.path.join(testbed, "netns_setup.sh")
    if not os.access(script, os.X_OK) or shutil.which("ip") is None:
        return 0  # nothing can have been created
    if testbed_lock(testbed, "holds") != 0:
        print("the namespaces are not this run's (its setup did not take them): left as they are")
        return 0
    subprocess.run([script, "down", str(len(FIXTURE_HOSTS))], check=False)
    left = namespaces() & set(FIXTURE_HOSTS + ["mhsw"])
    testbed_lock(testbed, "release")
    if left:
        print(f"namespaces left behind after `{script} down {len(FIXTURE_HOSTS)}`: {sorted(left)}")
        return 1
    return 0


def run_host_check(checks, argv):
    """The main of the checks across the private-/tmp hosts (cross_host_checks.py and the others):
    `<file> <check> <popdist> <testbed> <h1,h2[,h3]> [--backend openmpi|hydra]`; exit 77 (skip)
    naming what is missing. The backend is popdist run's (BACKEND, read by private_tmp_job.py)."""
    global BACKEND
    name = os.path.basename(argv[0])
    backend_given = len(argv) == 7 and argv[5] == "--backend" and argv[6] in ("openmpi", "hydra")
    if len(argv) not in (5, 7) or argv[1] not in checks or (len(argv) == 7 and not backend_given):
        print(f"usage: {name} {'|'.join(checks)} <popdist> <testbed> <h1,h2[,h3]> [--backend openmpi|hydra]",
              file=sys.stderr)
        return 2
    popdist, testbed, hosts = argv[2], argv[3], argv[4].split(",")
    BACKEND = argv[6] if backend_given else "openmpi"
    require_testbed(testbed)
    require_mpirun()
    if BACKEND == "hydra" and not os.path.exists("/usr/bin/mpiexec.hydra"):
        skip("/usr/bin/mpiexec.hydra is not installed: apt-get install mpich (.ci/install-deps)")
    if not os.access(os.path.join(testbed, "netns_private_rsh.sh"), os.X_OK):
        skip(f"{testbed}/netns_private_rsh.sh is absent or not executable")
    if not set(hosts) <= namespaces():
        skip(f"the namespaces {hosts} are not up (the netns fixture makes them)")
    checks[argv[1]](popdist, testbed, hosts)
    print(f"{argv[1]} on {','.join(hosts)} under {BACKEND}: passed")
    return 0


def main(argv):
    usage = ("usage: netns_checks.py up|down <testbed> | "
             "netns_checks.py mpirun-topology|popdist-run|popdist-run-hydra <popdist> <testbed>")
    if len(argv) == 3 and argv[1] in ("up", "down"):
        return setup(argv[2]) if argv[1] == "up" else cleanup(argv[2])
    if len(argv) == 4 and argv[1] in ("mpirun-topology", "popdist-run", "popdist-run-hydra"):
        if argv[1] == "popdist-run-hydra":
            return popdist_run(argv[2], argv[3], backend="hydra")
        check = mpirun_topology if argv[1] == "mpirun-topology" else popdist_run
        return check(argv[2], argv[3])
    print(usage, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
