#!/usr/bin/env python3
"""popdist under real launchers other than `popdist run`: a Slurm cluster (srun layouts, srun
--mpi=pmix with an MPI program, salloc + popdist run) and MPICH's hydra (one host and fake hosts).
Usage: testbed_checks.py <check> <popdist> <testbed>. Exit 77 (skip) names what is missing."""

import json
import os
import re
import shutil
import sys
import tempfile
import time

from launcher_common import (REPORT, check, check_views, describe, device_id, fake_hosts_agent, json_after_header,
                             main, mpi_test_environment, run, skip)

HYDRA = "/usr/bin/mpiexec.hydra"
SRUN_LABEL = re.compile(r"^\s*(\d+): ?(.*)$")
HYDRA_LABEL = re.compile(r"^\[(\d+)\] ?(.*)$")


def per_task(text, label):
    """{task: [lines]} from output whose lines carry the task number (srun --label, hydra -prepend-rank)."""
    tasks = {}
    for line in text.splitlines():
        match = label.match(line)
        check(match is not None, f"unlabelled output line {line!r}")
        tasks.setdefault(int(match.group(1)), []).append(match.group(2))
    return tasks


def check_layout_views(views, hosts_of, layout, launcher, local_replicas=1, ipus=1, node_index=True):
    """views/hosts_of: {task: json view}, {task: hostname}. layout: the expected tasks per host, e.g. [3, 1]."""
    instances = len(views)
    check(sorted(views) == list(range(instances)), f"tasks {sorted(views)}")
    hosts = sorted(set(hosts_of.values()))
    groups = {host: sorted(t for t in hosts_of if hosts_of[t] == host) for host in hosts}
    check([len(groups[h]) for h in hosts] == layout, f"tasks per host {groups}, expected the layout {layout}")
    total = instances * local_replicas
    for task, view in views.items():
        group = groups[hosts_of[task]]
        offset = task * local_replicas
        expected = {
            "launcher": launcher, "instance_index": task, "num_instances": instances,
            "local_instance_index": group.index(task), "num_local_instances": len(group),
            "num_local_replicas": local_replicas, "num_total_replicas": total, "replica_index_offset": offset,
            "ipus_per_replica": ipus, "device_id": device_id(local_replicas, total, ipus, offset),
        }
        if node_index:
            expected["host_index"] = hosts.index(hosts_of[task])
        for key, value in expected.items():
            check(view.get(key) == value, f"task {task} on {hosts_of[task]}: {key} is {view.get(key)!r}, "
                  f"expected {value!r}\n{json.dumps(view, indent=1)}")


# ---------------------------------------------------------------- Slurm

def slurm_environment(popdist, testbed):
    if not shutil.which("srun") or not os.path.exists("/usr/sbin/slurmctld"):
        skip("Slurm (srun, slurmctld) is not installed: apt-get install slurm-wlm munge (.ci/install-deps)")
    env = mpi_test_environment(os.path.dirname(os.path.abspath(popdist)))
    env["SLURM_CONF"] = os.path.join(testbed, "slurm", "slurm.conf")
    for name in [n for n in env if n.startswith("SLURM_") and n != "SLURM_CONF"] + ["POPDIST_LAUNCHER"]:
        env.pop(name, None)  # not inside anybody's allocation
    wait_for_idle_nodes(env)
    return env


def wait_for_idle_nodes(env, seconds=30):
    """Waits until every node of the testbed is idle. A step ended by killing its tasks leaves its
    nodes "completing" for a few seconds, and a job started then waits for them."""
    deadline = time.monotonic() + seconds
    while True:
        result = run(["sinfo", "-h", "-N", "-o", "%N %t"], env=env, timeout=20)
        states = [line.split()[-1] for line in result.stdout.splitlines() if line.split()]
        if result.returncode == 0 and states and all(state == "idle" for state in states):
            return
        if time.monotonic() > deadline or result.returncode != 0 or not states:
            break
        time.sleep(0.2)
    check(False, f"the Slurm testbed is not up and idle (fixture popdist_run.slurm.up): {describe(result)}")


