"""Prints the benchmark results (JSON lines from run.sh) as one table: each popdist figure next to
its baseline, the ratio, the target and PASS/MISS. Figures, not tests: the exit code is 0
whatever the figures are (non-zero only for unreadable input).

    python tests/bench/report.py results.jsonl
"""

import argparse
import json
import os
import platform
import statistics
import sys
from dataclasses import dataclass
from typing import Optional


@dataclass(frozen=True)
class Target:
    """ratio: popdist/baseline <= limit; below: popdist < limit_us; within: popdist - baseline <= limit_us."""

    kind: str
    limit: float

    def text(self):
        if self.kind == "ratio":
            return f"<= {self.limit:g}x"
        if self.kind == "below":
            return f"< {format_us(self.limit)}"
        return f"<= +{format_us(self.limit)}"

    def met(self, value_us, baseline_us):
        if self.kind == "ratio":
            return value_us / baseline_us <= self.limit
        if self.kind == "below":
            return value_us < self.limit
        return value_us - baseline_us <= self.limit


@dataclass(frozen=True)
class Row:
    title: str
    group: str
    key: str
    baseline: Optional[str] = None
    target: Optional[Target] = None


RATIO_105 = Target("ratio", 1.05)
ROWS = [
    # A/A: the same operation twice under two names; how far from 1.00x it lands is the noise floor.
    Row("noise floor: MPI_Barrier vs MPI_Barrier", "sync_world", "mpi_barrier_native", "mpi_barrier_dup"),
    Row("noise floor: mpi4py Barrier vs Barrier", "py_sync", "mpi4py_native", "mpi4py_world"),
    # C++, in one process under mpirun (bench_runtime.cpp, bench_first_registration.cpp)
    Row("C++ synchronize(), all instances", "sync_world", "popdist", "mpi_barrier_native", RATIO_105),
    Row("C++ synchronize(), all instances", "sync_world", "popdist", "mpi_barrier_dup", RATIO_105),
    Row("C++ synchronize(id), subset {0,1}", "sync_subset", "popdist_id", "mpi_barrier_native", RATIO_105),
    Row("C++ synchronize(participants), subset {0,1}", "sync_subset", "popdist_set", "mpi_barrier_native", RATIO_105),
    Row("C++ synchronize(timeout) vs without", "sync_timeout", "with_timeout", "without_timeout", Target("ratio", 1.5)),
    Row("C++ synchronize(timeout) vs same protocol, bare", "sync_timeout", "with_timeout", "raw_p2p_poll"),
    Row("raw: timed p2p protocol, bare, vs MPI_Barrier", "sync_timeout", "raw_p2p_poll", "mpi_barrier"),
    Row("raw: MPI_Ibarrier + MPI_Test vs MPI_Barrier", "sync_timeout", "raw_ibarrier_poll", "mpi_barrier"),
    Row("C++ register_communicator, first time", "register_first", "popdist", "mpi_comm_create_group"),
    Row("C++ register_communicator(set), cached", "register_cached", "by_set", None, Target("below", 1.0)),
    Row("C++ register_communicator(set, id), cached", "register_cached", "by_id", None, Target("below", 1.0)),
    Row("C++ register_communicator(all), cached", "register_cached", "all", None, Target("below", 1.0)),
    Row("C++ execute_on_instances(all, empty)", "execute", "popdist", "raw_call_allreduce"),
    Row("C++ execute_on_instances(all, empty)", "execute", "popdist", "raw_barrier_call_barrier"),
    Row("C++ detect(process_environment())", "detect", "detect"),
    # Python, under mpirun (bench_python.py)
    Row("Py synchronize()", "py_sync", "popdist", "mpi4py_world", Target("ratio", 1.0)),
    Row("Py synchronize()", "py_sync", "popdist", "mpi4py_native", Target("ratio", 1.0)),
    Row("Py execute_on_instances(all, f)", "py_execute", "popdist", "mpi4py_call_allreduce"),
    Row("Py execute_on_instances(all, f)", "py_execute", "popdist", "mpi4py_barrier_call_barrier"),
    Row("Py synchronize() vs torch gloo barrier", "py_torch", "popdist", "torch_gloo"),
    # Whole processes (bench_processes.py)
    Row("process: import popdist + getter", "py_startup", "import_popdist", "pass", Target("within", 10_000)),
    Row("process: from mpi4py import MPI", "py_startup", "import_mpi4py", "pass"),
    Row("process: popdist topology", "cli_topology", "popdist_topology", "true", Target("below", 10_000)),
    Row("in-process: popdist::init(), singleton", "init_singleton", "popdist_init", "mpi_init_thread"),
    Row("in-process: popdist::init(), mpirun -np 1", "init_mpirun", "popdist_init", "mpi_init_thread"),
    Row("in-process: Python popdist.init(), singleton", "init_singleton", "py_popdist_init", "mpi_init_thread"),
    Row("in-process: Python popdist.init(), mpirun -np 1", "init_mpirun", "py_popdist_init", "mpi_init_thread"),
]


