#!/usr/bin/env python3
"""The fault matrix: one instance (the victim, instance 1 of 3) is killed, exits, raises or stops
while the others are before or in init(), in synchronize (untimed and timed), in
execute_on_instances or in register_communicator, under mpirun, `popdist run` and the Slurm
testbed's srun. fault_cell_main.cpp (C++) or fault_cell.py (Python) plays one cell; this driver
runs one row (a program, a launcher and a fault, every phase) and checks, for each cell:

  - the job ends, within the timeout plus a few seconds where a timeout is set;
  - its exit status (the victim's own where the launcher ends the job; the survivors' when
    only a timeout can end it);
  - what the survivors report: never that the call completed; a timeout names exactly the
    victim; init()'s watchdog says what it waited for;
  - that no process of the job is left behind.

A killed, exiting or raising victim is the launcher's to notice: those cells run without any
timeout, so they pass only if the launcher ends the job. A stopped victim is alive to the
launcher, so its cells run with POPDIST_SYNC_TIMEOUT, and popdist must end the survivors.

Usage: fault_matrix.py <mpirun|popdist-run|srun>:<kill|exit|raise|stop>[:python] <C++ cell program> <popdist> <testbed>
"""

import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "popdist_run"))
from launcher_common import CheckFailed, check, describe, main, mpi_test_environment, skip  # noqa: E402

PYTHON_CELL = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fault_cell.py")

INSTANCES = 3
VICTIM = 1
SURVIVORS = [i for i in range(INSTANCES) if i != VICTIM]
PHASES = ["before_init", "in_init", "sync", "timed_sync", "execute", "register"]
INIT_PHASES = {"before_init", "in_init"}
SYNC_TIMEOUT = 2       # POPDIST_SYNC_TIMEOUT of the stopped cells
INIT_FLOOR = 5         # init()'s watchdog waits at least this long (runtime.cpp)
WATCHDOG_STATUS = 124  # and ends the process with the `timeout` command's status
CAUGHT_ERROR = 5       # a survivor that caught a popdist error returns this (fault_cell_main.cpp)
# Where a timeout ends a stopped cell (the rest: POPDIST_SYNC_TIMEOUT). before_init's survivors
# start init() a second late (fault_cell_main.cpp).
TIMEOUT_OF_PHASE = {"before_init": 1 + INIT_FLOOR, "in_init": INIT_FLOOR, "timed_sync": 3}
# Seconds a launcher may take to start a job and to tear one down: `popdist run` ends an mpirun
# that hangs in its own teardown after 5 s (kUnreapedLimit, tools/run/supervise/attempt.cpp).
GRACE = 10
# The public call each phase's survivors are in, as their errors must name it (Python names it
# by its PopDist name).
CALL_OF_PHASE = {"sync": "synchronize", "timed_sync": "synchronize", "execute": "execute_on_instances",
                 "register": "register_communicator"}
PYTHON_NAMES = {"register_communicator": "registerCommunicator"}

# The victim's own exit status; launchers report a signal as 128 + its number. A C++ exception
# escaping main is std::terminate's SIGABRT; a Python one exits with 1 (or, after init(),
# popdist's excepthook aborts the job with 1).
VICTIM_STATUS = {"C++": {"kill": 128 + 9, "exit": 3, "raise": 128 + 6},
                 "python": {"kill": 128 + 9, "exit": 3, "raise": 1}}
SIGTERM_STATUS = 128 + 15
# A survivor still starting MPI while mpirun tears the job down can die of SIGPIPE (its PMIx client
# writes to mpirun's closed socket), and Open MPI then reports that status instead of the victim's
# (seen once in about two hundred such cells); in the same window mpirun itself was seen to die of
# SIGPIPE after reporting the victim (once in CI, a C++ victim raising before init). A shell
# reports both as 128 + 13, and so do these checks (launcher_status).
SIGPIPE_STATUS = 128 + 13
# One report per cell line. Under load mpirun was seen to pass on one survivor's line without its
# newline and another survivor's line right after it: the Python cell's print() wrote the text and
# the "\n" apart (PYTHONUNBUFFERED), and the instances share mpirun's output. The cells now write
# each line in one call; a report still ends where the next one starts as well as at the end of
# the line, so that no check depends on two instances' lines arriving whole.
REPORT = re.compile(r"(victim|survivor) (\d+): (.*?)(?=(?:victim|survivor) \d+: |$)")


@dataclass
class Cell:
    program: str  # "C++" or "python"
    launcher: str
    fault: str
    phase: str

    @property
    def name(self):
        return f"{self.program} {self.launcher} {self.fault} {self.phase}"


