"""CTest `simulation.fat_tree_256` (label `simulation`): the scale probe at N simulated instances
on the fat tree, arrivals skewed by up to a second, and one member that never comes to a timed
synchronize. Checks message counts, never times, so it cannot be flaky:

- the busiest member's point-to-point sends in registration, the timed synchronize and
  execute_on_instances stay within a bound of ceil(log2 N) (registration: the handshake's
  ceil(log2 N) Hellos plus at most ceil(log2 N) presences to its partners, which recursive
  doubling makes the same members it sends to and waits for; the timed barrier:
  ceil(log2 N); execute_on_instances: its agreement, O(log N)); the failed timed synchronize
  within 4 ceil(log2 N) + 2 (its round's ceil(log2 k) arrivals, then a roll call of O(log k)
  messages per member when one member is missing, roll_call.hpp, and one question to the missing
  member: which set did it wait in, waited_in.hpp);
- registration's bytes: each of those messages names its set by a digest of fixed size, not by
  its member list (handshake_message.hpp), so the busiest member sends at most
  HANDSHAKE_MESSAGE_BYTES per message it may send (with the list, 2 KB per Hello at 256);
- a timed synchronize over all N instances that the last one never calls ends on every
  other member with a TimeoutError naming exactly that member (the probe exits non-zero
  otherwise); so does a registration with a timeout over all but instance 0 (a new set, so that
  registration's handshake runs), within 3 ceil(log2 N) + 3 messages per member (Hellos,
  presences to the same partners, the roll call);
- a registration without a timeout whose last LATE_COUNT members come LATE_S seconds late, after
  the census of the members waiting (protocols/registration/census.hpp, after CENSUS_AFTER_S instead
  of 30 s): the census costs O(log N) per member, so that the busiest member sends at most the
  handshake's 2 ceil(log2 N) and the roll call's ceil(log2 N) + 2, its notice and a few answers
  (3 ceil(log2 N) + 5), and the mean stays within 2 ceil(log2 N). The missing members are dealt
  out over the present ones, so that the busiest member sends at most one Notice (the set's list)
  besides messages of a few bytes; when the member before a run of missing members told all of
  them, it sent LATE_COUNT Notices (8,992 bytes at 256, over that bound). Every waiting
  member told every other that it was there before the census (N - 2 more each: 261 on average
  at 256);
- a conflict (instance N-1 registers {0, N-1} before a set that the others register at once) is
  a UsageError naming both sets on every member of them, and costs what design.md §5.6 says: the member
  that finds it tells every member of both sets (Mismatch: N - 2 messages, the one O(N) sender,
  after its ceil(log2 N) Hellos and one question for the other set's list); every other member
  sends its Hellos and at most one answer, so that the mean stays within ceil(log2 N) + 2. A
  Mismatch names the sets by digest and its text names large sets shortly, so that the finder
  sends at most MISMATCH_BYTES a message (with both member lists and the sets written out in its
  text, ~2.5 KB each at 256 and O(N), O(N^2) bytes from one member).

Usage: python3 check_simulated.py PROBE PLATFORM [N]
"""
import json
import math
import os
import subprocess
import sys
import tempfile

# The timed synchronize that loses a member is over every STRIDE-th instance: all of them, now
# that its failure path is O(log N) per member (3.5 s of the simulation's real time at 256; the
# all-to-all roll call it replaced sent 65,280 messages there and took 50 s, so the test was over
# every 8th instance).
STRIDE = 1
# A Hello or Presence: kind, the digest (count, two 64-bit hashes), an empty list, the id
# ("scale/all") and an empty text: 45 bytes; the bound leaves room for a longer id.
HANDSHAKE_MESSAGE_BYTES = 64
# A Mismatch: two digests and the error, which names both sets (instance_sets.hpp's format_set:
# "{0, 2-255} (255 instances)") and the ids: ~350 bytes at 256 and at any N for these sets.
MISMATCH_BYTES = 512
# The late registration: its census starts after CENSUS_AFTER_S of waiting, later than the skewed
# arrivals of the first registration (up to 1 s) take, and lasts about 1.9 s at 256; the late
# members come after it.
CENSUS_AFTER_S = "1.5"
LATE_S = "4"
LATE_COUNT = "8"


def notice_bytes(n):
    """A census's Notice at most: the set's list (4 bytes a member), the bitmap of the members
    that wait (a bit each) and a few fixed fields (handshake_message.hpp)."""
    return 4 * n + n // 8 + HANDSHAKE_MESSAGE_BYTES


