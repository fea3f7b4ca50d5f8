"""The key-value store behind popdist.torch's process group, closed to processes outside the job.

torch's TCPStore has no authentication: anyone who reaches its port (any local user through
127.0.0.1, anyone on the network otherwise) can list its keys, read them and write keys the job
then reads. So popdist.torch uses this store instead: instance 0 serves it, and every connection
starts with a mutual challenge over a secret of 32 random bytes that the instances agreed through
MPI before any connection was made. A client that cannot answer the challenge is disconnected
before it may send a request; a server that cannot answer is not the job's store (the probe of a
candidate address relies on that). Requests are the c10d Store interface that gloo and
torch.distributed use (set, get, add, compare_set, check, wait, delete_key, num_keys).

Wire format, after the handshake: every message is a 4-byte big-endian length and a body; a
request body is one op byte and its fields (4-byte length + bytes each), a reply body is one
status byte and its fields. Values stay on instance 0; nothing is ever executed from the wire.
"""

import datetime
import hashlib
import hmac
import os
import socket
import struct
import threading

import torch.distributed as dist

SECRET_BYTES = 32
NONCE_BYTES = 32
HANDSHAKE_SECONDS = 10.0  # an outsider holding a connection open unanswered is dropped after this
MAX_MESSAGE_BYTES = 1 << 30  # what one request or reply may hold (a value sent through the store)

_SET, _GET, _ADD, _CAS, _CHECK, _WAIT, _DELETE, _NUM_KEYS = range(1, 9)
_OK, _TIMEOUT, _ERROR = range(3)

_StoreError = getattr(dist, "DistStoreError", RuntimeError)  # what torch's own stores raise


def new_secret():
    return os.urandom(SECRET_BYTES)


def _digest(secret, role, nonce):
    return hmac.new(secret, role + nonce, hashlib.sha256).digest()


def _read_exactly(sock, count):
    data = bytearray()
    while len(data) < count:
        chunk = sock.recv(min(count - len(data), 1 << 20))
        if not chunk:
            raise ConnectionError("the other side closed the connection")
        data += chunk
    return bytes(data)


def _send_message(sock, kind, *fields):
    body = bytes([kind]) + b"".join(struct.pack(">I", len(f)) + f for f in fields)
    sock.sendall(struct.pack(">I", len(body)) + body)


def _read_message(sock):
    (length,) = struct.unpack(">I", _read_exactly(sock, 4))
    if not 1 <= length <= MAX_MESSAGE_BYTES:
        raise ConnectionError(f"a message of {length} bytes (at most {MAX_MESSAGE_BYTES})")
    body = _read_exactly(sock, length)
    fields, at = [], 1
    while at < len(body):
        if at + 4 > len(body):
            raise ConnectionError("a truncated message")
        (size,) = struct.unpack(">I", body[at:at + 4])
        fields.append(body[at + 4:at + 4 + size])
        at += 4 + size
    return body[0], fields


def _as_bytes(value):
    return value if isinstance(value, bytes) else bytes(value) if isinstance(value, (bytearray, list)) else \
        str(value).encode()


class StoreServer:
    """Instance 0's side: a listening socket on ``address`` (``port`` 0: a free one) and a thread per
    authenticated connection; the values live in this process."""

    def __init__(self, address, port, secret):
        self._secret = secret
        self._values = {}
        self._changed = threading.Condition()
        family = socket.AF_INET6 if ":" in address else socket.AF_INET
        self._listener = socket.socket(family, socket.SOCK_STREAM)
        self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._listener.bind((address, port))
        self._listener.listen(1024)
        self.port = self._listener.getsockname()[1]
        threading.Thread(target=self._accept_loop, name="popdist-store", daemon=True).start()

    def _accept_loop(self):
        while True:
            try:
                connection, _ = self._listener.accept()
            except OSError:
                return  # closed
            threading.Thread(target=self._serve, args=(connection,), name="popdist-store-client", daemon=True).start()

    def close(self):
        """Stops accepting; the connections end with their clients."""
        try:
            # close() alone leaves the port listening while the accept thread is inside accept()
            self._listener.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass  # already shut down
        self._listener.close()

    def _serve(self, connection):
        with connection:
            try:
                connection.settimeout(HANDSHAKE_SECONDS)
                challenge = os.urandom(NONCE_BYTES)
                connection.sendall(challenge)
                answer = _read_exactly(connection, 32 + NONCE_BYTES)
                if not hmac.compare_digest(answer[:32], _digest(self._secret, b"client", challenge)):
                    return  # not the job: it learns nothing and may send nothing
                connection.sendall(_digest(self._secret, b"server", answer[32:]))
                connection.settimeout(None)
                while True:
                    op, fields = _read_message(connection)
                    _send_message(connection, *self._answer(op, fields))
            except (OSError, ConnectionError, struct.error):
                return

    def _answer(self, op, fields):
        values, changed = self._values, self._changed
        with changed:
            if op == _SET:
                values[fields[0]] = fields[1]
                changed.notify_all()
                return (_OK,)
            if op in (_GET, _WAIT):
                keys, seconds = (fields[:-1], float(fields[-1].decode()))
                if not changed.wait_for(lambda: all(k in values for k in keys), timeout=seconds):
                    return (_TIMEOUT, *[k for k in keys if k not in values])
                return (_OK, values[keys[0]]) if op == _GET else (_OK,)
            if op == _ADD:
                total = int(values.get(fields[0], b"0")) + int(fields[1])
                values[fields[0]] = str(total).encode()
                changed.notify_all()
                return (_OK, str(total).encode())
            if op == _CAS:
                key, expected, desired = fields
                current = values.get(key)
                if (current is None and expected == b"") or current == expected:
                    values[key] = current = desired
                    changed.notify_all()
                return (_OK, current if current is not None else expected)
            if op == _CHECK:
                return (_OK, b"1" if all(k in values for k in fields) else b"0")
            if op == _DELETE:
                return (_OK, b"1" if values.pop(fields[0], None) is not None else b"0")
            if op == _NUM_KEYS:
                return (_OK, str(len(values)).encode())
        return (_ERROR, f"unknown request {op}".encode())


