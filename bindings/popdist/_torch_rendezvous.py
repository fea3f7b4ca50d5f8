"""The rendezvous of popdist.torch under MPI launchers: one store that every instance reaches,
agreed through popdist's MPI runtime (_agreement.py's JSON collectives over popdist._mpi).

Two kinds of store. popdist.torch's own process group uses the job's store (_job_store.py): every
connection must prove it knows a secret that instance 0 sent to the others over MPI, so a process
outside the job learns nothing from it and writes nothing the job reads. Lightning's env://
rendezvous (PopdistEnvironment) must find torch's own TCPStore on the agreed port to join it; that
one has no authentication in torch, so popdist only confines it: on one host it listens on
127.0.0.1, not on every interface as torch would.

Why through MPI: the launcher already connected the instances, so every decision (the port
instance 0 got, which of its addresses the others reach, a failure on any instance) is shared in
one or two collectives and every instance raises the same error instead of some waiting forever.
Needs torch (imported by popdist.torch before this module).
"""

import datetime
import errno
import fcntl
import os
import secrets
import socket
import struct

import torch.distributed as dist

from . import _agreement, _api, _job_store
from ._agreement import RendezvousError

TOKEN_KEY = "popdist/rendezvous-token"
LOOPBACK = "127.0.0.1"
PROBE_CONNECT_SECONDS = 3.0  # a raw TCP connect to one candidate address (no route is immediate)


def agree_store(world, timeout, rendezvous_seconds):
    """This instance's client of the job's store (authenticated); ``timeout`` (a timedelta) becomes
    the store's timeout once connected. See agree()."""
    store, _, _ = agree(world, rendezvous_seconds, authenticated=True)
    store.set_timeout(timeout)
    return store


def agree(world, rendezvous_seconds, authenticated=False):
    """``(store, address, port)``: the store every instance reaches, the address this instance
    reached it on and its port. ``authenticated``: the job's store (_job_store.JobStore); else
    torch's TCPStore, whose server in instance 0 is multi-tenant so that an ``env://`` rendezvous on
    the same address and port in this process joins it instead of failing on a taken port. Several
    instances need popdist.init(); ``rendezvous_seconds`` bounds each step."""
    step = datetime.timedelta(seconds=rendezvous_seconds)
    if world == 1:
        master, offer = _start_master(world, step, authenticated)
        if not offer["ok"]:
            raise RendezvousError(offer["error"])
        return master, offer["candidates"][0], offer["port"]

    rank = _api.getInstanceIndex()
    # First every instance must be here, within the bound: one that exited (cleanly or not) or
    # is late is named by a TimeoutError on the others instead of leaving them in the broadcast.
    caller = "popdist.torch rendezvous"
    _agreement.mpi_allgather_json(None, rendezvous_seconds, caller)
    master, offer = None, None
    if rank == 0:
        # Only instance 0 reads MASTER_ADDR/MASTER_PORT: whatever goes wrong there reaches the
        # others through the broadcast instead of leaving them waiting in it.
        master, offer = _start_master(world, step, authenticated)
    offer = _agreement.mpi_broadcast_json(offer, 0)
    if not offer["ok"]:
        raise RendezvousError(offer["error"])

    candidates, port, token = offer["candidates"], offer["port"], offer["token"]
    clients = {}
    if rank == 0:
        reachable = list(range(len(candidates)))  # its own server: every offered address is its own
    else:
        reachable = []
        for index, address in enumerate(candidates):
            client = _probe(address, port, token, world, step, authenticated)
            if client is not None:
                reachable.append(index)
                clients[index] = client
    # Each instance probes each address for at most a step (a connect, then the store's token).
    probing = (len(candidates) + 1) * (rendezvous_seconds + PROBE_CONNECT_SECONDS)
    everyone = _agreement.mpi_allgather_json(reachable, probing, caller)
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


