"""The rendezvous of popdist.torch under MPI launchers: one TCPStore that every instance reaches,
agreed through popdist's MPI runtime (broadcast_bytes, allgather_bytes of popdist._mpi).

Why through MPI: the launcher already connected the instances, so every decision (the port
instance 0 got, which of its addresses the others reach, a failure on any instance) is shared in
one or two collectives and every instance raises the same error instead of some waiting forever.
Needs torch (imported by popdist.torch before this module).
"""

import datetime
import fcntl
import json
import os
import secrets
import socket
import struct

import torch.distributed as dist

from . import _api
from .errors import PopDistError

TOKEN_KEY = "popdist/rendezvous-token"
LOOPBACK = "127.0.0.1"
PROBE_CONNECT_SECONDS = 3.0  # a raw TCP connect to one candidate address (no route is immediate)


class RendezvousError(PopDistError, RuntimeError):
    """The instances could not agree a torch.distributed rendezvous; raised on every instance,
    naming the address(es) and port. (Also a RuntimeError, as torch's own rendezvous errors are.)"""


def agree_store(world, timeout, rendezvous_seconds):
    """This instance's TCPStore of the agreed rendezvous; ``timeout`` (a timedelta) becomes the
    store's timeout once connected. See agree()."""
    store, _, _ = agree(world, rendezvous_seconds)
    store.set_timeout(timeout)
    return store


def agree(world, rendezvous_seconds):
    """``(store, address, port)``: the TCPStore every instance reaches, the address this instance
    reached it on and its port. Instance 0's store holds the server (multi-tenant, so that an
    ``env://`` rendezvous on the same address and port in this process joins it instead of failing
    on a taken port). Several instances need popdist.init(); ``rendezvous_seconds`` bounds each step."""
    step = datetime.timedelta(seconds=rendezvous_seconds)
    if world == 1:
        master, offer = _start_master(world, step)
        if not offer["ok"]:
            raise RendezvousError(offer["error"])
        return master, offer["candidates"][0], offer["port"]

    backend = _api._backend()
    rank = _api.getInstanceIndex()
    # First every instance must be here, within the bound: one that exited (cleanly or not) or
    # is late is named by a TimeoutError on the others instead of leaving them in the broadcast.
    caller = "popdist.torch rendezvous"
    backend.allgather_bytes(b"", timeout=rendezvous_seconds, caller=caller)
    master = None
    if rank == 0:
        # Only instance 0 reads MASTER_ADDR/MASTER_PORT: whatever goes wrong there reaches the
        # others through the broadcast instead of leaving them waiting in it.
        master, offer = _start_master(world, step)
        message = json.dumps(offer).encode()
    else:
        message = b""
    offer = json.loads(backend.broadcast_bytes(message, 0))
    if not offer["ok"]:
        raise RendezvousError(offer["error"])

    candidates, port, token = offer["candidates"], offer["port"], offer["token"]
    clients = {}
    if rank == 0:
        reachable = list(range(len(candidates)))  # its own server: every offered address is its own
    else:
        reachable = []
        for index, address in enumerate(candidates):
            client = _probe(address, port, token, world, step)
            if client is not None:
                reachable.append(index)
                clients[index] = client
    # Each instance probes each address for at most a step (a connect, then the store's token).
    probing = (len(candidates) + 1) * (rendezvous_seconds + PROBE_CONNECT_SECONDS)
    everyone = [json.loads(piece) for piece in
                backend.allgather_bytes(json.dumps(reachable).encode(), timeout=probing, caller=caller)]
    common = [i for i in range(len(candidates)) if all(i in r for r in everyone)]
    if not common:
        seen = "; ".join(f"instance {i} reached {[candidates[j] for j in r] or 'none'}" for i, r in enumerate(everyone))
        raise RendezvousError(f"popdist.torch: no address of instance 0 is reachable by every instance on port {port} "
                              f"(offered {', '.join(f'{a}:{port}' for a in candidates)}; {seen}); set MASTER_ADDR to "
                              "an address of instance 0's host that every host reaches")
    store = master if rank == 0 else clients[common[0]]
    return store, candidates[common[0]], port


def _requested_port():
    text = os.environ.get("MASTER_PORT")
    if text is None or text == "":
        return 0  # the OS picks a free one on instance 0
    if not text.isdigit() or not 0 < int(text) < 65536:
        raise RendezvousError(f"popdist.torch: MASTER_PORT={text!r} is not a TCP port (expected an integer in 1..65535)")
    return int(text)


def _start_master(world, step):
    """Instance 0: the TCPStore server and the offer for the others, or the error for everyone."""
    try:
        port = _requested_port()
    except RendezvousError as error:
        return None, {"ok": False, "error": str(error)}
    user_address = os.environ.get("MASTER_ADDR") or None
    if user_address is not None:
        candidates = [user_address]
    elif _api.topology().num_local_instances == _api.getNumInstances():
        candidates = [LOOPBACK]  # one host: loopback always reaches, whatever the network
    else:
        candidates = interface_addresses()
    where = f"{candidates[0]}:{port or '<free port>'}"
    try:
        # The server listens on every interface; host_name is where instance 0's own client connects,
        # so a user's MASTER_ADDR that instance 0 cannot reach fails here, within `step`.
        store = dist.TCPStore(candidates[0], port, world, True, timeout=step, wait_for_workers=False,
                              multi_tenant=True)
        token = secrets.token_hex(16)
        store.set(TOKEN_KEY, token)
    except Exception as error:  # torch raises DistNetworkError, DistStoreError or RuntimeError
        origin = " (MASTER_ADDR/MASTER_PORT)" if user_address or port else ""
        first_line = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        return None, {"ok": False, "error": f"popdist.torch: instance 0 could not start the rendezvous store on "
                                            f"{where}{origin} within {step.total_seconds():g} s: {first_line}"}
    return store, {"ok": True, "candidates": candidates, "port": store.port, "token": token}


def _probe(address, port, token, world, step):
    """A client store on address:port if that is instance 0's store (its token), else None."""
    try:
        with socket.create_connection((address, port), timeout=min(PROBE_CONNECT_SECONDS, step.total_seconds())):
            pass
    except OSError:
        return None
    try:
        client = dist.TCPStore(address, port, world, False, timeout=step)
        # Another process may listen on this port at a peer's own loopback: only the token says
        # that this is instance 0's store.
        return client if client.get(TOKEN_KEY).decode() == token else None
    except Exception:  # noqa: BLE001 - any failure means "not reachable as the store"
        return None


def interface_addresses():
    """This host's IPv4 addresses, loopback first (Linux: SIOCGIFADDR per interface); falls back to
    what the host name resolves to."""
    addresses = []
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        for _, name in socket.if_nameindex():
            request = struct.pack("256s", name.encode()[:15])
            try:
                reply = fcntl.ioctl(s.fileno(), 0x8915, request)  # SIOCGIFADDR
            except OSError:
                continue  # no IPv4 address on this interface
            addresses.append(socket.inet_ntoa(reply[20:24]))
    if not addresses:
        try:
            addresses = socket.gethostbyname_ex(socket.gethostname())[2]
        except OSError:
            addresses = []
    ordered = sorted(set(addresses), key=lambda a: (not a.startswith("127."), addresses.index(a)))
    return ordered or [LOOPBACK]