def main():
    probe, platform = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 256
    k = len(range(0, n, STRIDE))   # the members of the set that loses one
    absent = (k - 1) * STRIDE
    with tempfile.TemporaryDirectory() as work:
        hostfile = os.path.join(work, "hosts")
        with open(hostfile, "w") as hosts:
            hosts.write("".join(f"node-{i}\n" for i in range(n)))
        command = ["smpirun", "-np", str(n), "-platform", platform, "-hostfile", hostfile,
                   # run_simulated.sh's settings but two: SMPI's default linear MPI_Barrier, and its
                   # default smpi/grow-injected-times:yes, under which each unsuccessful MPI_Iprobe
                   # costs more simulated time than the last (the one before a success costs ms
                   # after a long wait): the counts checked here are the same either way, and the
                   # simulation takes 21 s of real time here instead of 134 s. The times it prints
                   # are therefore not the scale table's.
                   "--cfg=smpi/simulate-computation:no", "--cfg=smpi/test:1e-6", "--cfg=smpi/iprobe:1e-6",
                   "--cfg=smpi/allgather:rdb", "--cfg=smpi/allgatherv:mpich_rdb",
                   "--cfg=contexts/stack-size:256", "--log=root.thres:critical",
                   probe, "--quick", "--skew", "1", "--never-arrives", str(absent), "--missing-stride", str(STRIDE),
                   "--timeout", "0.5", "--late", LATE_S, "--late-count", LATE_COUNT]
        # SMPI's ranks share this one environment.
        env = dict(os.environ, POPDIST_CENSUS_AFTER=CENSUS_AFTER_S)
        run = subprocess.run(command, capture_output=True, text=True, cwd=work, env=env)
    rows = [json.loads(line) for line in run.stdout.splitlines() if line.startswith("{")]
    print(run.stdout)
    if run.returncode != 0:
        print(run.stderr[-4000:], file=sys.stderr)
        print(f"check_simulated: the probe failed with status {run.returncode}", file=sys.stderr)
        return 1
    steps = {row["step"]: row for row in rows}
    log = math.ceil(math.log2(n))
    bounds = {
        "register_all": 2 * log,
        "synchronize_timed": log,
        "execute_on_instances": 4 * log,
        # The failure path: the round's own ceil(log2 k) arrivals, the roll call (O(log k) per
        # member with one member missing: ceil(log2 k) + 2 in the unit test's model, a few more
        # when members join late or must be told to wait), and one question to the missing
        # member: which set did it wait in (waited_in.hpp). It was all-to-all, k - 1 notices.
        "synchronize_timed_missing": 4 * log + 2,
        # A registration with a timeout that the same member never comes to: the handshake's
        # ceil(log2 k) Hellos, its first escalation's presences to the same partners, and the
        # roll call (as above). It was all-to-all, k - 1 GaveUp notices from every member.
        "register_timed_missing": 3 * log + 3,
        # The late members (see the top): the handshake's Hellos and presences, the census.
        "register_late": 3 * log + 5,
    }
    # The conflict's finder (see the top): its Mismatch to every other member of both sets.
    bounds["register_conflict"] = (n - 2) + log + 1
    failures = []

    def check(step, field, bound, what):
        """One figure of one step against its bound; a step the probe did not report fails."""
        if step not in steps:
            failures.append(f"{step}: not reported by the probe")
            return
        value = steps[step][field]
        print(f"{step}: {what(value)}; bound {bound}: {'ok' if value <= bound else 'TOO MANY'}")
        if value > bound:
            failures.append(f"{step}: {what(value)}, more than {bound}")

    for step, bound in bounds.items():
        check(step, "max_sends", bound,
              lambda sends: f"the busiest member sent {sends:.0f} messages (ceil(log2 {n}) = {log}; "
                            f"the set losing a member has {k})")
    check("register_conflict", "mean_sends", log + 2,
          lambda sends: f"the members sent {sends:.2f} messages on average")
    check("register_late", "mean_sends", 2 * log,
          lambda sends: f"the members sent {sends:.2f} messages on average")
    for step, per_message in (("register_all", HANDSHAKE_MESSAGE_BYTES), ("register_conflict", MISMATCH_BYTES)):
        check(step, "max_sent_bytes", bounds[step] * per_message,
              lambda sent: f"the busiest member sent {sent:.0f} bytes ({per_message} a message at most)")
    # The late registration's busiest member: its messages of a few bytes and one Notice. The
    # member before the late ones, telling them all, sent LATE_COUNT Notices (8,992 bytes at 256).
    check("register_late", "max_sent_bytes", bounds["register_late"] * HANDSHAKE_MESSAGE_BYTES + notice_bytes(n),
          lambda sent: f"the busiest member sent {sent:.0f} bytes (one notice of {notice_bytes(n)} at most)")
    if "timeout_message" not in steps:
        failures.append("the timed synchronize without a member did not report its TimeoutError")
    if "registration_timeout_message" not in steps:
        failures.append("the registration without a member did not report its TimeoutError")
    for failure in failures:
        print("check_simulated: " + failure, file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