def labelled_views(argv, env, label, timeout):
    """Runs a launcher whose output lines carry the task's label; returns each task's JSON view
    and the host its header named."""
    result = run(argv, env=env, timeout=timeout)
    check(result.returncode == 0, f"{argv}: {describe(result)}")
    views, hosts_of = {}, {}
    for task, lines in per_task(result.stdout, label).items():
        header, views[task] = json_after_header(lines)
        hosts_of[task] = header["HOST"]
    return views, hosts_of


def srun_views(argv, env):
    return labelled_views(argv, env, SRUN_LABEL, timeout=90)


def slurm_srun_layouts(popdist, testbed):
    env = slurm_environment(popdist, testbed)
    # Slurm fills n1 first: 3 tasks there, 1 on n2 (SLURM_STEP_TASKS_PER_NODE=3,1)
    views, hosts_of = srun_views(["srun", "-N2", "-n4", "--time=1", "--label", "sh", "-c", REPORT], env)
    check_layout_views(views, hosts_of, [3, 1], "slurm")
    # 2(x2), with PopRun variables for replicas and devices exported to every task
    env_replicas = dict(env, POPDIST_NUM_LOCAL_REPLICAS="2", POPDIST_NUM_IPUS_PER_REPLICA="2")
    views, hosts_of = srun_views(["srun", "-N2", "-n4", "--ntasks-per-node=2", "--time=1", "--label", "sh", "-c",
                                  REPORT], env_replicas)
    check_layout_views(views, hosts_of, [2, 2], "slurm", local_replicas=2, ipus=2)


def slurm_pmix_mpi(popdist, testbed):
    # `popdist topology --all` is an MPI program: it initializes MPI through popdist's runtime,
    # checks the job across instances and gathers every instance's view.
    env = dict(slurm_environment(popdist, testbed), POPDIST_NUM_LOCAL_REPLICAS="2")
    result = run(["srun", "-N2", "-n4", "--mpi=pmix", "--time=1", popdist, "topology", "--all", "--json"], env=env,
                 timeout=90)
    check(result.returncode == 0, describe(result))
    job = json.loads(result.stdout)
    views = {view["instance_index"]: view for view in job["instances"]}
    hosts_of = {index: view["hostname"] for index, view in views.items()}
    check_layout_views(views, hosts_of, [3, 1], "slurm", local_replicas=2)
    check([(h["hostname"], h["instances"]) for h in job["hosts"]] == [("n1", [0, 1, 2]), ("n2", [3])],
          f"hosts of the job: {job['hosts']}")
    check(job.get("anomalies") == [], f"anomalies: {job.get('anomalies')}")


def slurm_pmix_python(popdist, testbed):
    env = slurm_environment(popdist, testbed)
    probe = run([sys.executable, "-c", "import popdist"], env=env)
    if probe.returncode != 0:
        skip(f"the Python package popdist is not importable by {sys.executable} (pip install .): "
             f"{probe.stderr.strip().splitlines()[-1] if probe.stderr.strip() else ''}")
    script = ("import json, popdist; popdist.init(); "
              "print(json.dumps(dict(popdist.topology().to_dict(), hostname=__import__('socket').gethostname())))")
    env = dict(env, POPDIST_NUM_LOCAL_REPLICAS="2", POPDIST_NUM_IPUS_PER_REPLICA="2")
    result = run(["srun", "-N2", "-n4", "--ntasks-per-node=2", "--mpi=pmix", "--time=1", "--label", sys.executable,
                  "-c", script], env=env, timeout=90)
    check(result.returncode == 0, describe(result))
    views = {task: json.loads("\n".join(lines)) for task, lines in per_task(result.stdout, SRUN_LABEL).items()}
    hosts_of = {task: view["hostname"] for task, view in views.items()}
    check_layout_views(views, hosts_of, [2, 2], "slurm", local_replicas=2, ipus=2)


def slurm_salloc_popdist_run(popdist, testbed):
    # popdist run inside an allocation (3,1 tasks) uses its nodes and divides the instances evenly.
    env = slurm_environment(popdist, testbed)
    result = run(["salloc", "-N2", "-n4", "--time=1", popdist, "run", "--num-instances", "4", "--num-replicas", "8",
                  "--ipus-per-replica", "2", "--", "sh", "-c", REPORT], env=env, timeout=90)
    check_views(result, 4, 8, 2, ["n1", "n2"])


def slurm_not_a_launch(popdist, testbed):
    """Never a silent singleton: an sbatch script is a singleton whose warning names the step
    variables it did not use (SLURM_PROCID=0); the tasks of a real srun step stripped of
    SLURM_STEP_ID are no launch either, and task 1 (SLURM_PROCID=1) is an error, exit 3."""
    env = slurm_environment(popdist, testbed)
    with tempfile.TemporaryDirectory() as tmp:
        output = os.path.join(tmp, "batch.out")
        result = run(["sbatch", "-N1", "-n1", "--time=1", "--wait", "-o", output, "--wrap",
                      f"{popdist} topology --json"], env=env, timeout=90)
        check(result.returncode == 0 and os.path.exists(output), f"sbatch --wait: {describe(result)}")
        with open(output) as f:
            view = json.loads(f.read())
    check(view["launcher"] == "singleton" and len(view["warnings"]) == 1 and
          re.search(r"SLURM_STEP_ID is not.*SLURM_PROCID=0.*not used", view["warnings"][0]),
          f"the batch script's view: {json.dumps(view, indent=1)}")
    script = f'unset SLURM_STEP_ID; {popdist} topology --json; echo "STATUS=$?"'
    result = run(["srun", "-N2", "-n2", "--time=1", "--label", "sh", "-c", script], env=env, timeout=90)
    tasks = per_task(result.stdout, SRUN_LABEL)
    check(sorted(tasks) == [0, 1], f"tasks {sorted(tasks)}: {describe(result)}")
    check(tasks[0][-1] == "STATUS=0" and tasks[1] == ["STATUS=3"], f"statuses: {describe(result)}")
    view = json.loads("\n".join(tasks[0][:-1]))
    check(view["launcher"] == "singleton" and
          any(re.search(r"SLURM_PROCID=0.*not used", warning) for warning in view["warnings"]),
          f"task 0's view: {json.dumps(view, indent=1)}")
    check(re.search(r"^\s*1: popdist topology: error: .*SLURM_PROCID=1.* not the job's first.*SLURM_STEP_ID",
                    result.stderr, re.MULTILINE),
          f"task 1's error does not name SLURM_PROCID=1 and SLURM_STEP_ID: {describe(result)}")


# ---------------------------------------------------------------- MPICH hydra

def hydra_environment(popdist):
    if not os.path.exists(HYDRA):
        skip(f"{HYDRA} is not installed: apt-get install mpich (.ci/install-deps)")
    return mpi_test_environment(os.path.dirname(os.path.abspath(popdist)))


def hydra_views(argv, env):
    return labelled_views(argv, env, HYDRA_LABEL, timeout=60)


def hydra_single_host(popdist, testbed):
    env = dict(hydra_environment(popdist), POPDIST_NUM_LOCAL_REPLICAS="2", POPDIST_NUM_IPUS_PER_REPLICA="2")
    views, hosts_of = hydra_views([HYDRA, "-n", "4", "-prepend-rank", "sh", "-c", REPORT], env)
    check_layout_views(views, hosts_of, [4], "mpich", local_replicas=2, ipus=2, node_index=False)


def hydra_fake_hosts(popdist, testbed):
    env = hydra_environment(popdist)
    agent = fake_hosts_agent(testbed)
    with tempfile.TemporaryDirectory() as tmp:
        env["TMPDIR"] = tmp  # the fake hosts' directories go away with the test
        views, hosts_of = hydra_views([HYDRA, "-launcher", "ssh", "-launcher-exec", agent, "-hosts",
                                       "hostA:3,hostB:1", "-n", "4", "-prepend-rank", "sh", "-c", REPORT], env)
    check_layout_views(views, hosts_of, [3, 1], "mpich", node_index=False)
    check(sorted(set(hosts_of.values())) == ["hostA", "hostB"], f"hosts {hosts_of}")


CHECKS = {
    "slurm-srun-layouts": slurm_srun_layouts, "slurm-pmix-mpi": slurm_pmix_mpi,
    "slurm-pmix-python": slurm_pmix_python, "slurm-salloc-popdist-run": slurm_salloc_popdist_run,
    "slurm-not-a-launch": slurm_not_a_launch,
    "hydra-single-host": hydra_single_host, "hydra-fake-hosts": hydra_fake_hosts,
}

if __name__ == "__main__":
    sys.exit(main(CHECKS, sys.argv))
