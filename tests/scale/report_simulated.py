"""The simulated scale table from run_simulated.sh's JSON lines (one per probe step and run).

Prints, per platform, N and skew: each step's simulated time after the last arrival, the
baselines beside it and their ratio, messages and bytes sent per member (mean and the busiest
member), and the simulation's own wall time. Usage: python3 report_simulated.py FILE.jsonl
"""
import json
import sys
from collections import defaultdict

# popdist's step -> the MPI baseline it is measured against.
BASELINE = {
    "init": "MPI_Init_modex",
    "register_all": "MPI_Comm_create_group",
    "register_half": "MPI_Comm_create_group",
    "register_1pct": "MPI_Comm_create_group",
    "synchronize": "MPI_Barrier",
    "synchronize_all_set": "MPI_Barrier",
    "synchronize_timed_first": "MPI_Barrier",
    "synchronize_timed": "MPI_Barrier",
    "execute_on_instances": "MPI_Bcast",
}
ORDER = ["MPI_Barrier", "MPI_Comm_create_group", "MPI_Bcast", "MPI_Init_modex", "init", "register_all", "register_half",
         "register_1pct", "synchronize", "synchronize_all_set", "synchronize_timed_first", "synchronize_timed", "execute_on_instances",
         "register_late", "register_timed_missing", "synchronize_timed_missing", "register_conflict"]


def main(path):
    runs = defaultdict(dict)
    walls = {}
    unfinished = []
    with open(path) as lines:
        for line in lines:
            line = line.strip()
            if not line:
                continue
            row = json.loads(line)
            if row.get("unfinished"):
                unfinished.append(row)
                continue
            if "us" not in row:
                continue
            key = (row["platform"], row["n"], row.get("skew_s", 0) or 0)
            runs[(row["platform"], row["n"])].setdefault(row["step"], {})[row.get("skew_s", 0) or 0] = row
            walls[(row["platform"], row["n"], bool(row.get("skewed_run")))] = row["wall_s"]
    print("| platform | N | step | skew 0: us | ratio | skew: us | ratio | sends/member (mean, max) | "
          "bytes/member (mean, max) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for (platform, n) in sorted(runs, key=lambda k: (k[0], k[1])):
        steps = runs[(platform, n)]
        for step in ORDER:
            if step not in steps:
                continue
            by_skew = steps[step]
            plain = by_skew.get(0)
            skewed = next((v for k, v in by_skew.items() if k > 0), None)
            base = steps.get(BASELINE.get(step, ""), {}).get(0)

            def ratio(row):
                if row is None or base is None or base["us"] <= 0:
                    return ""
                return f"{row['us'] / base['us']:.2f}x"

            shown = plain or skewed
            cells = [platform, str(n), step,
                     f"{plain['us']:.1f}" if plain else "", ratio(plain),
                     f"{skewed['us']:.1f}" if skewed else "", ratio(skewed),
                     f"{shown['mean_sends']:.1f}, {shown['max_sends']:.0f}",
                     f"{shown['mean_sent_bytes']:.0f}, {shown['max_sent_bytes']:.0f}"]
            if skewed and plain and (skewed["max_sends"] != plain["max_sends"]):
                cells[7] += f" (skewed: {skewed['mean_sends']:.1f}, {skewed['max_sends']:.0f})"
            print("| " + " | ".join(cells) + " |")
    print()
    print("| platform | N | simulation wall time: unskewed | skewed |")
    print("|---|---|---|---|")
    for (platform, n) in sorted(runs, key=lambda k: (k[0], k[1])):
        print(f"| {platform} | {n} | {walls.get((platform, n, False), '')} s | {walls.get((platform, n, True), '')} s |")
    for row in unfinished:
        print(f"unfinished: {row['platform']} N={row['n']} {row.get('args', '')}: status {row['status']} after "
              f"{row['wall_s']} s")


if __name__ == "__main__":
    main(sys.argv[1])