def format_us(us):
    if us >= 1000:
        return f"{us / 1000:.1f} ms"
    if us >= 100:
        return f"{us:.0f} µs"
    if us >= 10:
        return f"{us:.1f} µs"
    if us >= 1:
        return f"{us:.2f} µs"
    return f"{us * 1000:.0f} ns"


def load(paths):
    """(group, ranks, key) -> figure dict; pooled 'sample_us' lines become a median; plus meta lines."""
    figures, samples, meta = {}, {}, []
    for path in paths:
        with open(path, encoding="utf-8") as stream:
            for number, line in enumerate(stream, 1):
                line = line.strip()
                if not line.startswith("{"):
                    continue
                try:
                    record = json.loads(line)
                except json.JSONDecodeError as error:
                    sys.exit(f"report.py: {path}:{number}: not JSON ({error}): {line[:200]}")
                if "meta" in record:
                    meta.append(record["meta"])
                elif "sample_us" in record:
                    index = (record["group"], record["ranks"], record["key"])
                    samples.setdefault(index, {"label": record["label"], "values": []})["values"].append(
                        record["sample_us"]
                    )
                else:
                    figures[(record["group"], record["ranks"], record["key"])] = record
    for (group, ranks, key), pooled in samples.items():
        figures[(group, ranks, key)] = {
            "label": pooled["label"],
            "median_us": statistics.median(pooled["values"]),
            "blocks": len(pooled["values"]),
        }
    return figures, meta


def cpu_model():
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as stream:
            for line in stream:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def describe_figure(figure):
    return f"{format_us(figure['median_us'])} (n={figure.get('blocks', '?')})"


def table(figures):
    ranks_present = sorted({ranks for (_, ranks, _) in figures})
    header = ["ranks", "benchmark", "measured (popdist)", "baseline", "ratio", "target", "result"]
    lines = []
    for row in ROWS:
        for ranks in ranks_present:
            mine = figures.get((row.group, ranks, row.key))
            base = figures.get((row.group, ranks, row.baseline)) if row.baseline else None
            if mine is None and base is None:
                continue
            if mine is None or (row.baseline and base is None) or "skipped" in (mine or {}) or "skipped" in (base or {}):
                reason = (mine or {}).get("skipped") or (base or {}).get("skipped") or "no figure"
                lines.append([str(ranks), row.title, "—", row.baseline or "", "—", row.target.text() if row.target else "—",
                              f"skipped: {reason}"])
                continue
            ratio = f"{mine['median_us'] / base['median_us']:.2f}x" if base else "—"
            if base and row.target and row.target.kind == "within":
                difference = mine["median_us"] - base["median_us"]
                ratio += f" ({'+' if difference >= 0 else '-'}{format_us(abs(difference))})"
            baseline = f"{base['label']}: {describe_figure(base)}" if base else "—"
            result = "—"
            if row.target:
                result = "PASS" if row.target.met(mine["median_us"], base["median_us"] if base else 0) else "MISS"
            lines.append([str(ranks), row.title, f"{mine['label']}: {describe_figure(mine)}", baseline, ratio,
                          row.target.text() if row.target else "—", result])
    widths = [max(len(h), *(len(line[i]) for line in lines)) if lines else len(h) for i, h in enumerate(header)]
    out = ["| " + " | ".join(h.ljust(w) for h, w in zip(header, widths)) + " |",
           "|" + "|".join("-" * (w + 2) for w in widths) + "|"]
    out += ["| " + " | ".join(cell.ljust(w) for cell, w in zip(line, widths)) + " |" for line in lines]
    return "\n".join(out), sum(1 for line in lines if line[-1] == "MISS"), sum(1 for line in lines if line[-1] == "PASS")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("results", nargs="+", help="JSON-lines files written by the benchmarks")
    args = parser.parse_args()
    figures, meta = load(args.results)
    start = meta[0] if meta else {}
    with open("/proc/loadavg", encoding="utf-8") as stream:
        load_now = " ".join(stream.read().split()[:3])
    print(f"popdist benchmarks, {start.get('date', 'date unknown')}")
    print(f"machine: {os.cpu_count()} CPUs (nproc {start.get('nproc', '?')}), {cpu_model()}; "
          f"load average at start {start.get('loadavg', '?')}, at end {load_now}")
    if "package" in start:
        print(f"Python package: {start['package']}; interpreter {start.get('python', '?')}")
    print("medians of interleaved blocks (C++/Python: per call, wall time of the slowest rank; cached registration and "
          "detect: thread CPU time); 4 ranks are oversubscribed on 2 cores; n = blocks or runs")
    print()
    text, misses, passes = table(figures)
    print(text)
    print()
    print(f"{passes} PASS, {misses} MISS (targets are goals to judge changes by, not assertions)")
    notes = sorted({(group, ranks, figure["note"]) for (group, ranks, _), figure in figures.items() if figure.get("note")})
    if notes:
        print()
        print("notes: " + "; ".join(f"{group} at {ranks} rank(s): {note}" for group, ranks, note in notes))


if __name__ == "__main__":
    main()
