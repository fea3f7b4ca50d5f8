#!/usr/bin/env python3
"""Runs the real `torchrun` (PyTorch's elastic launcher) and checks what popdist detects in every
process it starts (design.md §3.2: RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, GROUP_RANK,
recognised by TORCHELASTIC_RUN_ID).

    torchrun_checks.py cli <popdist>   `popdist topology --json` in 3 processes
    torchrun_checks.py python          a Python script in 2 processes: topology(), the PopDist
                                       getters, and init() (no MPI launcher: a TopologyError)
    torchrun_checks.py launch <popdist>  `python -m torch.distributed.launch` (elastic in torch 2.x,
                                       so torchrun's variables) in 2 processes; the same processes
                                       with TORCHELASTIC_RUN_ID removed, as the older launcher set
                                       them: the pytorch family, and torchrun when POPDIST_LAUNCHER
                                       forces it

Exit 0 pass, 1 fail, 77 skip (torchrun or the popdist package missing). The ranks' outputs would
interleave on one stream, so every rank writes its own file rank<RANK>.json into a temporary
directory and the checks read the files."""

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

SKIP = 77

# Identity variables of every launcher family popdist knows. They are removed from torchrun's
# environment so that a test run inside an allocation or an mpirun sees torchrun alone: then no
# lower family is present and the expected set of warnings is exactly empty.
FOREIGN_LAUNCHER_PREFIXES = ("OMPI_COMM_WORLD_", "OMPI_UNIVERSE_SIZE", "PMI_", "PMIX_", "SLURM_", "MV2_", "PALS_",
                             "MPI_LOCAL", "POPDIST_", "TORCHELASTIC_")
FOREIGN_LAUNCHER_NAMES = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "GROUP_RANK", "MASTER_ADDR",
                          "MASTER_PORT")

TORCHRUN_PROVENANCE = {"launcher": "TORCHELASTIC_RUN_ID", "instance_index": "RANK", "num_instances": "WORLD_SIZE",
                       "local_instance_index": "LOCAL_RANK", "num_local_instances": "LOCAL_WORLD_SIZE",
                       "host_index": "GROUP_RANK"}

# Each rank of the Python check writes what popdist says and what init() does under torchrun.
PYTHON_RANK_SCRIPT = r'''
import json, os, sys
path = os.path.join(sys.argv[1], "rank%s.json" % os.environ["RANK"])
try:
    import popdist
except ImportError as e:
    json.dump({"import_error": "%s: %s" % (sys.executable, e)}, open(path, "w"))
    sys.exit(0)
report = {"topology": popdist.topology().to_dict(), "getInstanceIndex": popdist.getInstanceIndex(),
          "getNumInstances": popdist.getNumInstances()}
try:
    popdist.init()
    report["init"] = {"raised": None}
except Exception as e:
    report["init"] = {"raised": type(e).__name__, "is_topology_error": isinstance(e, popdist.TopologyError),
                      "message": str(e)}
json.dump(report, open(path, "w"))
'''


class CheckFailed(Exception):
    pass


def check(condition, message):
    if not condition:
        raise CheckFailed(message)


def skip(reason):
    print(f"SKIP: {reason}")
    sys.exit(SKIP)


def torchrun_environment():
    env = {name: value for name, value in os.environ.items()
           if not name.startswith(FOREIGN_LAUNCHER_PREFIXES) and name not in FOREIGN_LAUNCHER_NAMES}
    # torchrun prints a banner when it sets OMP_NUM_THREADS itself; setting it keeps stderr quiet.
    env.setdefault("OMP_NUM_THREADS", "1")
    return env


def run_torchrun(torchrun_args, out_dir, timeout=90, launcher=None):
    """Runs torchrun (or `launcher`, a command that takes torchrun's arguments); a hang is a failure
    (the launcher's process group is killed), not a stuck test."""
    argv = [*(launcher or [shutil.which("torchrun")]), "--standalone", *torchrun_args]
    try:
        result = subprocess.run(argv, env=torchrun_environment(), capture_output=True, text=True, timeout=timeout,
                                start_new_session=True)
    except subprocess.TimeoutExpired as e:
        raise CheckFailed(f"torchrun timed out after {timeout} s: {argv}\nstdout: {e.stdout}\nstderr: {e.stderr}")
    check(result.returncode == 0,
          f"{argv} exited {result.returncode}\n--- stdout\n{result.stdout}\n--- stderr\n{result.stderr}")
    return read_rank_files(out_dir)


def read_rank_files(out_dir, prefix="rank"):
    """{rank: parsed JSON} from <prefix><RANK>.json; the rank is the RANK torchrun gave the process."""
    reports = {}
    for name in sorted(os.listdir(out_dir)):
        if not name.startswith(prefix) or not name[len(prefix):len(prefix) + 1].isdigit():
            continue
        match = re.fullmatch(re.escape(prefix) + r"(\d+)\.json", name)
        check(match, f"unexpected file {name} in {out_dir}")
        with open(os.path.join(out_dir, name)) as f:
            text = f.read()
        try:
            reports[int(match.group(1))] = json.loads(text)
        except json.JSONDecodeError as e:
            raise CheckFailed(f"{name} is not JSON ({e}): {text!r}")
    return reports


def check_torchrun_topology(reports, processes, launcher="torchrun", provenance_launcher="TORCHELASTIC_RUN_ID",
                            warnings=()):
    """Every rank's topology: torchrun's identity on one node, from torchrun's variables (read by
    `launcher`, chosen because of `provenance_launcher`, with one warning per regex of `warnings`)."""
    expected_provenance = dict(TORCHRUN_PROVENANCE, launcher=provenance_launcher)
    check(sorted(reports) == list(range(processes)), f"ranks that reported: {sorted(reports)}, expected 0..{processes - 1}")
    indices = sorted(report["instance_index"] for report in reports.values())
    check(indices == list(range(processes)), f"instance indices {indices} are not a permutation of 0..{processes - 1}")
    for rank, t in reports.items():
        where = f"rank {rank}: {json.dumps(t)}"
        check(t["launcher"] == launcher, f"launcher is {t['launcher']!r}, expected {launcher!r}; {where}")
        check(t["instance_index"] == rank, f"instance_index {t['instance_index']} != RANK {rank}; {where}")
        check(t["num_instances"] == processes, f"num_instances {t['num_instances']} != {processes}; {where}")
        check(t["local_instance_index"] == t["instance_index"], f"local_instance_index != instance_index; {where}")
        check(t["num_local_instances"] == processes, f"num_local_instances != {processes}; {where}")
        check(t["host_index"] == 0, f"host_index {t['host_index']!r} != 0 (GROUP_RANK of the only node); {where}")
        # No PopRun variables: one replica per instance, numbered by instance.
        check(t["num_total_replicas"] == processes and t["replica_index_offset"] == rank,
              f"replicas are not one per instance; {where}")
        provenance = {field: t["provenance"].get(field) for field in expected_provenance}
        check(provenance == expected_provenance, f"provenance {provenance}, expected {expected_provenance}; {where}")
        # Expected warnings: only those asked for, since torchrun_environment() leaves no other
        # family present.
        check(len(t["warnings"]) == len(warnings) and
              all(re.search(regex, warning) for regex, warning in zip(warnings, t["warnings"])),
              f"warnings {t['warnings']}, expected one matching each of {list(warnings)}; {where}")


def cli_check(popdist):
    processes = 3
    with tempfile.TemporaryDirectory(prefix="popdist-torchrun-") as out_dir:
        # --no-python: torchrun starts `sh` itself; "$0"/"$1" avoid quoting the two paths.
        run_torchrun(["--nnodes", "1", "--nproc-per-node", str(processes), "--no-python", "sh", "-c",
                      '"$0" topology --json > "$1/rank$RANK.json"', popdist, out_dir], out_dir)
        check_torchrun_topology(read_rank_files(out_dir), processes)
    print(f"PASS: popdist topology --json under torchrun, {processes} processes")


