"""The worker zygotes a server holds (issue 26, goal 1): a served `.py` grade forks its
student's worker from one, as a batch's grader process does (sandbox/worker_zygote.py),
instead of starting, confining and importing a fresh interpreter on its critical path.

One zygote per preimport set a lab may ask for (none, numpy: worker_zygote.OPTIONAL),
started with the server when the grader is root (where a batch would fork: every worker
leases a uid; the grade's child checks the rest, no user namespace of the student's own),
and again when one has died. The server only starts them and holds two sockets of each:
the control socket (its end closed, the zygote takes no new grade) and the door, inherited
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


def refresh(held: dict[tuple[str, ...], Held]) -> None:
    """Start what is missing or has died, and hand the doors to the grades forked next."""
    if not wanted():
        return
    for preimport in PREIMPORT_SETS:
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
