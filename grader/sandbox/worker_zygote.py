"""A cheaper fresh `.py` worker in a batch (issue 26, goal 2): a "worker zygote" per grader
process, started as a `.py` worker is (`python -I -S -u -c`, the worker's bootstrap in
front), imports what the observer and most submissions import (numpy among them) once, and
forks one fresh worker per submission. Each fork takes the steps a worker started with
`unshare ... python -I -S -u -c BOOTSTRAP` takes, in the same order (its own session, death
with its parent, the cgroups, namespaces and a fork for the PID namespace, a fresh /proc,
then confine.py: mounts, capability bounding set, the leased uid, no_new_privs, seccomp)
before it reads the setup, and then serves the grader on the two pipes of its private
channel, as that worker would (zygote_process.py, `main(FD, "worker")`).

Never two students in one process: a fork serves one worker's life (the load and the
cases, or what is left of them after a case killed the one before) and dies. The zygote
runs as the grader's user outside every sandbox and never runs student code; it never
reads a request (each travels on a socket of its own that only the fork reads: the plan,
the environment, the work folder), nor the setup (the nonce, the submission's path, the
probe), which the fork reads from its channel once confined. So a fork inherits no earlier
grading's paths, nonces or descriptors, and no student's memory (tests/test_worker_zygote.py
scans a fork's memory). The random generators the zygote imported (`random`, numpy's) are
seeded in every fork from its own setup's `random_seed` (bootstrap.py, student_random.py):
a fork's draws depend on its grading's seed alone, never on which forks came before it.

Used by grader processes that grade many submissions (a batch's, locally or on a Dask
worker: `use()`), when the grader is root (every worker leases a uid) and the student
does not get a user namespace of its own; `ABGRADE_WORKER_ZYGOTE=0` turns it off. If the
zygote can't start or dies, workers start the usual way, one interpreter each."""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .isolation import Isolation
from .worker import BOOTSTRAP_SOURCE, SITE_PATHS

if TYPE_CHECKING:
    from .kernel_zygote import KernelZygote, ZygoteKernel

_SOURCE = BOOTSTRAP_SOURCE + "\n" + (Path(__file__).parent / "zygote_process.py").read_text()

_WANTED = False
_ZYGOTE: KernelZygote | None = None
_START_LOCK = threading.Lock()
_NOTE: str | None = None

__all__ = ["KernelZygote", "ZygoteKernel", "note", "use", "zygote_for"]


def __getattr__(name: str) -> Any:
    """The zygote's classes, imported on first use: a single grade (no zygote) doesn't pay
    for kernel_zygote's sockets and logging."""
    if name in ("KernelZygote", "ZygoteKernel"):
        from . import kernel_zygote

        return getattr(kernel_zygote, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _warn(text: str) -> None:
    import logging

    logging.getLogger("abgrade.zygote").warning(text)


def use(wanted: bool = True) -> None:
    """This grader process grades many `.py` submissions: fork their workers from a zygote."""
    global _WANTED
    _WANTED = wanted


def enabled() -> bool:
    return _WANTED and os.environ.get("ABGRADE_WORKER_ZYGOTE", "1") != "0"


def note() -> str | None:
    """Why workers start without the zygote in this grader process, if they do."""
    return _NOTE


def _command(fd: int) -> list[str]:
    return [sys.executable, "-I", "-S", "-u", "-c", _SOURCE + f"\nmain({fd}, 'worker', {SITE_PATHS!r})\n"]


def zygote_for(isolation: Isolation, uid: int | None) -> KernelZygote | None:
    """This grader process's worker zygote (started on first use), or None when workers
    must start the usual way: not wanted, turned off, no leased uid, a user namespace of
    the student's own, or a zygote that can't run here."""
    global _ZYGOTE, _NOTE
    if not enabled() or uid is None or isolation.userns:
        return None
    from .kernel_zygote import KernelZygote

    with _START_LOCK:
        if _ZYGOTE is not None and _ZYGOTE.owner != os.getpid():  # a forked grader: not ours
            _ZYGOTE = None
        if _ZYGOTE is None or not _ZYGOTE.alive:
            if _ZYGOTE is not None:
                _NOTE = f"worker zygote: {_ZYGOTE.problem}; restarted"
                _warn(_NOTE)
            zygote = KernelZygote(_command)
            if not zygote.alive:
                _NOTE = f"worker zygote unavailable ({zygote.problem}): one interpreter per worker"
                _warn(_NOTE)
                _ZYGOTE = None
                return None
            _ZYGOTE = zygote
        return _ZYGOTE


def failed(problem: str) -> None:
    """A fork was refused: say why once; the worker starts the usual way."""
    global _NOTE
    _NOTE = f"worker zygote: {problem}; this worker started the usual way"
    _warn(_NOTE)
