#!/usr/bin/env python3
"""Runs a `popdist topology` command and checks its exit status, its output and, for --json,
every expected key of the JSON document. Used by the CLI tests under ctest.

    check_topology.py [options] [EXPECT ...] -- COMMAND [ARG ...]

EXPECT (on the parsed JSON of standard output):
    path=VALUE    the value at `path` equals VALUE; VALUE is a JSON literal (3, null, true, "x", [])
                  or else a plain string
    path~=REGEX   the value (a string, or any element of a list) matches REGEX (re.search)
    path#=N       the list or object at `path` has N elements
  `path` is dotted: keys and list indices, e.g. provenance.instance_index or instances.2.host_index.

Options:
    --status N         expected exit status (default 0)
    --stdout REGEX     standard output must match (repeatable: every one must match)
    --stderr REGEX     standard error must match (repeatable)
    --no-stdout        standard output must be empty
    --count N:REGEX    exactly N lines of standard output match REGEX (repeatable)
    --stdin FILE       feed FILE to the command's standard input
    --timeout S        give up after S seconds (default 60)

When the command exits with 0 and asks for --json, the document is also checked against the
schema shared with the Python package: a single instance's view has every key of
`popdist topology --json` with the right types; a --all document has "instances" (each with
those keys plus "hostname"), "hosts" and "anomalies". Standard output must hold exactly one
JSON document (so, under mpirun, only one instance printed).
"""

import argparse
import json
import re
import subprocess
import sys

LAUNCHERS = {"singleton", "popdist", "openmpi", "mpich", "pals", "mvapich2", "slurm", "torchrun", "horovod", "lsf",
             "pytorch"}
INT_KEYS = ["instance_index", "num_instances", "local_instance_index", "num_local_instances",
            "num_local_replicas", "num_total_replicas", "replica_index_offset", "ipus_per_replica"]
BOOL_KEYS = ["uniform_replicas_per_instance", "popdist_env_set"]
PROVENANCE_FIELDS = ["instance_index", "num_instances", "local_instance_index", "num_local_instances",
                     "num_local_replicas", "num_total_replicas", "replica_index_offset", "ipus_per_replica"]

failures = []


def fail(message):
    failures.append(message)


def is_int(value):
    return isinstance(value, int) and not isinstance(value, bool)


def check_instance_schema(view, where, full_provenance=True):
    """Every key of `popdist topology --json` with its type (design.md §8).
    `full_provenance`: every field's source must be listed. Under --all only instance 0 (the one
    printing) has its own detect() provenance; init() gathers fixed-size records, so the other
    instances' views carry only what MPI established ("mpi")."""
    if not isinstance(view, dict):
        fail(f"{where}: expected an object, got {view!r}")
        return
    if view.get("launcher") not in LAUNCHERS:
        fail(f"{where}.launcher: {view.get('launcher')!r} is not one of {sorted(LAUNCHERS)}")
    for key in INT_KEYS:
        if not is_int(view.get(key)):
            fail(f"{where}.{key}: expected an integer, got {view.get(key, '<missing>')!r}")
    for key in BOOL_KEYS:
        if not isinstance(view.get(key), bool):
            fail(f"{where}.{key}: expected true/false, got {view.get(key, '<missing>')!r}")
    # device_id is null exactly when the instance's devices are not 1 or a power of two (no IPU group)
    if is_int(view.get("num_local_replicas")) and is_int(view.get("ipus_per_replica")):
        devices = view["num_local_replicas"] * view["ipus_per_replica"]
        group = devices > 0 and devices & (devices - 1) == 0
        if not (is_int(view.get("device_id")) if group else view.get("device_id", 0) is None):
            fail(f"{where}.device_id: expected {'an integer' if group else 'null'} for {devices} devices per instance, "
                 f"got {view.get('device_id', '<missing>')!r}")
    if "host_index" not in view or not (view["host_index"] is None or is_int(view["host_index"])):
        fail(f"{where}.host_index: expected an integer or null, got {view.get('host_index', '<missing>')!r}")
    provenance = view.get("provenance")
    if not isinstance(provenance, dict) or not all(isinstance(v, str) and v for v in provenance.values()):
        fail(f"{where}.provenance: expected an object of non-empty strings, got {provenance!r}")
    elif full_provenance:
        for field in PROVENANCE_FIELDS:
            if field not in provenance:
                fail(f"{where}.provenance: no entry for {field} (has {sorted(provenance)})")
    warnings = view.get("warnings")
    if not isinstance(warnings, list) or not all(isinstance(w, str) for w in warnings):
        fail(f"{where}.warnings: expected a list of strings, got {warnings!r}")
    if all(is_int(view.get(k)) for k in INT_KEYS):
        if not 0 <= view["instance_index"] < view["num_instances"]:
            fail(f"{where}: instance_index {view['instance_index']} not in 0..num_instances-1")
        if view["replica_index_offset"] + view["num_local_replicas"] > view["num_total_replicas"]:
            fail(f"{where}: replicas [offset, offset + local) exceed num_total_replicas")


