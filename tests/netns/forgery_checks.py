#!/usr/bin/env python3
"""Nobody who reads the network speaks for the job (issue 48): an attacker with a raw socket on the
bridge port of h2 (in the testbed's switch namespace, no other access) records the job's traffic,
then speaks from h3, an address on the network that is not a job's host.

    sniffed:      the key is in no byte on the wire (neither the user's key nor the job's, in the
                  channel or in mpirun's launch message); the recorded Hello replayed gets a fresh
                  challenge and the recorded Proof does not answer it; the whole recorded stream
                  replayed, and a forged Ended after a replayed Hello, are refused and named; the
                  job's report still names the real first failure (instance 3 on h2, RuntimeError).
    forged-beats: h2's link cut, the attacker replays h2's recorded handshake and Beats over and
                  over: popdist run still declares h2 lost (exit 122) within the bound.

Used by CTest as  forgery_checks.py <check> <popdist> <testbed> h1,h2  (h3 is the attacker's).
Exit status: 0 pass, 1 a check failed, 77 skipped (the message names what is missing).
"""
import hashlib
import hmac
import json
import os
import re
import struct
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import netns_checks  # noqa: E402 - the testbed's probes
from netns_checks import check  # noqa: E402
from private_tmp_job import PrivateTmpJob  # noqa: E402 - the job every check starts

HOST_TIMEOUT = 3
END_BOUND = HOST_TIMEOUT + 3 + 8  # as lost_host_checks.py: timeout, grace + 2 s, a loaded machine's slack
FORGED = "forged by the network"

# The last instance raises after argv[2] seconds ("raise"), or never ("spin").
PROGRAM = r"""
import os, sys, time
mode, rank = sys.argv[1], int(os.environ["RANK"])
print("ready", rank, flush=True)
if mode == "raise" and rank == int(os.environ["WORLD_SIZE"]) - 1:
    time.sleep(float(sys.argv[2]))
    raise RuntimeError("the last instance broke")
while True:
    time.sleep(0.05)
"""

# A raw socket on h2's port of the bridge: every TCP segment with a payload, as JSON lines.
SNIFFER = r"""
import json, socket, struct, sys, time
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.ntohs(0x0003))
s.bind((sys.argv[1], 0))
s.settimeout(0.2)
end = time.monotonic() + float(sys.argv[2])
with open(sys.argv[3], "w") as out:
    while time.monotonic() < end:
        try:
            frame = s.recv(65535)
        except socket.timeout:
            continue
        if frame[12:14] != b"\x08\x00" or frame[14 + 9] != 6:
            continue
        ip = frame[14:]
        header, total = (ip[0] & 15) * 4, struct.unpack(">H", ip[2:4])[0]
        tcp = ip[header:total]
        sport, dport, seq = struct.unpack(">HHI", tcp[:8])
        payload = tcp[(tcp[12] >> 4) * 4:]
        if payload:
            out.write(json.dumps([socket.inet_ntoa(ip[12:16]), sport, socket.inet_ntoa(ip[16:20]), dport, seq,
                                  payload.hex()]) + "\n")
            out.flush()
"""

# The attacker on h3: each attack on a new connection; what popdist run answered, as JSON.
ATTACKER = r"""
import json, socket, struct, sys, time
address, port, rounds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
recorded = json.loads(sys.stdin.read())
hello, proof, sealed = (bytes.fromhex(f) for f in (recorded["hello"], recorded["proof"], recorded["sealed"]))
forged = bytes.fromhex(recorded["forged"])
def frame_of(s):
    head = s.recv(4, socket.MSG_WAITALL)
    return head + s.recv(struct.unpack(">I", head)[0], socket.MSG_WAITALL) if len(head) == 4 else b""
def closed(s):
    try:
        while s.recv(4096):
            pass
        return True
    except socket.timeout:
        return False
    except ConnectionResetError:
        return True
def attack(first, then):
    s = socket.create_connection((address, port), timeout=5)
    s.sendall(first)
    welcome = frame_of(s) if first == hello else b""
    s.sendall(then)
    result = {"welcome_type": welcome[4] if len(welcome) > 4 else None, "closed": closed(s)}
    s.close()
    return result
results = {"replayed_proof": [], "replayed_stream": [], "forged_ended": []}
for _ in range(rounds):
    results["replayed_proof"].append(attack(hello, proof))
    results["replayed_stream"].append(attack(hello + proof + sealed, b""))
    results["forged_ended"].append(attack(hello, forged))
    time.sleep(0.5)
print(json.dumps(results))
"""


