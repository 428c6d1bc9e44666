"""The server's loop: listen on this installation's socket, check each caller, fork one
child per grade (handover.py), reap them, and exit when idle, stale or stopped.

The server never runs grading code: between requests it holds only what its imports
made (preload.py) and a few counters; each grade is a fresh fork of that state, so
nothing of one request reaches the next. A caller is served only when it is our own uid
(SO_PEERCRED) and its interpreter, environment and process context are ours
(context.py); the code is checked unchanged before each request (staleness.py). Any
other case gets an answer that sends the client down the cold path (`("cold", why)`).

A lock file beside the socket (`.lock`, held with `flock` for the server's life) keeps
two servers of one installation from sharing a socket: the second one says where the
first is and exits."""

from __future__ import annotations

import fcntl
import gc
import os
import select
import signal
import socket
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from . import address, context, preload, staleness, wire, zygotes
from .handover import Request, become_grade

REQUEST_SECONDS = 10.0  # how long a connected caller may take to send its request
DEFAULT_IDLE = 15 * 60.0


class ServeError(Exception):
    """The server can't start here (a one-line reason, for `abgrade serve` to print)."""


@dataclass
class Server:
    """One server's state: its socket and lock, what it compares callers against, and its
    counters (for `--status`); `children` are the pids of grades still running."""

    path: str
    listener: socket.socket
    lock_fd: int
    idle: float
    described: dict
    process: dict[str, str]
    watched: staleness.Snapshot
    handlers: dict
    started: float = field(default_factory=time.monotonic)
    last: float = field(default_factory=time.monotonic)
    served: int = 0
    cold: int = 0
    children: set[int] = field(default_factory=set)
    zygotes: dict[tuple[str, ...], zygotes.Held] = field(default_factory=dict)
    zygote_sets: set[tuple[str, ...]] = field(default_factory=lambda: {zygotes.AT_START})  # asked for so far


