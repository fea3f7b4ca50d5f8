"""The job's store (popdist._job_store) on its own, in one process: the c10d Store operations gloo
and torch.distributed use, the handshake that admits only holders of the secret, and a gloo group
over it. Real sockets on 127.0.0.1, real torch."""

import datetime
import socket
import threading

import pytest

torch = pytest.importorskip("torch", reason="popdist.torch needs PyTorch (pip install torch)")
import torch.distributed as dist  # noqa: E402

from popdist import _job_store  # noqa: E402

SECONDS = datetime.timedelta(seconds=5)


@pytest.fixture
def served():
    secret = _job_store.new_secret()
    server = _job_store.StoreServer("127.0.0.1", 0, secret)
    yield server, secret
    server.close()


def test_the_store_operations_behave_as_c10d_defines_them(served):
    server, secret = served
    store = _job_store.JobStore("127.0.0.1", server.port, secret, SECONDS)
    other = _job_store.JobStore("127.0.0.1", server.port, secret, SECONDS)
    store.set("a", b"1")
    assert other.get("a") == b"1"
    assert store.add("n", 2) == 2 and other.add("n", 3) == 5 and store.get("n") == b"5"
    assert store.compare_set("c", b"", b"first") == b"first"       # absent + empty expected: set
    assert store.compare_set("c", b"wrong", b"second") == b"first"  # mismatch: the current value
    assert store.compare_set("c", b"first", b"third") == b"third"
    assert store.check(["a", "n"]) and not store.check(["a", "missing"])
    assert store.num_keys() == 3
    assert store.delete_key("a") and not store.delete_key("a")
    # a get waits for the key another client sets later
    # (joined before the clients close: the get can return before the setter has read its reply)
    setter = threading.Timer(0.2, other.set, args=("late", b"x"))
    setter.start()
    assert store.get("late") == b"x"
    setter.join()
    store.wait(["late", "n"])
    store.close()
    other.close()


def test_a_missing_key_fails_within_the_timeout_naming_it(served):
    server, secret = served
    store = _job_store.JobStore("127.0.0.1", server.port, secret, datetime.timedelta(seconds=0.5))
    with pytest.raises(RuntimeError, match="no key.*never-set.*0.5 s"):
        store.get("never-set")
    with pytest.raises(RuntimeError, match="never-set"):
        store.wait(["never-set"], datetime.timedelta(seconds=0.3))
    store.close()


def test_without_the_secret_nothing_is_read_or_written(served):
    server, secret = served
    with pytest.raises(ConnectionError):
        _job_store.JobStore("127.0.0.1", server.port, _job_store.new_secret(), SECONDS)
    # torch's own client (which could list the keys of a TCPStore) gets no answer
    with pytest.raises(Exception):  # noqa: B017 - torch raises its own error types here
        dist.TCPStore("127.0.0.1", server.port, None, False, timeout=datetime.timedelta(seconds=2))
    store = _job_store.JobStore("127.0.0.1", server.port, secret, SECONDS)
    assert store.num_keys() == 0
    store.close()


def test_a_server_without_the_secret_is_not_the_job_store():
    # e.g. another job's store on a peer's own loopback, found while probing candidate addresses
    other_job = _job_store.StoreServer("127.0.0.1", 0, _job_store.new_secret())
    try:
        with pytest.raises(ConnectionError):
            _job_store.JobStore("127.0.0.1", other_job.port, _job_store.new_secret(), SECONDS)
    finally:
        other_job.close()
    # an impostor that accepts any answer still cannot prove it knows the secret
    impostor = socket.create_server(("127.0.0.1", 0))

    def pretend():
        connection, _ = impostor.accept()
        with connection:
            connection.sendall(b"c" * _job_store.NONCE_BYTES)
            connection.recv(64)
            connection.sendall(b"p" * 32)
            connection.recv(1)

    thread = threading.Thread(target=pretend)
    thread.start()
    with pytest.raises(ConnectionError, match="did not prove"):
        _job_store.JobStore("127.0.0.1", impostor.getsockname()[1], _job_store.new_secret(), SECONDS)
    thread.join()
    impostor.close()


def test_gloo_uses_it_from_its_own_threads(served):
    server, secret = served
    code = f"""
import datetime, torch, torch.distributed as dist
from popdist import _job_store
store = _job_store.JobStore("127.0.0.1", {server.port}, bytes.fromhex("{secret.hex()}"), datetime.timedelta(seconds=30))
dist.init_process_group("gloo", store=store, rank=1, world_size=2)
t = torch.tensor([2.0]); dist.all_reduce(t); assert t.item() == 3.0, t
dist.destroy_process_group()
"""
    import subprocess
    import sys
    peer = subprocess.Popen([sys.executable, "-c", code])
    store = _job_store.JobStore("127.0.0.1", server.port, secret, datetime.timedelta(seconds=30))
    dist.init_process_group("gloo", store=store, rank=0, world_size=2)
    try:
        t = torch.tensor([1.0])
        dist.all_reduce(t)
        assert t.item() == 3.0
    finally:
        dist.destroy_process_group()
        store.close()
    assert peer.wait(timeout=60) == 0