def check_job_schema(document):
    instances = document.get("instances")
    if not isinstance(instances, list) or not instances:
        fail(f"instances: expected a non-empty list, got {instances!r}")
        return
    for i, view in enumerate(instances):
        check_instance_schema(view, f"instances.{i}", full_provenance=(i == 0))
        if not isinstance(view, dict) or not isinstance(view.get("hostname"), str):
            fail(f"instances.{i}.hostname: expected a string")
    if not isinstance(document.get("anomalies"), list):
        fail("anomalies: expected a list")
    hosts = document.get("hosts")
    if not isinstance(hosts, list):
        fail("hosts: expected a list")
    else:
        listed = sorted(i for host in hosts for i in host.get("instances", []))
        if listed != list(range(len(instances))):
            fail(f"hosts: their instances {listed} are not each instance once")


def lookup(document, path):
    value = document
    for part in path.split("."):
        if isinstance(value, list):
            if not re.fullmatch(r"\d+", part) or int(part) >= len(value):
                raise KeyError(f"{path}: no element {part} in a list of {len(value)}")
            value = value[int(part)]
        elif isinstance(value, dict):
            if part not in value:
                raise KeyError(f"{path}: no key {part!r} (keys: {sorted(value)})")
            value = value[part]
        else:
            raise KeyError(f"{path}: {part!r} inside a {type(value).__name__}")
    return value


def parse_literal(text):
    try:
        return json.loads(text)
    except ValueError:
        return text


def check_expectation(document, expectation):
    match = re.fullmatch(r"([^=~#]+)(=|~=|#=)(.*)", expectation, re.S)
    if not match:
        fail(f"bad expectation {expectation!r} (expected path=VALUE, path~=REGEX or path#=N)")
        return
    path, op, expected = match.groups()
    try:
        actual = lookup(document, path)
    except KeyError as e:
        fail(str(e.args[0]))
        return
    if op == "=":
        want = parse_literal(expected)
        # 1 == True in Python: compare types too, so "true" never passes for 1.
        if actual != want or type(actual) is not type(want):
            fail(f"{path}: expected {want!r}, got {actual!r}")
    elif op == "#=":
        if not isinstance(actual, (list, dict)) or len(actual) != int(expected):
            fail(f"{path}: expected {expected} elements, got {actual!r}")
    else:
        candidates = actual if isinstance(actual, list) else [actual]
        texts = [c if isinstance(c, str) else json.dumps(c) for c in candidates]
        if not any(re.search(expected, t) for t in texts):
            fail(f"{path}: nothing in {actual!r} matches /{expected}/")


def main():
    argv = sys.argv[1:]
    if "--" not in argv:
        sys.exit("check_topology.py: expected -- before the command")
    split = argv.index("--")
    parser = argparse.ArgumentParser()
    parser.add_argument("--status", type=int, default=0)
    parser.add_argument("--stdout", action="append", default=[])
    parser.add_argument("--stderr", action="append", default=[])
    parser.add_argument("--no-stdout", action="store_true")
    parser.add_argument("--count", action="append", default=[])
    parser.add_argument("--stdin")
    parser.add_argument("--timeout", type=float, default=60)
    parser.add_argument("expect", nargs="*")
    args = parser.parse_args(argv[:split])
    command = argv[split + 1:]

    stdin = open(args.stdin, "rb") if args.stdin else subprocess.DEVNULL
    try:
        result = subprocess.run(command, stdin=stdin, capture_output=True, timeout=args.timeout)
    except subprocess.TimeoutExpired:
        sys.exit(f"FAIL: {' '.join(command)} did not finish within {args.timeout} s")
    out = result.stdout.decode("utf-8", errors="replace")
    err = result.stderr.decode("utf-8", errors="replace")

    if result.returncode != args.status:
        fail(f"exit status {result.returncode}, expected {args.status}")
    for pattern in args.stdout:
        if not re.search(pattern, out, re.M):
            fail(f"standard output does not match /{pattern}/")
    for pattern in args.stderr:
        if not re.search(pattern, err, re.M):
            fail(f"standard error does not match /{pattern}/")
    for spec in args.count:
        number, _, pattern = spec.partition(":")
        matching = [line for line in out.splitlines() if re.search(pattern, line)]
        if len(matching) != int(number):
            fail(f"{len(matching)} lines of standard output match /{pattern}/, expected {number}")
    if args.no_stdout and out:
        fail("standard output is not empty")

    document = None
    if result.returncode == 0 and "--json" in command:
        try:
            document = json.loads(result.stdout.decode("utf-8"))  # strict: exactly one document
        except ValueError as e:
            fail(f"standard output is not one JSON document: {e}")
        if isinstance(document, dict):
            if "instances" in document:
                check_job_schema(document)
            else:
                check_instance_schema(document, "$")
        elif document is not None:
            fail(f"expected a JSON object, got {document!r}")
    if args.expect:
        if document is None:
            fail("expectations given but there is no JSON document to check")
        else:
            for expectation in args.expect:
                check_expectation(document, expectation)

    print("$ " + " ".join(command))
    print(f"exit status {result.returncode}")
    print("--- stdout\n" + out + "--- stderr\n" + err + "---")
    if failures:
        for message in failures:
            print("FAIL: " + message)
        sys.exit(1)
    print(f"OK ({len(args.expect)} keys checked)")


if __name__ == "__main__":
    main()