def frame(kind, payload):
    return struct.pack(">IB", len(payload) + 1, kind) + payload


def text(value):
    return struct.pack(">I", len(value)) + value


def frames_of(stream):
    out, at = [], 0
    while at + 4 <= len(stream):
        length = struct.unpack(">I", stream[at:at + 4])[0]
        if at + 4 + length > len(stream):
            break  # cut by the end of the recording
        out.append(stream[at:at + 4 + length])
        at += 4 + length
    return out


class Sniffer:
    """SNIFFER on h2's bridge port for `seconds`; segments() reads what it recorded."""

    def __init__(self, seconds):
        self.path = tempfile.mktemp(prefix="popdist-sniffed-", suffix=".jsonl")
        self.process = subprocess.Popen(["ip", "netns", "exec", "mhsw", sys.executable, "-c", SNIFFER, "mh-h2",
                                         str(seconds), self.path])
        time.sleep(0.5)

    def segments(self):
        with open(self.path) as f:
            return [json.loads(line) for line in f]

    def stop(self):
        self.process.kill()
        self.process.wait()
        os.unlink(self.path)


def channel_of_job(job):
    """popdist run's channel address and port, and the job's nonce, from its mpirun's command line."""
    ps = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout
    line = next((line for line in ps.splitlines() if "mpirun" in line and job.script in line), "")
    address = re.search(r"POPDIST_CHANNEL_ADDRESS=([\d.]+):(\d+)", line)
    nonce = re.search(r"POPDIST_CHANNEL_NONCE=([0-9a-f]{64})", line)
    check(address and nonce, f"no channel address or nonce on mpirun's command line:\n{ps}")
    return address.group(1), int(address.group(2)), nonce.group(1)


def recorded_upstream(segments, port):
    """h2's relay's stream to popdist run, whole, from the segments: Hello, Proof, sealed frames."""
    ordered = {}
    for src, _, _, dport, seq, payload in segments:
        if src == "10.200.0.2" and dport == port:
            ordered.setdefault(seq, bytes.fromhex(payload))
    stream = b"".join(ordered[seq] for seq in sorted(ordered))
    frames = frames_of(stream)
    check(len(frames) >= 3 and frames[0][4] == 1 and frames[1][4] == 9,
          f"h2's recorded stream is not Hello, Proof, frames: {[f[4:5].hex() for f in frames[:4]]}")
    return frames


def attacker_run(frames, address, port, rounds):
    forged = frame(3, struct.pack(">iiQ", 3, 1, 300_000_000) + text(FORGED.encode()) + b"\0")
    forged += frames[-1]  # a recorded sealed frame (a Beat) after it
    recorded = json.dumps({"hello": frames[0].hex(), "proof": frames[1].hex(),
                           "sealed": b"".join(frames[2:]).hex(), "forged": forged.hex()})
    result = subprocess.run(["ip", "netns", "exec", "h3", sys.executable, "-c", ATTACKER, address, str(port),
                             str(rounds)], input=recorded, capture_output=True, text=True, timeout=90)
    print(result.stdout, result.stderr)
    check(result.returncode == 0, f"the attacker's script failed: {result.stderr}")
    results = json.loads(result.stdout)
    for attack, tries in results.items():
        check(all(t["closed"] for t in tries), f"{attack}: popdist run kept a connection open: {tries}")
    check(all(t["welcome_type"] == 8 for t in results["replayed_proof"]),
          f"a replayed Hello gets a Welcome, a fresh challenge: {results['replayed_proof']}")
    return results