def start(idle: float = DEFAULT_IDLE) -> Server:
    """Take the socket (raises ServeError when there is none to take, or another server
    holds it) and import everything; the server is ready to `serve` when this returns."""
    handlers = {number: signal.getsignal(number) for number in signal.valid_signals()}
    handlers = {number: handler for number, handler in handlers.items() if handler is not None}
    described = context.described()
    try:
        path = address.socket_path(make=True)
    except (address.Untrusted, OSError) as exc:
        raise ServeError(str(exc)) from None
    lock_fd = os.open(f"{path}.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
    try:
        fcntl.flock(lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(lock_fd)
        raise ServeError(
            f"a server of this installation is already running at {path} (`abgrade serve --status`)"
        ) from None
    try:
        packages = preload.preload()
        gc.collect()
        gc.freeze()  # the imports' objects: a child's collections neither walk nor copy their pages
        watched = staleness.snapshot(staleness.watched(staleness.roots(packages)))
        process = context.process_facts("self")
        # listen only now: a client never waits for the imports (no socket: it grades cold)
        if os.path.lexists(path):
            os.unlink(path)  # a server that ended without removing it (we hold the lock)
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC)
        mask = os.umask(0o177)
        try:
            listener.bind(path)
        finally:
            os.umask(mask)
        listener.listen(64)
    except BaseException:
        _remove(path)
        os.close(lock_fd)
        raise
    server = Server(path, listener, lock_fd, idle, described, process, watched, handlers)
    zygotes.refresh(server.zygotes, server.zygote_sets)  # importing while the first client comes (it waits for `ready`)
    return server


def serve(server: Server, on_ready: Callable[[], None] = lambda: None) -> str:
    """Serve until idle, stale or stopped; returns why it ended. The socket and lock go
    on every way out (not in the children: they leave by os._exit)."""
    me = os.getpid()
    previous = signal.signal(signal.SIGTERM, _stop_by_signal)
    try:
        on_ready()
        while True:
            _reap(server)
            left = server.idle - (time.monotonic() - server.last)
            if left <= 0:
                return "idle"
            # while a grade runs, wake often to reap it (its CPU time then shows at once in
            # ours, for bench/bench_tree.py --serve, and --status counts it right)
            ready, _, _ = select.select([server.listener], [], [], min(left, 0.05 if server.children else 5.0))
            if not ready:
                continue
            try:
                connection, _ = server.listener.accept()
            except OSError:
                continue
            ended = _answer(server, connection)
            if ended:
                return ended
    except _Stopped:
        return "stopped"
    finally:
        if os.getpid() == me:
            signal.signal(signal.SIGTERM, previous)
            server.listener.close()
            zygotes.close_all(server.zygotes)  # each ends once its grades in flight have
            _remove(server.path)
            os.close(server.lock_fd)


class _Stopped(Exception):
    pass


def _stop_by_signal(number: int, frame: object) -> None:
    raise _Stopped


def _answer(server: Server, connection: socket.socket) -> str | None:
    """Answer one caller; a reason to end the server, or None."""
    fds: list[int] = []
    try:
        pid, uid, _gid = wire.peer(connection)
        if uid != os.geteuid():
            wire.send(connection, ("cold", "another user"))
            return None
        connection.settimeout(REQUEST_SECONDS)
        message, fds = wire.receive(connection)
        connection.settimeout(None)
        if message is None:
            return None
        if message[0] == "status":
            wire.send(connection, ("status", _status(server)))
            return None
        if message[0] == "zygote":  # a grade's child whose lab needs one not started yet (zygotes.ask)
            preimport = tuple(message[1]) if len(message) == 2 and isinstance(message[1], list) else None
            if preimport in zygotes.PREIMPORT_SETS and preimport not in server.zygote_sets:
                server.zygote_sets.add(preimport)
                zygotes.refresh(server.zygotes, server.zygote_sets)
            return None
        if message[0] == "stop":
            wire.send(connection, ("stopping", os.getpid()))
            return "stopped"
        if message[0] != "grade" or len(message) != 5 or len(fds) != 4:
            wire.send(connection, ("cold", "not a grade"))
            return None
        server.last = time.monotonic()
        stale = staleness.changed(server.watched)
        if stale is not None:
            server.cold += 1
            wire.send(connection, ("cold", f"stale: {stale} changed"))
            return "stale"
        _, described, argv, umask, _ = message
        why = context.difference(server.described, described) or context.process_difference(server.process, pid)
        if why is not None or not _plain_words(argv) or not isinstance(umask, int):
            server.cold += 1
            wire.send(connection, ("cold", why or "not a command line"))
            return None
        request = Request(list(argv), umask, dict(described["environ"]), fds)
        child = _fork(server, connection, request)
        fds = []  # the child's now (and closed below in ours)
        server.children.add(child)
        server.served += 1
        return None
    except (OSError, ValueError) as exc:
        try:
            wire.send(connection, ("cold", f"the server could not take it: {exc}"))
        except OSError:
            pass
        return None
    finally:
        wire.close_all(fds)
        connection.close()


def _fork(server: Server, connection: socket.socket, request: Request) -> int:
    """Fork the request's child (it never returns here); in the server, close what was
    handed over and return the child's pid."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    zygotes.refresh(server.zygotes, server.zygote_sets)  # one that died: a new one, for this grade and the next
    held = tuple(fd for zygote in server.zygotes.values() for fd in zygote.fds())
    pid = os.fork()
    if pid == 0:
        become_grade(connection, request, server.handlers, (server.listener.fileno(), server.lock_fd, *held))
    wire.close_all(request.fds)
    return pid


def _plain_words(argv: object) -> bool:
    return isinstance(argv, list) and bool(argv) and all(isinstance(word, str) for word in argv)


def _reap(server: Server) -> None:
    zygotes.reap(server.zygotes)
    for pid in list(server.children):
        try:
            done, _ = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            done = pid
        if done:
            server.children.discard(pid)


def _status(server: Server) -> dict:
    now = time.monotonic()
    return {
        "pid": os.getpid(),
        "path": server.path,
        "up": round(now - server.started, 1),
        "idle_left": round(max(0.0, server.idle - (now - server.last)), 1),
        "served": server.served,
        "cold": server.cold,
        "running": len(server.children),
        "zygotes": sorted(zygote.process.pid for zygote in server.zygotes.values() if zygote.process.poll() is None),
    }


def _remove(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass
