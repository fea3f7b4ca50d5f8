#!/usr/bin/env python3
"""The bad-argument matrix of `popdist run` and `popdist topology`: one table of invocations, each
with the exit status it must end with and the words its message must hold (the option, the value
as typed, what was expected).

    bad_arguments.py POPDIST_BINARY

Runs the binary directly (no MPI is started: every case fails before mpirun would be looked
for, and PATH holds no mpirun in case one does not). Prints one line per failing case and exits 1
if any failed. Fast: the whole table takes a few seconds.
"""

import os
import stat
import subprocess
import sys
import tempfile
import time

USAGE = 2         # bad arguments
ENVIRONMENT = 3   # invalid environment (popdist topology)

NUMBER_OPTIONS = {  # option: (smallest, largest)
    "--num-instances": (1, 65536),
    "--num-replicas": (1, 1048576),
    "--ipus-per-replica": (1, 1024),
    "--only-output-from-instance": (0, 65535),
}
# Values that are not plain decimal numbers; the environment contract refuses each of them too.
NOT_DECIMAL = ["0x10", "+2", " 2", "2 ", "-1", "1.5", "two", "1e3", "2,0", "\u0663", "4\r", "\t3", "0b1"]
SWITCH_OPTIONS = ["--print-topology", "--numa-aware", "--offline-mode", "--reset-partition", "--update-partition",
                  "--remove-partition", "--overwrite-config", "--synchronise-python-venv", "--synchronise-poplar-sdk",
                  "--distribute-ssh-key"]
NOT_SWITCH = ["maybe", "2", "yes!", "y", "enable", "none"]
# PopRun's options popdist ignores still need a value PopRun would take.
IGNORED_TEXT_OPTIONS = ["--vipu-partition", "--vipu-server-host", "--vipu-cluster", "--vipu-allocation", "--sync-type",
                        "--export-config", "--version-format", "--executable-cache-path"]
IGNORED_NUMBER_OPTIONS = ["--vipu-server-port", "--vipu-server-timeout", "--vipu-partition-attempts", "--num-ilds"]


def shown(value):
    """The value as popdist quotes it in a message (printable ASCII only here)."""
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def cases(files):
    """(name, argv after the binary, extra environment, status, words); yields at least 150."""
    run = ["run"]
    for option, (low, high) in NUMBER_OPTIONS.items():
        for value in NOT_DECIMAL:
            escaped = value.replace("\r", "\\r").replace("\t", "\\t")
            if value == "\u0663":
                escaped = "\\xd9\\xa3"
            yield (f"{option} {value!r}", run + [option, value, "true"], {}, USAGE,
                   [option, escaped, f"from {low} to {high}"])
        yield (f"{option} empty", run + [option, "", "true"], {}, USAGE, [option, "empty value", f"from {low} to {high}"])
        yield (f"{option} too big", run + [option, str(high + 1), "true"], {}, USAGE,
               [option, f"'{high + 1}' is out of range", f"to {high}"])
        yield (f"{option} 2^64", run + [option, "18446744073709551617", "true"], {}, USAGE, [option, "out of range"])
        yield (f"{option} without a value", run + [option], {}, USAGE, [option, "needs a value"])
        if low == 1:
            yield (f"{option} 0", run + [option, "0", "true"], {}, USAGE, [option, "'0' is out of range"])
    for option in SWITCH_OPTIONS:
        for value in NOT_SWITCH:
            yield (f"{option} {value}", run + [option, value, "true"], {}, USAGE,
                   [option, shown(value), "not a boolean", "yes/no"])
    # A program name after a boolean option is taken for its value, as PopRun does: the message says so.
    yield ("program after a bare boolean", run + ["--print-topology", "python3", "train.py"], {}, USAGE,
           ["--print-topology", "'python3' is not a boolean"])
    yield ("--import-config refused", run + ["--import-config", "pod64", "true"], {}, USAGE,
           ["--import-config", "'pod64'", "configuration file"])
    for option in IGNORED_TEXT_OPTIONS:
        yield (f"{option} empty", run + [option, "", "true"], {}, USAGE, [option, "empty value"])
    for option in IGNORED_NUMBER_OPTIONS:
        yield (f"{option} not a number", run + [option, "pod64", "true"], {}, USAGE,
               [option, "'pod64' is not a whole number"])
    yield ("--host-subnet not a subnet", run + ["--host-subnet", "eth0", "true"], {}, USAGE,
           ["--host-subnet", "'eth0' is not a subnet"])
    for option in ["--bogus", "--num-instance", "-n", "--np", "--hosts", "--tag-output", "-x", "--mca",
                   "--print_topology", "---num-instances"]:
        yield (f"unknown {option}", run + [option, "true"], {}, USAGE, [f"'{option}' is not an option of popdist run"])
    # --host values
    for value, words in [
        ("", ["--host", "empty value"]),
        ("a,,b", ["--host 'a,,b'", "empty host name"]),
        ("a,", ["--host 'a,'", "empty host name"]),
        ("n[1-3", ["--host 'n[1-3'", "without a closing"]),
        ("n]", ["--host 'n]'", "without '['"]),
        ("n[[1]]", ["nested"]),
        ("n[]", ["empty brackets"]),
        ("n[3-1]", ["runs backwards"]),
        ("n[a-b]", ["'a' in brackets is not a decimal"]),
        ("a b", ["' ' is not allowed"]),
        ("a/b", ["'/' is not allowed"]),
        ("a:0", ["slots '0'", ">= 1"]),
        ("a:x", ["slots 'x'"]),
        ("a:", ["slots ''"]),
        ("n[0-999999999]", ["more than 4096"]),
        ("a[0-99999]b[0-99999]", ["more than 4096"]),
        ("n[0-999]m[0-999]", ["1000 x 1000 = 1000000 hosts", "more than 4096"]),
        ("n[0-3000,4000-6000]", ["more than 4096"]),
        ("a,a", ["host 'a' is listed more than once"]),
        ("a\x01b", ["--host 'a\\x01b'"]),
    ]:
        yield (f"--host {value!r}", run + ["--num-instances", "2", "--host", value, "true"], {}, USAGE, words)
    yield ("--host a,b,c with 4 instances", run + ["--num-instances", "4", "--host", "a,b,c", "true"], {}, USAGE,
           ["--num-instances 4 is not divisible by the 3 hosts"])
    # --hostfile
    for name, path, words in [
        ("directory", files["dir"], ["--hostfile", "is a directory"]),
        ("fifo", files["fifo"], ["--hostfile", "not a regular file"]),
        ("device", "/dev/null", ["--hostfile", "'/dev/null' is not a regular file"]),
        ("missing", files["missing"], ["--hostfile", "cannot read", "No such file"]),
        ("empty path", "", ["--hostfile", "empty value"]),
        ("no hosts", files["empty"], ["lists no hosts"]),
        ("bad line", files["bad_hostfile"], ["line 2", "unexpected 'sluts=2'"]),
        ("bad slots", files["bad_slots"], ["line 1", "'slots=0x2' must be a whole number"]),
    ]:
        yield (f"--hostfile {name}", run + ["--hostfile", path, "true"], {}, USAGE, words)
    yield ("--host with --hostfile", run + ["--host", "a", "--hostfile", files["hostfile"], "true"], {}, USAGE,
           ["--hostfile", "excludes --host"])
    # combinations checked after parsing
    for argv, words in [
        (["--num-instances", "3", "--num-replicas", "8"], ["--num-replicas 8 is not divisible by --num-instances 3",
                                                          "--num-replicas 9"]),
        (["--num-instances", "2", "--num-replicas", "2147483647"], ["--num-replicas", "out of range"]),
        (["--num-instances", "4096", "--num-replicas", "1048575"], ["not divisible", "--num-replicas 1048576"]),
        (["--num-replicas", "3"], ["3 replicas x 1 IPUs per replica = 3 IPUs", "not 1 or a power of two"]),
        (["--num-instances", "2", "--num-replicas", "12", "--ipus-per-replica", "2"], ["6 replicas x 2 IPUs", "= 12"]),
        (["--ipus-per-replica", "6"], ["1 replicas x 6 IPUs per replica = 6 IPUs"]),
        (["--num-instances", "2", "--only-output-from-instance", "2"],
         ["--only-output-from-instance 2: out of range; the instances are 0..1"]),
        (["--print-topology", "--ipus-per-replica", "2147483647"], ["--ipus-per-replica", "out of range"]),
    ]:
        yield (" ".join(argv), run + argv + ["true"], {}, USAGE, words)
    yield ("no program", run + ["--num-instances", "2"], {}, USAGE, ["no program to run"])
    yield ("empty program", run + ["--", ""], {}, USAGE, ["the program name is an empty word"])
    yield ("--mpi-global-args unterminated", run + ["--mpi-global-args", "-x 'A", "true"], {}, USAGE,
           ["--mpi-global-args", "unterminated"])
    yield ("--mpi-local-args unterminated", run + ["--mpi-local-args", "\"-x", "true"], {}, USAGE,
           ["--mpi-local-args", "unterminated"])
    for option in ["--mpi-global-args", "--mpi-local-args"]:
        for text in [": -np 1 echo INJECTED", "--app appfile"]:
            yield (f"{option} {text}", run + [option, text, "true"], {}, USAGE,
                   [option, shown(text), "would start another app context"])
    yield ("one argument too long for OMPI_ARGV", run + ["--num-instances", "2", "--dry-run", "--", "prog", "x" * 131060],
           {}, USAGE, ["OMPI_ARGV", "131066 bytes", "in a file instead"])
    huge = "7" * 100000
    yield ("huge number", run + ["--num-instances", huge, "true"], {}, USAGE,
           ["--num-instances", "'" + "7" * 64 + "'... (100000 bytes)"])
    yield ("huge host", run + ["--host", "h" * 100000, "true"], {}, USAGE,
           ["(100000 bytes)", "a host name longer than 255 characters"])
    yield ("SLURM_JOB_NODELIST huge product", run + ["true"], {"SLURM_JOB_NODELIST": "a[0-99999]b[0-99999]"}, USAGE,
           ["SLURM_JOB_NODELIST", "more than 4096"])
    yield ("SLURM_JOB_NODELIST bad", run + ["true"], {"SLURM_JOB_NODELIST": "n[1-"}, USAGE,
           ["SLURM_JOB_NODELIST 'n[1-'"])

    # ---- popdist topology
    topo = ["topology"]
    for name, path, words in [
        ("directory", files["dir"], ["--env-file", "is a directory"]),
        ("fifo", files["fifo"], ["--env-file", "not a regular file"]),   # must not block in open()
        ("device", "/dev/zero", ["--env-file", "'/dev/zero' is not a regular file"]),
        ("missing", files["missing"], ["--env-file", "cannot read"]),
        ("empty path", "", ["--env-file", "empty value"]),
        ("unprintable path", "a\x02b", ["--env-file", "'a\\x02b'"]),
    ]:
        yield (f"topology --env-file {name}", topo + ["--env-file", path], {}, USAGE, words)
        yield (f"topology --json --env-file {name}", topo + ["--json", "--env-file", path], {}, USAGE, words)
    yield ("topology --env-file without value", topo + ["--env-file"], {}, USAGE, ["--env-file", "needs a value"])
    yield ("topology --all --env-file", topo + ["--all", "--env-file", files["good_env"]], {}, USAGE,
           ["--all", "--env-file"])
    for option in ["--bogus", "--num-instances", "-j", "--jsn", "--host"]:
        yield (f"topology unknown {option}", topo + [option], {}, USAGE, [f"'{option}' is not an option of popdist topology"])
    yield ("topology stray word", topo + ["extra"], {}, USAGE, ["'extra' is not an option of popdist topology"])
    yield ("program name starting with -", run + ["--", "-x"], {}, USAGE, ["'-x' is not an option of popdist run"])
    yield ("no subcommand", [], {}, USAGE, ["expected a subcommand: run, topology or stacks"])
    yield ("unknown subcommand", ["launch"], {}, USAGE, ["'launch' is not a subcommand of popdist"])
    for variable, value, words in [
        ("POPDIST_NUM_LOCAL_REPLICAS", "0x10", ["POPDIST_NUM_LOCAL_REPLICAS='0x10'"]),
        ("POPDIST_NUM_LOCAL_REPLICAS", "+2", ["POPDIST_NUM_LOCAL_REPLICAS='+2'"]),
        ("POPDIST_NUM_LOCAL_REPLICAS", " 2", ["POPDIST_NUM_LOCAL_REPLICAS=' 2'"]),
        ("POPDIST_NUM_LOCAL_REPLICAS", "", ["POPDIST_NUM_LOCAL_REPLICAS", "empty"]),
        ("POPDIST_NUM_IPUS_PER_REPLICA", "0", ["POPDIST_NUM_IPUS_PER_REPLICA='0'"]),
        ("POPDIST_NUM_TOTAL_REPLICAS", "99999999999", ["POPDIST_NUM_TOTAL_REPLICAS='99999999999'"]),
        ("POPDIST_REPLICA_INDEX_OFFSET", "-1", ["POPDIST_REPLICA_INDEX_OFFSET='-1'"]),
        ("POPDIST_LAUNCHER", "jsrun", ["POPDIST_LAUNCHER='jsrun'", "not a launcher name"]),
    ]:
        yield (f"topology {variable}={value!r}", topo, {variable: value}, ENVIRONMENT, words)
    # settings only init() reads: a timeout it would refuse is an error, an unknown log level a warning
    for value in ["soon", "0", "-1", "", "-inf", "nan", " 2", "1s"]:  # "inf" is valid: no default timeout
        yield (f"topology POPDIST_SYNC_TIMEOUT={value!r}", topo, {"POPDIST_SYNC_TIMEOUT": value}, ENVIRONMENT,
               ["POPDIST_SYNC_TIMEOUT=" + shown(value), "positive number of seconds"])
    yield ("topology --env-file with POPDIST_SYNC_TIMEOUT=soon", topo + ["--env-file", files["bad_timeout_env"]], {},
           ENVIRONMENT, ["POPDIST_SYNC_TIMEOUT='soon'"])


def make_files(directory):
    files = {
        "dir": os.path.join(directory, "a-directory"),
        "fifo": os.path.join(directory, "a-fifo"),
        "missing": os.path.join(directory, "no", "such", "file"),
        "empty": os.path.join(directory, "empty-hostfile"),
        "bad_hostfile": os.path.join(directory, "bad-hostfile"),
        "bad_slots": os.path.join(directory, "bad-slots"),
        "hostfile": os.path.join(directory, "hostfile"),
        "good_env": os.path.join(directory, "good.env"),
        "bad_timeout_env": os.path.join(directory, "bad-timeout.env"),
    }
    os.mkdir(files["dir"])
    os.mkfifo(files["fifo"])
    contents = {"empty": "# nothing\n", "bad_hostfile": "a slots=2\nb sluts=2\n", "bad_slots": "a slots=0x2\n",
                "hostfile": "a\nb\n", "good_env": "OMPI_COMM_WORLD_RANK=0\nOMPI_COMM_WORLD_SIZE=1\n",
                "bad_timeout_env": "POPDIST_SYNC_TIMEOUT=soon\n"}
    for key, text in contents.items():
        with open(files[key], "w") as out:
            out.write(text)
    assert stat.S_ISFIFO(os.stat(files["fifo"]).st_mode)
    return files


def main():
    popdist = sys.argv[1]
    failures = []
    with tempfile.TemporaryDirectory() as directory:
        files = make_files(directory)
        no_mpirun = os.path.join(directory, "a-directory")
        table = list(cases(files))
        started = time.monotonic()
        for name, argv, extra_env, status, words in table:
            # Nothing inherited can change the answer: a clean environment plus the case's variables.
            env = {"PATH": no_mpirun, "HOME": directory, **extra_env}
            try:
                result = subprocess.run([popdist] + argv, env=env, capture_output=True, timeout=10)
            except subprocess.TimeoutExpired:
                failures.append(f"{name}: did not end within 10 s (blocked?)")
                continue
            stderr = result.stderr.decode("utf-8", "replace")
            problems = []
            if result.returncode != status:
                problems.append(f"exit status {result.returncode}, expected {status}")
            problems += [f"no {word!r} in the message" for word in words if word not in stderr]
            if len(stderr) > 4000:
                problems.append(f"a {len(stderr)}-character message (values must be shortened)")
            if result.stdout:
                problems.append("printed on standard output")
            if problems:
                failures.append(f"{name}: {'; '.join(problems)}\n    stderr: {stderr.strip()[:600]}")
        elapsed = time.monotonic() - started
    print(f"{len(table)} bad invocations in {elapsed:.1f} s, {len(failures)} failed")
    for failure in failures:
        print("FAIL " + failure)
    if len(table) < 150:
        print(f"FAIL the matrix has {len(table)} cases, fewer than 150")
        return 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