def launch_check(popdist):
    """`python -m torch.distributed.launch`, which torch 2.13 still ships (deprecated)."""
    processes = 2
    try:
        import torch.distributed.launch  # noqa: F401  (only whether it exists)
    except ImportError as e:
        skip(f"torch.distributed.launch is not importable by {sys.executable}: {e}")
    # Each process reports three times: as launched, then without TORCHELASTIC_RUN_ID (what the
    # older launcher, Kubeflow and DeepSpeed set), unforced and forced to torchrun.
    script = ('"$0" topology --json > "$1/rank$RANK.json" && '
              '(unset TORCHELASTIC_RUN_ID && "$0" topology --json > "$1/plain$RANK.json" && '
              'POPDIST_LAUNCHER=torchrun "$0" topology --json > "$1/forced$RANK.json")')
    with tempfile.TemporaryDirectory(prefix="popdist-torch-launch-") as out_dir:
        # --use-env: the variables rather than a --local-rank argument (torchrun's only way).
        run_torchrun(["--use-env", "--nnodes", "1", "--nproc-per-node", str(processes), "--no-python", "sh", "-c",
                      script, popdist, out_dir], out_dir, launcher=[sys.executable, "-m", "torch.distributed.launch"])
        check_torchrun_topology(read_rank_files(out_dir, "rank"), processes)
        check_torchrun_topology(read_rank_files(out_dir, "plain"), processes, launcher="pytorch",
                                provenance_launcher="WORLD_SIZE")
        check_torchrun_topology(read_rank_files(out_dir, "forced"), processes, provenance_launcher="POPDIST_LAUNCHER",
                                warnings=[r"POPDIST_LAUNCHER=torchrun but none .*TORCHELASTIC_RUN_ID.*reading its "
                                          r"identity anyway"])
    print(f"PASS: python -m torch.distributed.launch, {processes} processes: torchrun; without TORCHELASTIC_RUN_ID "
          "pytorch, and torchrun when forced")


def python_check():
    processes = 2
    with tempfile.TemporaryDirectory(prefix="popdist-torchrun-") as out_dir:
        script = os.path.join(out_dir, "report_rank.py")
        with open(script, "w") as f:
            f.write(PYTHON_RANK_SCRIPT)
        reports_dir = os.path.join(out_dir, "ranks")
        os.mkdir(reports_dir)
        # torchrun runs the script with its own interpreter, so the import is probed there.
        reports = run_torchrun(["--nproc-per-node", str(processes), script, reports_dir], reports_dir)
    missing = [r["import_error"] for r in reports.values() if "import_error" in r]
    if missing:
        skip(f"the Python package popdist is not importable by torchrun's interpreter (pip install .): {missing[0]}")
    check_torchrun_topology({rank: r["topology"] for rank, r in reports.items()}, processes)
    for rank, r in reports.items():
        check(r["getInstanceIndex"] == rank and r["getNumInstances"] == processes,
              f"rank {rank}: getInstanceIndex() {r['getInstanceIndex']}, getNumInstances() {r['getNumInstances']}")
        # No MPI launcher: MPI_Init makes each process a singleton, so MPI's size (1) disagrees
        # with torchrun's (2) and init() must say so on every rank, naming both sizes.
        init = r["init"]
        check(init["raised"] == "TopologyError" and init["is_topology_error"],
              f"rank {rank}: init() under torchrun gave {init}, expected a TopologyError")
        message = init["message"]
        check("torchrun" in message and f"instance {rank} of {processes}" in message and "rank 0 of 1" in message,
              f"rank {rank}: init()'s message does not name the launcher, its size {processes} and MPI's size 1: "
              f"{message!r}")
    print(f"PASS: Python popdist under torchrun, {processes} processes; init() raised TopologyError on every rank")


def main(argv):
    if shutil.which("torchrun") is None:
        skip("torchrun is not on PATH (python3 -m pip install torch==2.13.0)")
    try:
        if argv[1:2] == ["cli"] and len(argv) == 3:
            cli_check(argv[2])
        elif argv[1:2] == ["launch"] and len(argv) == 3:
            launch_check(argv[2])
        elif argv[1:] == ["python"]:
            python_check()
        else:
            print(f"usage: {argv[0]} cli <popdist> | launch <popdist> | python", file=sys.stderr)
            return 2
    except CheckFailed as e:
        print(f"FAIL: {e}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
