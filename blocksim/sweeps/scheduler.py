"""Reaching a Dask scheduler (`blocksim sweep --scheduler ADDRESS`) within seconds, or
saying in one line why not.

distributed's Client, pointed at an address where no scheduler answers, waits for its
timeout with nothing to show; pointed at an HTTP server (the dashboard's port 8787, given
for the scheduler's 8786 often enough) it reads the HTTP reply as the length of a message
and tries to allocate exabytes. So a plain TCP probe goes first: a Dask scheduler sends its
handshake as soon as a connection is accepted (`distributed.comm.core`, both ends write
theirs first), 8 bytes of length then a small message; anything else, or silence, is
refused with what answered and, for the dashboard's port, the scheduler's. Only a TLS
address, whose server waits for the client to speak, is probed by the connection alone.
(The scheduler logs the probe, at INFO level, as a connection closed before its handshake
completed.)
"""
from __future__ import annotations

import logging
import socket
import time
from typing import Any

from blocksim.errors import BlocksimError

log = logging.getLogger(__name__)

CONNECT_SECONDS = 5.0  # to connect and hear the scheduler's handshake
CLIENT_SECONDS = 10  # then for distributed's Client to finish connecting
SCHEDULER_PORT, DASHBOARD_PORT = 8786, 8787
_LARGEST_HANDSHAKE = 1 << 24  # bytes: a scheduler's is well under a kilobyte


def connect(address: str) -> Any:
    """A distributed Client connected to the scheduler at `address` (needs the `dask`
    extra); BlocksimError in one line naming the address if none answers there."""
    try:
        from distributed import Client
        from distributed.comm.addressing import parse_address, parse_host_port
    except ImportError:
        raise BlocksimError("--scheduler needs Dask: pip install 'blocksim[dask]'") from None
    try:
        scheme, location = parse_address(address)
        host, port = parse_host_port(location, default_port=SCHEDULER_PORT) \
            if scheme in ("tcp", "tls") else (None, None)
    except (TypeError, ValueError) as exc:
        raise BlocksimError(f"--scheduler {address}: not an address ({exc}); a scheduler's "
                            f"is tcp://HOST:{SCHEDULER_PORT}") from None
    if host is not None:
        probe(address, host, int(port), speaks_first=scheme == "tcp")
    try:
        return Client(address, timeout=f"{CLIENT_SECONDS}s")
    except Exception as exc:  # OSError, TimeoutError, a protocol that is not Dask's ...
        raise BlocksimError(f"--scheduler {address}: cannot connect: "
                            f"{type(exc).__name__}: {exc}") from None


def probe(address: str, host: str, port: int, speaks_first: bool = True,
          seconds: float | None = None) -> None:
    """BlocksimError unless a Dask scheduler (as far as its first bytes tell) answers at
    host:port within `seconds` (CONNECT_SECONDS)."""
    seconds = CONNECT_SECONDS if seconds is None else seconds
    deadline = time.monotonic() + seconds
    hint = _port_hint(host, port)
    try:
        sock = socket.create_connection((host, port), timeout=seconds)
    except socket.timeout:
        raise BlocksimError(f"--scheduler {address}: no answer within {seconds:g} s{hint}"
                            ) from None
    except ConnectionRefusedError:
        raise BlocksimError(f"--scheduler {address}: nothing listens there (connection "
                            f"refused); is the Dask scheduler running? (`dask scheduler` "
                            f"prints its address){hint}") from None
    except OSError as exc:  # an unknown host, no route ...
        raise BlocksimError(f"--scheduler {address}: cannot connect: "
                            f"{exc.strerror or exc}{hint}") from None
    with sock:
        if not speaks_first:
            return
        first = _read(sock, 8, deadline)
        if first is None:  # silence: not a Dask scheduler; an HTTP server, say?
            answer = _http_answer(sock)
            what = ("an HTTP server answers there (a Dask dashboard?), not a Dask scheduler"
                    if answer else f"no Dask scheduler answered within {seconds:g} s")
            raise BlocksimError(f"--scheduler {address}: {what}{hint}")
        if not first:
            raise BlocksimError(f"--scheduler {address}: the connection was closed at once:"
                                f" not a Dask scheduler{hint}")
        if first.startswith(b"HTTP/") or not _plausible_length(first):
            raise BlocksimError(f"--scheduler {address}: what answers there does not speak "
                                f"Dask's protocol{hint}")
    log.debug("a Dask scheduler answers at %s", address)


def _port_hint(host: str, port: int) -> str:
    if port != DASHBOARD_PORT:
        return ""
    shown_host = f"[{host}]" if ":" in host else host
    return (f" ({DASHBOARD_PORT} is the Dask dashboard's port; the scheduler's is "
            f"{SCHEDULER_PORT}: --scheduler tcp://{shown_host}:{SCHEDULER_PORT})")


def _read(sock: socket.socket, size: int, deadline: float) -> bytes | None:
    """Up to `size` bytes before the deadline: b"" if the peer closed, None if it said
    nothing at all."""
    data = b""
    while len(data) < size:
        left = deadline - time.monotonic()
        if left <= 0:
            break
        sock.settimeout(left)
        try:
            chunk = sock.recv(size - len(data))
        except socket.timeout:
            break
        except OSError:
            return data
        if not chunk:
            return data
        data += chunk
    return data or None


def _http_answer(sock: socket.socket) -> bool:
    """Whether a silent server answers a plain HTTP request (a dashboard does at once)."""
    try:
        sock.sendall(b"HEAD / HTTP/1.0\r\n\r\n")
    except OSError:
        return False
    reply = _read(sock, 5, time.monotonic() + 1.0)
    return bool(reply) and reply.startswith(b"HTTP/")


def _plausible_length(first: bytes) -> bool:
    """The 8-byte length of a handshake, in either byte order (the scheduler's machine
    writes its own)."""
    if len(first) < 8:
        return False
    return min(int.from_bytes(first, "little"), int.from_bytes(first, "big")) \
        <= _LARGEST_HANDSHAKE