def launch_command(launcher, program, popdist, args):
    if launcher == "mpirun":
        return ["mpirun", "-np", str(INSTANCES), "--oversubscribe", "--bind-to", "none", *program, *args]
    if launcher == "popdist-run":
        return [popdist, "run", "--num-instances", str(INSTANCES), "--", *program, *args]
    # Two nodes (2 + 1 tasks); --kill-on-bad-exit as docs/guide/launchers.md tells srun users to.
    return ["srun", "-N2", f"-n{INSTANCES}", "--mpi=pmix", "--kill-on-bad-exit=1", "--time=1", *program, *args]


def launcher_environment(launcher, popdist, testbed):
    if launcher == "srun":
        from testbed_checks import slurm_environment
        return slurm_environment(popdist, testbed)
    env = mpi_test_environment(os.path.dirname(os.path.abspath(popdist)))
    if launcher == "mpirun":  # `popdist run` supplies these itself; bare mpirun needs them as root
        env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMPI_MCA_pml="^cm")
    return env


def reports(output):
    """{('victim'|'survivor', instance): text} from the cells' lines, whatever prefix the launcher adds."""
    found = {}
    for line in output.splitlines():
        for match in REPORT.finditer(line):
            found[(match.group(1), int(match.group(2)))] = match.group(3)
    return found


def processes_with(token):
    left = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if token.encode() in f.read():
                    left.append(pid)
        except OSError:
            pass  # gone meanwhile
    return left


def check_nothing_left(token):
    deadline = time.monotonic() + GRACE
    left = processes_with(token)
    while left and time.monotonic() < deadline:
        time.sleep(0.1)
        left = processes_with(token)
    check(not left, f"processes left behind: {left}")


def ended_by_mpi_abort(cell):
    """Whether the first instance to fail ends the job with MPI_Abort and its status, after init():
    through popdist's exit handler (a victim that exits, stopped cells' survivors returning from a
    timeout) or through popdist's Python excepthook (a Python victim that raises)."""
    aborting = ("exit", "stop", "raise") if cell.program == "python" else ("exit", "stop")
    return cell.phase not in INIT_PHASES and cell.fault in aborting


def expected_statuses(cell):
    """The launcher's exit status (a set: Open MPI's can race). Open MPI's mpirun (alone or under
    `popdist run`) reports the first process that failed: the victim, or the stopped victim's
    survivors -- or, while the survivors are still starting MPI, possibly a survivor's SIGPIPE.
    srun reports the highest status of its tasks, and --kill-on-bad-exit ends the others with
    SIGTERM, which outranks every status here -- except when MPI_Abort ended the job: then the
    abort's code."""
    if cell.fault == "stop":
        first = WATCHDOG_STATUS if cell.phase in INIT_PHASES else CAUGHT_ERROR
    else:
        first = VICTIM_STATUS[cell.program][cell.fault]
    if cell.launcher == "srun" and not ended_by_mpi_abort(cell):
        return {SIGTERM_STATUS}
    if cell.launcher != "srun" and cell.fault != "stop" and cell.phase in INIT_PHASES:
        return {first, SIGPIPE_STATUS}
    return {first}


def expected_words(cell):
    """Patterns the job's output must hold, naming what failed first: popdist's exit handler (it
    writes before it aborts), srun's account of its tasks. Open MPI's own notices ("mpirun
    noticed that process rank 1 ...") race with its teardown and are sometimes dropped: the exit
    status carries the same fact."""
    if cell.fault == "raise":  # the victim's own report: terminate's what(), or Python's traceback
        prefix = "RuntimeError: " if cell.program == "python" else "what\\(\\):  "
        return [rf"{prefix}the fault matrix's victim raises at {cell.phase}"]
    if ended_by_mpi_abort(cell):
        who, status = (str(VICTIM), 3) if cell.fault == "exit" else ("[02]", CAUGHT_ERROR)
        return [rf"popdist: instance {who} exits with status {status} without finalize\(\): ending the job \(MPI_Abort\)"]
    if cell.launcher != "srun":
        return []
    if cell.fault == "stop":  # the survivors' watchdog fails first
        return [rf"srun: error: n\d: task [02]: Exited with exit code {WATCHDOG_STATUS}"]
    fate = {"kill": "Killed", "exit": "Exited with exit code 3"}[cell.fault]
    return [rf"srun: error: n\d: task {VICTIM}: {fate}"]