class JobStore(dist.Store):
    """A client of instance 0's StoreServer at ``address:port``, usable as torch's ``store=``.
    Each thread that uses it has its own authenticated connection (gloo calls from its threads)."""

    def __init__(self, address, port, secret, timeout):
        super().__init__()
        self.address, self.port = address, port
        self._secret = secret
        self._timeout = timeout
        self._local = threading.local()
        self._connections = []  # every thread's, to close them all
        self._connections_lock = threading.Lock()
        self._connection()  # connect and authenticate now: a wrong address fails here

    def close(self):
        """Closes the connections of every thread (a later request connects again)."""
        with self._connections_lock:
            for connection in self._connections:
                connection.close()
            self._connections.clear()
        self._local = threading.local()

    def __del__(self):
        self.close()

    # -- the connection of this thread
    def _connection(self):
        connection = getattr(self._local, "connection", None)
        if connection is None:
            connection = self._local.connection = self._connect()
            with self._connections_lock:
                self._connections.append(connection)
        return connection

    def _connect(self):
        seconds = self._timeout.total_seconds()
        connection = socket.create_connection((self.address, self.port), timeout=min(seconds, HANDSHAKE_SECONDS))
        try:
            challenge = _read_exactly(connection, NONCE_BYTES)
            nonce = os.urandom(NONCE_BYTES)
            connection.sendall(_digest(self._secret, b"client", challenge) + nonce)
            if not hmac.compare_digest(_read_exactly(connection, 32), _digest(self._secret, b"server", nonce)):
                raise ConnectionError("the server did not prove it knows the job's secret")
            connection.settimeout(None)
            connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            return connection
        except BaseException:
            connection.close()
            raise

    def _request(self, op, *fields, wait_seconds=None):
        connection = self._connection()
        # a reply comes at once, except for get/wait: those answer within their own timeout
        connection.settimeout((wait_seconds or 0) + HANDSHAKE_SECONDS)
        try:
            _send_message(connection, op, *fields)
            status, reply = _read_message(connection)
        except (OSError, ConnectionError) as error:
            self._local.connection = None
            with self._connections_lock:
                # close() from another thread may have closed and dropped it already (that is
                # what made the request fail): the error below is the store's, not the list's
                if connection in self._connections:
                    self._connections.remove(connection)
            connection.close()
            raise _StoreError(f"popdist.torch: the job's store at {self.address}:{self.port} is unreachable: "
                              f"{error}") from None
        if status == _TIMEOUT:
            missing = ", ".join(k.decode(errors="replace") for k in reply)
            raise _StoreError(f"popdist.torch: the job's store had no key(s) {missing} within {wait_seconds:g} s "
                              f"(an instance did not arrive)")
        if status != _OK:
            raise _StoreError(b"".join(reply).decode(errors="replace"))
        return reply

    def _seconds(self, timeout=None):
        timeout = self._timeout if timeout is None else timeout
        seconds = timeout.total_seconds() if isinstance(timeout, datetime.timedelta) else float(timeout)
        return seconds if seconds > 0 else 365 * 24 * 3600.0  # c10d: zero means no limit

    # -- the c10d Store interface
    def set(self, key, value):
        self._request(_SET, key.encode(), _as_bytes(value))

    def get(self, key):
        seconds = self._seconds()
        return self._request(_GET, key.encode(), str(seconds).encode(), wait_seconds=seconds)[0]

    def add(self, key, amount):
        return int(self._request(_ADD, key.encode(), str(int(amount)).encode())[0])

    def compare_set(self, key, expected, desired):
        return self._request(_CAS, key.encode(), _as_bytes(expected), _as_bytes(desired))[0]

    def check(self, keys):
        return self._request(_CHECK, *[k.encode() for k in keys])[0] == b"1"

    def wait(self, keys, timeout=None):
        seconds = self._seconds(timeout)
        self._request(_WAIT, *[k.encode() for k in keys], str(seconds).encode(), wait_seconds=seconds)

    def delete_key(self, key):
        return self._request(_DELETE, key.encode())[0] == b"1"

    def num_keys(self):
        return int(self._request(_NUM_KEYS)[0])

    def set_timeout(self, timeout):
        self._timeout = timeout
        super().set_timeout(timeout)
