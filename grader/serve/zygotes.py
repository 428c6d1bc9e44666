"""The worker zygotes a server holds (issue 26, goal 1): a served `.py` grade forks its
student's worker from one, as a batch's grader process does (sandbox/worker_zygote.py),
instead of starting, confining and importing a fresh interpreter on its critical path.

One zygote per preimport set a lab may ask for (none, numpy: worker_zygote.OPTIONAL),
when the grader is root (where a batch would fork: every worker leases a uid; the grade's
child checks the rest, no user namespace of the student's own): the one without numpy with
the server, numpy's on the first grade whose lab needs it (that grade's child asks for it,
`ask`, and starts its own worker the cold way: numpy's zygote is about 25 MB and 80 ms of
CPU that a server of tree-lab grades never uses), each again when it has died. The server
only starts them and holds two sockets of each: the control socket (its end closed, the
zygote takes no new grade) and the door, inherited
by each grade's child, which sends its own channel through it. The server never sends a
request, so it never holds a path, plan or fd of a grade. A zygote has no death signal
tied to the server: when the server ends it finishes the grades still in flight and ends
with its last channel (zygote_process._serve)."""

from __future__ import annotations

import os
import socket
import subprocess
from dataclasses import dataclass
from pathlib import Path

from ..sandbox import worker_zygote
from ..sandbox.student_env import scrubbed_env

PREIMPORT_SETS: tuple[tuple[str, ...], ...] = ((), worker_zygote.OPTIONAL)
AT_START: tuple[str, ...] = ()  # the set started with the server; the others when first asked for


@dataclass
class Held:
    """One zygote: its process, the server's end of its control socket, its door."""

    preimport: tuple[str, ...]
    process: subprocess.Popen
    control: socket.socket
    door: socket.socket

    def fds(self) -> tuple[int, ...]:
        """What a grade's child closes (the door it keeps)."""
        return (self.control.fileno(),)


def wanted() -> bool:
    """Where a batch's grader process would fork its workers: root (a leased uid per worker)."""
    return os.geteuid() == 0 and worker_zygote.turned_on()


def start(preimport: tuple[str, ...]) -> Held | None:
    """A zygote importing `preimport`, not waited for (its doors' first callers wait for
    its `ready`); None when it can't be started (served grades then spawn as cold ones)."""
    control, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    door, door_theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    try:
        process = subprocess.Popen(
            worker_zygote._command(theirs.fileno(), preimport, door_theirs.fileno()),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            cwd="/",
            env=scrubbed_env(Path("/nonexistent")),  # as a batch's zygote
            pass_fds=(theirs.fileno(), door_theirs.fileno()),
            start_new_session=True,  # no terminal's Ctrl-C: it ends by its channels
        )
    except OSError:
        control.close()
        door.close()
        return None
    finally:
        theirs.close()
        door_theirs.close()
    return Held(preimport, process, control, door)


def refresh(held: dict[tuple[str, ...], Held], sets: set[tuple[str, ...]]) -> None:
    """Start those of `sets` missing or dead, and hand the doors to the grades forked next."""
    if not wanted():
        return
    for preimport in (preimport for preimport in PREIMPORT_SETS if preimport in sets):
        zygote = held.get(preimport)
        if zygote is not None and zygote.process.poll() is not None:
            close(zygote)
            zygote = None
        if zygote is None:
            made = start(preimport)
            if made is None:
                held.pop(preimport, None)
                continue
            held[preimport] = made
    worker_zygote.serve_doors({preimport: zygote.door for preimport, zygote in held.items()})


def reap(held: dict[tuple[str, ...], Held]) -> None:
    for zygote in held.values():
        zygote.process.poll()


def close(zygote: Held) -> None:
    """The server's ends closed: the zygote ends once its grades in flight have."""
    zygote.control.close()
    zygote.door.close()


def close_all(held: dict[tuple[str, ...], Held]) -> None:
    for zygote in held.values():
        close(zygote)
    held.clear()
    worker_zygote.serve_doors({})


def ask(preimport: tuple[str, ...]) -> None:
    """In a served grade's child whose lab needs a zygote the server doesn't hold yet: ask
    the server to start it for the grades after this one (the server's own code and
    environment; only our uid reaches its socket). Not waited for, errors ignored: this
    grade starts its worker the cold way either way."""
    from . import address, wire

    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC) as sock:
            sock.settimeout(1.0)
            sock.connect(address.socket_path())
            wire.send(sock, ("zygote", list(preimport)))
    except (OSError, ValueError, address.Untrusted):
        pass