def bound(cell):
    """Seconds within which the cell's job must end."""
    if cell.fault != "stop":
        return GRACE  # no timeout: the launcher must end it at once
    return TIMEOUT_OF_PHASE.get(cell.phase, SYNC_TIMEOUT) + GRACE


def check_survivors(cell, result, seen):
    check(not any(text.startswith("completed") for (who, _), text in seen.items() if who == "survivor"),
          "a survivor's call completed without the victim")
    for instance in SURVIVORS:
        text = seen.get(("survivor", instance))
        if text is not None and text.startswith("TimeoutError"):
            check(text.startswith(f"TimeoutError missing [{VICTIM}]:"), f"survivor {instance} named others: {text}")
    if cell.fault != "stop":
        return
    if cell.phase in INIT_PHASES:
        # Blocked inside MPI_Init, the survivors are ended by init()'s watchdog, which says why.
        check(f"popdist: init: waited {INIT_FLOOR} s" in result.stderr and "every instance to join MPI" in result.stderr,
              "init()'s watchdog did not say what it waited for")
        return
    # Every survivor times out by itself, naming the victim and the call it was in, before
    # anybody is torn down.
    call = CALL_OF_PHASE[cell.phase]
    if cell.program == "python":
        call = PYTHON_NAMES.get(call, call)
    for instance in SURVIVORS:
        text = seen.get(("survivor", instance), "(nothing)")
        check(text.startswith(f"TimeoutError missing [{VICTIM}]: {call} over {{0, 1, 2}}"),
              f"survivor {instance} reported {text}")


def hangs_after_its_job(pid):
    """Whether the process `pid` has children and all of them have ended unreaped: Open MPI's
    mpirun sometimes deadlocks in PMIx's server finalize after its job has ended, seen about once
    in a hundred runs here when an instance dies while the others start MPI. `popdist run` ends
    such an mpirun itself (tools/run/supervise/hung_teardown.hpp); bare mpirun hangs."""
    children = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as f:
                children += f.read().split()
        states = []
        for child in children:
            with open(f"/proc/{child}/stat") as f:
                states.append(f.read().rsplit(")", 1)[1].split()[0])
    except OSError:
        return False  # ended meanwhile
    return bool(states) and all(state == "Z" for state in states)


def launcher_status(returncode):
    """The launcher's status, a launcher killed by SIGPIPE (Python's -13) counted as the shell's
    SIGPIPE_STATUS (see there). Any other signal stays negative and matches no expected status:
    mpirun killed by SIGKILL must not pass for a victim killed by it."""
    return SIGPIPE_STATUS if returncode == -13 else returncode


def run_job(cell, argv, env):
    """Runs the cell's job; a hang fails with the output so far. Returns the CompletedProcess and
    whether bare mpirun hung in its own teardown (then it was killed; see hangs_after_its_job)."""
    deadline = time.monotonic() + bound(cell) + 30
    hung_since = None
    with subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as job:
        while True:
            try:
                stdout, stderr = job.communicate(timeout=0.5)
                return subprocess.CompletedProcess(argv, launcher_status(job.returncode), stdout, stderr), False
            except subprocess.TimeoutExpired:
                pass
            now = time.monotonic()
            if cell.launcher == "mpirun" and hangs_after_its_job(job.pid):
                hung_since = hung_since or now
                if now - hung_since > 5:
                    job.kill()
                    stdout, stderr = job.communicate()
                    return subprocess.CompletedProcess(argv, launcher_status(job.returncode), stdout, stderr), True
            else:
                hung_since = None
            if now > deadline:
                job.kill()
                stdout, stderr = job.communicate()
                raise CheckFailed(f"timed out after {bound(cell) + 30} s: {argv}\nstdout: {stdout}\nstderr: {stderr}")


def crashed_in_open_mpi_init(cell, result):
    """Whether a survivor died of SIGSEGV before the victim reached its fault, under srun. Open MPI
    4.1.4 (Debian 12) has a race there: a core dump of such a survivor shows PMPI_Init_thread ->
    ompi_mpi_init -> opal_progress (the wait for PMIx's modex fence) -> mca_btl_tcp's receive
    handler calling a null active-message callback (address 0): a TCP fragment from a faster
    instance reaches it before its PML has registered the handler. It is inside MPI_Init_thread,
    and 1 srun cell in 180 hit it in one run of these rows on a loaded machine."""
    return (cell.launcher == "srun" and ("victim", VICTIM) not in reports(result.stdout)
            and re.search(rf"srun: error: n\d: task [{''.join(map(str, SURVIVORS))}]: Segmentation fault",
                          result.stderr) is not None)


def run_cell(cell, program, popdist, env, retry_open_mpi_defect=True):
    token = f"fault-matrix-{os.getpid()}-{time.monotonic_ns()}"
    cell_env = dict(env)
    cell_env.pop("POPDIST_SYNC_TIMEOUT", None)
    if cell.fault == "stop":
        cell_env["POPDIST_SYNC_TIMEOUT"] = str(SYNC_TIMEOUT)
    argv = launch_command(cell.launcher, program, popdist, [cell.fault, cell.phase, token])
    if cell.launcher == "srun":  # the time bound is the job's, not the wait for the last job's nodes
        from testbed_checks import wait_for_idle_nodes
        wait_for_idle_nodes(env)
    start = time.monotonic()
    result, mpirun_hung = run_job(cell, argv, cell_env)
    elapsed = time.monotonic() - start
    if mpirun_hung:
        # Open MPI's defect, not popdist's: every instance had ended. Once per cell, run it again.
        check(retry_open_mpi_defect, f"{cell.name}: mpirun hung in its own teardown twice\n{describe(result)}")
        print(f"{cell.name}: mpirun hung in its own teardown after every instance had ended (Open MPI's PMIx "
              f"finalize); running the cell again")
        return run_cell(cell, program, popdist, env, retry_open_mpi_defect=False)
    if crashed_in_open_mpi_init(cell, result):
        # Open MPI's defect, not popdist's (see crashed_in_open_mpi_init). Once per cell, run it again.
        check(retry_open_mpi_defect, f"{cell.name}: a survivor crashed before the victim's fault twice\n{describe(result)}")
        print(f"{cell.name}: a survivor died of SIGSEGV inside Open MPI's MPI_Init_thread (its TCP transport's "
              f"race) before the victim's fault; running the cell again")
        return run_cell(cell, program, popdist, env, retry_open_mpi_defect=False)
    try:
        seen = reports(result.stdout)
        check(seen.get(("victim", VICTIM)) == f"{cell.fault} at {cell.phase}", "the victim did not reach its fault")
        check(elapsed < bound(cell), f"the job took {elapsed:.1f} s, more than {bound(cell)} s")
        expected = expected_statuses(cell)
        check(result.returncode in expected, f"exit status {result.returncode}, expected {sorted(expected)}")
        for words in expected_words(cell):
            check(re.search(words, result.stdout + result.stderr), f"the job's output does not say {words!r}")
        check_survivors(cell, result, seen)
        check_nothing_left(token)
    except CheckFailed as failure:
        raise CheckFailed(f"{cell.name}: {failure}\n{describe(result)}") from None
    survivors = "; ".join(f"{i}: {seen.get(('survivor', i), '(ended by the launcher)')[:60]}" for i in SURVIVORS)
    print(f"{cell.name}: exit {result.returncode} after {elapsed:.2f} s; survivors {survivors}")


def python_program(env):
    """The Python cell under this interpreter, or a skip naming what is missing."""
    probe = subprocess.run([sys.executable, "-c", "import popdist"], env=env, capture_output=True, text=True)
    if probe.returncode != 0:
        last = probe.stderr.strip().splitlines()[-1:] or [""]
        skip(f"the Python package popdist is not importable by {sys.executable} (pip install .): {last[0]}")
    return [sys.executable, PYTHON_CELL]


def row(program_name, launcher, fault, cell_program, popdist, testbed):
    env = launcher_environment(launcher, popdist, testbed)
    program = python_program(env) if program_name == "python" else [cell_program]
    failures = []
    for phase in PHASES:  # every cell runs, so that one run shows the whole row
        try:
            run_cell(Cell(program_name, launcher, fault, phase), program, popdist, env)
        except CheckFailed as failure:
            print(f"FAILED {failure}", file=sys.stderr)
            failures.append(phase)
    check(not failures, f"{program_name} {launcher} {fault}: failed at {', '.join(failures)}")


def row_check(program_name, launcher, fault):
    return lambda *args: row(program_name, launcher, fault, *args)


CHECKS = {f"{launcher}:{fault}{suffix}": row_check(program_name, launcher, fault)
          for program_name, suffix in (("C++", ""), ("python", ":python"))
          for launcher in ("mpirun", "popdist-run", "srun") for fault in ("kill", "exit", "raise", "stop")}

if __name__ == "__main__":
    if shutil.which("mpirun") is None:
        print("SKIP: mpirun (Open MPI) is not on PATH")
        sys.exit(77)
    sys.exit(main(CHECKS, sys.argv))
