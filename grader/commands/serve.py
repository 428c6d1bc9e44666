"""`abgrade serve`: a warm grader for this user and installation (grader/serve/). In the
foreground by default; `--detach` starts it in the background and returns once it
serves (or says why it can't); `--status` and `--stop` ask the running one."""

from __future__ import annotations

import argparse
import os
import sys

from .common import EXIT_OK, EXIT_USAGE, UsageError


def register(commands: argparse._SubParsersAction) -> None:
    serve = commands.add_parser(
        "serve",
        help="keep a grader running, so that each `abgrade grade` starts warm",
        description=(
            "Import the grader once and fork a fresh child for each `abgrade grade` of this user and "
            "installation: the same grade, output and exit code as without it, minus the start-up. "
            "It exits after --idle seconds without a grade, or when the grader's code changes."
        ),
    )
    which = serve.add_mutually_exclusive_group()
    which.add_argument("--detach", action="store_true", help="run in the background; print where and its pid")
    which.add_argument("--status", action="store_true", help="say whether a server runs, and since when")
    which.add_argument("--stop", action="store_true", help="stop the running server")
    serve.add_argument(
        "--idle", type=float, default=15 * 60, metavar="SECONDS", help="exit after this long without a grade (900)"
    )
    serve.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    if args.idle <= 0:
        raise UsageError(f"--idle {args.idle:g}: give a number of seconds above 0, e.g. --idle 600")
    if args.status:
        return _status()
    if args.stop:
        return _stop()
    if args.detach:
        return _detach(args.idle)
    return _foreground(args.idle)


def _foreground(idle: float) -> int:
    from ..serve.server import ServeError, serve, start

    try:
        server = start(idle)
    except ServeError as exc:
        print(f"abgrade serve: {exc}", file=sys.stderr)
        return EXIT_USAGE

    def ready() -> None:
        print(f"abgrade serve: serving at {server.path} (pid {os.getpid()}; Ctrl-C stops it)", flush=True)

    try:
        why = serve(server, ready)
    except KeyboardInterrupt:
        why = "interrupted"
    print(f"abgrade serve: stopped ({why})", flush=True)
    return EXIT_OK


def _detach(idle: float) -> int:
    """Fork a server into its own session (twice, so it is no session leader), with
    /dev/null for its streams and no descriptor of ours kept but the one that says it is
    ready; wait for that line and print it."""
    read_end, write_end = os.pipe()
    first = os.fork()
    if first == 0:  # pragma: no cover - the daemon's side (tests see its effects)
        try:
            os.close(read_end)
            os.setsid()
            if os.fork():
                os._exit(0)
            _daemon(idle, write_end)
        finally:
            os._exit(0)
    os.close(write_end)
    os.waitpid(first, 0)
    chunks = []
    while chunk := os.read(read_end, 4096):
        chunks.append(chunk)
    os.close(read_end)
    said = b"".join(chunks).decode("utf-8", "replace").strip()
    if said.startswith("ok "):
        pid, _, path = said[3:].partition(" ")
        print(f"abgrade serve: serving at {path} (pid {pid}; `abgrade serve --stop` stops it)")
        return EXIT_OK
    print(f"abgrade serve: {said.removeprefix('error ') or 'the server did not start'}", file=sys.stderr)
    return EXIT_USAGE


def _daemon(idle: float, ready_fd: int) -> None:  # pragma: no cover - runs detached
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    os.close(devnull)
    os.closerange(3, ready_fd)
    os.closerange(ready_fd + 1, _max_fd())
    os.set_inheritable(ready_fd, False)
    os.chdir("/")
    from ..serve.server import ServeError, serve, start

    try:
        server = start(idle)
    except BaseException as exc:  # noqa: BLE001 - said to the caller, which prints it
        reason = str(exc) if isinstance(exc, ServeError) else f"the server could not start: {exc!r}"
        os.write(ready_fd, f"error {' '.join(reason.split())}\n".encode())
        os.close(ready_fd)
        return

    def ready() -> None:
        os.write(ready_fd, f"ok {os.getpid()} {server.path}\n".encode())
        os.close(ready_fd)

    serve(server, ready)


def _max_fd() -> int:
    try:
        return max(int(name) for name in os.listdir("/proc/self/fd")) + 1
    except (OSError, ValueError):
        return 1024


def _ask(message: tuple) -> tuple | None:
    """The running server's answer to `message`, or None when none runs."""
    import socket

    from ..serve import address, wire

    try:
        path = address.socket_path()
    except (address.Untrusted, OSError) as exc:
        raise UsageError(str(exc)) from None
    if not address.our_socket(path):
        return None
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        try:
            sock.connect(path)
            wire.send(sock, message)
            reply, fds = wire.receive(sock)
            wire.close_all(fds)
            if message[0] == "stop":
                while sock.recv(64):  # the server's end closes as it exits
                    pass
        except (OSError, ValueError):
            return None
    return reply


def _status() -> int:
    reply = _ask(("status",))
    if reply is None or reply[0] != "status":
        print("abgrade serve: no server runs for this installation")
        return 1
    s = reply[1]
    print(
        f"abgrade serve: serving at {s['path']} (pid {s['pid']}, up {s['up']:g} s, idle out in {s['idle_left']:g} s; "
        f"{s['served']} served, {s['cold']} sent cold, {s['running']} running)"
        + (f"; worker zygotes: pid {', '.join(map(str, s['zygotes']))}" if s.get("zygotes") else "")
    )
    return EXIT_OK


def _stop() -> int:
    reply = _ask(("stop",))
    if reply is None or reply[0] != "stopping":
        print("abgrade serve: no server runs for this installation")
        return EXIT_OK
    _wait_gone(reply[1])
    print(f"abgrade serve: stopped the server (pid {reply[1]})")
    return EXIT_OK


def _wait_gone(pid: int, seconds: float = 30.0) -> None:
    """Return once process `pid` is gone (the server removes its socket, then exits)."""
    import time

    end = time.monotonic() + seconds
    pause = 0.005
    while time.monotonic() < end:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        except PermissionError:
            return
        time.sleep(pause)
        pause = min(pause * 2, 0.2)
