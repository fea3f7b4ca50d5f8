"""Run by every instance of a 2-instance job: popdist.torch's process group, then an outsider (a
process of the same user that is not part of the job, started by instance 0 without the secret)
tries what a hostile local user would against the job's store; the job then checks that it wrote
nothing the job reads and that the group still works. Writes instance<N>.json into argv[1]."""

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import torch
import torch.distributed as dist

import popdist
import popdist.torch

OUTSIDER = r'''
import datetime, json, os, socket, struct, sys
import torch.distributed as dist
address, port = sys.argv[1], int(sys.argv[2])
found = {}
# 1. torch's own client, as any torch user would connect to a store
try:
    client = dist.TCPStore(address, port, None, False, timeout=datetime.timedelta(seconds=3))
    found["tcpstore_keys"] = [k for k in client.list_keys()]
except Exception as error:
    found["tcpstore_error"] = type(error).__name__
# 2. the raw protocol: read the challenge, answer garbage, then send a set request regardless
try:
    with socket.create_connection((address, port), timeout=3) as s:
        s.settimeout(3)
        challenge = s.recv(64)
        found["challenge_bytes"] = len(challenge)
        s.sendall(b"x" * 64)
        body = bytes([1]) + struct.pack(">I", 4) + b"evil" + struct.pack(">I", 4) + b"evil"
        s.sendall(struct.pack(">I", len(body)) + body)
        found["reply_after_bad_answer"] = s.recv(64).hex()
except OSError as error:
    found["raw_error"] = type(error).__name__
# 3. the same port through a non-loopback address of this host
others = [a for a in sys.argv[3:] if not a.startswith("127.")]
found["other_addresses"] = others
found["reached_through"] = []
for other in others:
    try:
        socket.create_connection((other, port), timeout=2).close()
        found["reached_through"].append(other)
    except OSError:
        pass
print(json.dumps(found))
'''

out = Path(sys.argv[1])
popdist.init()
popdist.torch.init_process_group()
rank = dist.get_rank()
store = popdist.torch._state.store
report = {"rank": rank, "store_class": type(store).__name__}
if rank == 0:
    from popdist._torch_rendezvous import interface_addresses
    outsider = subprocess.run([sys.executable, "-c", OUTSIDER, store.address, str(store.port), *interface_addresses()],
                              capture_output=True, text=True, timeout=60)
    report["outsider"] = json.loads(outsider.stdout) if outsider.returncode == 0 else outsider.stderr
    report["evil_key_present"] = store.check(["evil"])
t = torch.tensor([rank + 1.0])
dist.all_reduce(t)  # the group still works after the outsider's attempts
report["sum"] = t.item()
(out / f"instance{rank}.json").write_text(json.dumps(report))