def _listen_address(candidates):
    """Where instance 0's store listens: 127.0.0.1 when every offered address is a loopback one (one
    host), else every interface (the job's store admits only the job; torch's TCPStore would too)."""
    if all(_is_loopback(address) for address in candidates):
        return LOOPBACK
    return "::" if any(":" in address for address in candidates) else "0.0.0.0"


def _is_loopback(address):
    try:
        return all(info[4][0].startswith("127.") or info[4][0] == "::1"
                   for info in socket.getaddrinfo(address, None, proto=socket.IPPROTO_TCP))
    except OSError:
        return False


class _Unreachable(Exception):
    """Instance 0 cannot reach its own store at the user's MASTER_ADDR (the message says so)."""


def _probe_own_address(user_address, port, step):
    """Every instance (and torch's or Lightning's env:// rendezvous) connects to MASTER_ADDR:
    instance 0 itself must reach its own listening store there, within one connect's time."""
    if user_address is None:
        return
    seconds = min(PROBE_CONNECT_SECONDS, step.total_seconds())
    try:
        with socket.create_connection((user_address, port), timeout=seconds):
            pass
    except OSError as error:
        raise _Unreachable(f"popdist.torch: instance 0 cannot reach its own rendezvous store at MASTER_ADDR:MASTER_PORT "
                           f"{user_address}:{port} within {seconds:g} s ({error.strerror or error}); set MASTER_ADDR "
                           "to an address of instance 0's host that every host reaches") from error


def _start_master(world, step, authenticated):
    """Instance 0: the store's server and the offer for the others, or the error for everyone."""
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
        # Instance 0's own client connects through candidates[0]. A user's MASTER_ADDR is probed
        # first with one TCP connect (_probe_own_address): torch's client would retry an address
        # that does not answer for the whole step, with a warning and a C++ stack trace per attempt.
        if authenticated:
            secret = _job_store.new_secret()
            server = _job_store.StoreServer(_listen_address(candidates), port, secret)
            _probe_own_address(user_address, server.port, step)
            store = _job_store.JobStore(candidates[0], server.port, secret, step)
            store.server = server  # the server lives as long as instance 0's store
            token = secret.hex()  # travels over MPI only
        else:
            listener = socket.socket(socket.AF_INET6 if ":" in _listen_address(candidates) else socket.AF_INET)
            listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            listener.bind((_listen_address(candidates), port))
            listener.listen(1024)
            _probe_own_address(user_address, listener.getsockname()[1], step)
            store = dist.TCPStore(candidates[0], listener.getsockname()[1], world, True, timeout=step,
                                  wait_for_workers=False, multi_tenant=True, master_listen_fd=listener.detach())
            token = secrets.token_hex(16)
            store.set(TOKEN_KEY, token)
    except _Unreachable as error:
        return None, {"ok": False, "error": str(error)}
    except Exception as error:  # torch raises DistNetworkError, DistStoreError or RuntimeError
        origin = " (MASTER_ADDR/MASTER_PORT)" if user_address or port else ""
        if isinstance(error, OSError) and error.errno == errno.EADDRINUSE:
            first_line = f"port {port} is taken (address already in use)"
        else:
            first_line = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        return None, {"ok": False, "error": f"popdist.torch: instance 0 could not start the rendezvous store on "
                                            f"{where}{origin} within {step.total_seconds():g} s: {first_line}"}
    return store, {"ok": True, "candidates": candidates, "port": store.port, "token": token}


def _probe(address, port, token, world, step, authenticated):
    """A client store on address:port if that is instance 0's store (its token), else None."""
    try:
        with socket.create_connection((address, port), timeout=min(PROBE_CONNECT_SECONDS, step.total_seconds())):
            pass
    except OSError:
        return None
    if authenticated:
        try:  # the handshake proves both sides know the secret
            return _job_store.JobStore(address, port, bytes.fromhex(token), step)
        except Exception:  # noqa: BLE001 - any failure means "not reachable as the store"
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
