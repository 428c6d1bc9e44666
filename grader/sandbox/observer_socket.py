"""The private Unix socket the observer in a notebook kernel connects back on: in the
kernel's own 0700 folder, and only the genuine observer gets in (a peer must run as the
student's uid, when known, and say the worker's secret at once); any other peer is closed
and the wait goes on. The connect deadline counts from the moment the kernel starts
running the bootstrap (a kernel still flushing a flood of output is not late)."""

from __future__ import annotations

import hmac
import select
import socket
import struct
import time
from collections.abc import Callable

from .channel import WorkerFailure
from .deadline import Deadline

PROBE_CONNECT_SECONDS = 15.0  # from the moment the kernel starts running the bootstrap
SECRET_WAIT_SECONDS = 1.0  # a connecting peer must say the secret this fast


def genuine_peer(peer: socket.socket, secret: str, until: float, uid: int | None) -> bool:
    """Whether a peer on the observer socket is this worker's kernel: it runs as the
    student's user `uid` (when known, by SO_PEERCRED) and says `secret` before `until`."""
    try:
        if uid is not None:
            creds = peer.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
            if struct.unpack("3i", creds)[1] != uid:
                return False
        expected = secret.encode("ascii") + b"\n"
        said = b""
        while len(said) < len(expected) and b"\n" not in said:
            peer.settimeout(max(0.001, until - time.monotonic()))
            chunk = peer.recv(len(expected) - len(said))
            if not chunk:
                return False
            said += chunk
        peer.settimeout(None)
        return hmac.compare_digest(said, expected)
    except OSError:  # timeouts included
        return False


def accept_observer(
    server: socket.socket,
    secret: str,
    deadline: Deadline,
    uid: int | None,
    bootstrap_error: Callable[[], str | None],
    running_since: Callable[[], float | None],
) -> socket.socket | WorkerFailure:
    """The genuine observer's connection on `server` (non-blocking, listening), or why
    none came: `bootstrap_error()` says whether the kernel answered the bootstrap with an
    error (and takes what the kernel published), `running_since()` when the kernel began
    running it (None: not yet)."""
    while True:
        broken = bootstrap_error()
        if broken:
            return WorkerFailure(
                "died",
                f"the observer could not start in the kernel: {broken} "
                "(did the notebook replace or patch a standard module?)",
            )
        now = time.monotonic()
        began = running_since()
        connect_by = float("inf") if began is None else began + PROBE_CONNECT_SECONDS
        passed = deadline.passed()
        if passed is not None or now >= connect_by:
            if began is None:
                return WorkerFailure(
                    "timeout",
                    "the kernel was still busy (flushing output?) when the time to "
                    "load ran out; the observer never started",
                )
            return WorkerFailure(
                "died",
                "the observer could not start in the kernel "
                "(did the notebook replace standard modules, or block the kernel?)",
            )
        ready, _, _ = select.select([server], [], [], min(0.05, deadline.pause(), max(0.0, connect_by - now)))
        if not ready:
            continue
        try:
            peer, _ = server.accept()
        except OSError:
            continue
        if genuine_peer(peer, secret, min(connect_by, time.monotonic() + SECRET_WAIT_SECONDS), uid):
            return peer
        peer.close()