def hkdf_sha256(key, salt, info, length):
    prk = hmac.new(salt, key, hashlib.sha256).digest()
    return hmac.new(prk, info + b"\x01", hashlib.sha256).digest()[:length]


def keys_of_job(nonce):
    """The user's key and the job's (job_key.hpp), raw and in hex, to look for on the wire."""
    path = os.environ.get("POPDIST_CHANNEL_KEY_FILE") or os.path.expanduser("~/.popdist/channel.key")
    with open(path) as f:
        user = bytes.fromhex(f.read().strip())
    job = hkdf_sha256(user, bytes.fromhex(nonce), b"popdist channel 1 job key", 32)
    return [user, user.hex().encode(), job, job.hex().encode()]


def sniffed(popdist, testbed, hosts):
    sniffer = Sniffer(60)
    try:
        job = PrivateTmpJob(popdist, testbed, hosts, PROGRAM, args=["raise", "12"], prefix="popdist-forgery-")
        job.wait_ready()
        time.sleep(1.5)  # every relay connected and beat
        address, port, nonce = channel_of_job(job)
        segments = sniffer.segments()
        frames = recorded_upstream(segments, port)
        attacker_run(frames, address, port, rounds=2)
        status, out = job.finish()
        wire = b"".join(bytes.fromhex(s[5]) for s in sniffer.segments())
    finally:
        sniffer.stop()
    print(f"recorded {len(wire)} bytes on h2's bridge port; the job's nonce among them: "
          f"{nonce.encode() in wire} (mpirun's launch message)")
    for secret in keys_of_job(nonce):
        check(secret not in wire, "a key crossed the network in clear")
    check(status == 1, f"the job's own status 1 expected, got {status}")
    check(f"first failure: instance {job.last} on {hosts[-1]}: exit code 1" in out, f"the root cause moved:\n{out}")
    check("RuntimeError: the last instance broke" in out, f"the real traceback is gone:\n{out}")
    check(FORGED not in out and FORGED not in json.dumps(job.report()), f"the forged Ended was recorded:\n{out}")
    for refusal in ("Proof that does not match", "Proof before the handshake was answered",
                    "Ended instead of the Proof"):
        check(refusal in out, f"the refused handshakes were not named ({refusal!r}):\n{out}")


def forged_beats(popdist, testbed, hosts):
    sniffer = Sniffer(60)
    job = PrivateTmpJob(popdist, testbed, hosts, PROGRAM, args=["spin"], options=("--host-timeout", str(HOST_TIMEOUT)),
                        prefix="popdist-forgery-")
    try:
        job.wait_ready()
        time.sleep(2.5)  # a few Beats recorded
        address, port, _ = channel_of_job(job)
        frames = recorded_upstream(sniffer.segments(), port)
        subprocess.run(["ip", "-n", hosts[-1], "link", "set", "eth0", "down"], check=True)
        start = time.monotonic()
        attacker_run(frames, address, port, rounds=12)  # about 6 s of replayed handshakes and Beats
        status, out = job.finish(lambda: subprocess.run(["ip", "-n", hosts[-1], "link", "set", "eth0", "up"]))
        elapsed = time.monotonic() - start
    finally:
        subprocess.run(["ip", "-n", hosts[-1], "link", "set", "eth0", "up"], check=False)
        sniffer.stop()
    print(f"from the cut to popdist run's end: {elapsed:.2f} s")
    check(status == 122, f"exit status 122 (lost host) expected, got {status}")
    check(elapsed <= END_BOUND, f"popdist run took {elapsed:.1f} s after the cut, more than {END_BOUND} s")
    check(re.search(rf"lost host: {hosts[-1]} \(instances 2, 3;", out), f"{hosts[-1]} is not named lost:\n{out}")


CHECKS = {"sniffed": sniffed, "forged-beats": forged_beats}


if __name__ == "__main__":
    sys.exit(netns_checks.run_host_check(CHECKS, sys.argv))
