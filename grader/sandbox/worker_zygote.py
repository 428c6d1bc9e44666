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
zygote can't start or dies, workers start the usual way, one interpreter each.

`abgrade serve` holds a worker zygote of its own per preimport set (grader/serve/zygotes.py,
`serve_doors`); a served `.py` grade's child (`serve_grade`, under the same condition) asks
for its worker through that zygote's door on a channel of its own, and its fork takes the
very steps above. When that zygote is gone or can't answer, the worker starts the usual
way, silently (no warning: a cold grade prints none)."""

from __future__ import annotations

import functools
import os
import socket
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .isolation import Isolation
from .worker import BOOTSTRAP_SOURCE, SITE_PATHS

if TYPE_CHECKING:
    from .kernel_zygote import KernelZygote, ZygoteKernel
    from .session import ProbeSetup

_SOURCE = BOOTSTRAP_SOURCE + "\n" + (Path(__file__).parent / "zygote_process.py").read_text()

_WANTED = False
# the costly modules the zygote may import beside the bootstrap's (zygote_process.py's
# WORKER_OPTIONAL): those the lab's own code in the student process imports (use())
OPTIONAL = ("numpy",)  # zygote_process.WORKER_OPTIONAL (that module is the zygote's program, not imported here)
_PREIMPORT: tuple[str, ...] = OPTIONAL
_ZYGOTE: KernelZygote | None = None
_START_LOCK = threading.Lock()
_NOTE: str | None = None
# a server's zygotes' doors, by preimport set (set in the server, inherited by each served
# grade's child); and the set a served grade's worker forks from (serve_grade), if any
_DOORS: dict[tuple[str, ...], socket.socket] = {}
_SERVED: tuple[str, ...] | None = None

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


def use(wanted: bool = True, preimport: tuple[str, ...] = OPTIONAL) -> None:
    """This grader process grades many `.py` submissions: fork their workers from a zygote
    that also imports `preimport` (of OPTIONAL: `preimports_for` the lab's probe)."""
    global _WANTED, _PREIMPORT
    _WANTED, _PREIMPORT = wanted, tuple(preimport)


def preimports_for(probe: ProbeSetup) -> tuple[str, ...]:
    """Which of OPTIONAL (numpy) the zygote imports for a lab: those its observer
    or the modules it ships import, so every one of its students imports them anyway (the
    tictactoe and agents labs' numpy boards). A module only some students import is theirs
    to pay for, as in a single grade and a bare run: numpy in each zygote cost a tree-lab
    batch about 80 ms of CPU per grader process, and every fork's page tables and exit
    (about 0.8 ms) for students that never use it. A function of the lab alone (its
    sources), never of which students came before."""
    import ast

    sources = [source for _, source in probe.modules()]
    # only a source that names a module can import it: the others aren't parsed (about 10 ms
    # of CPU for the tree lab's, on a served grade's critical path), the answer is the same
    wanted = [name for name in OPTIONAL if any(name in source for source in sources)]
    imported: set[str] = set()
    for source in sources:
        if not any(name in source for name in wanted):
            continue
        try:
            tree = ast.parse(source)
        except SyntaxError:
            continue  # the lab's problem, said when the observer is loaded; nothing to import here
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                imported.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                imported.add(node.module.split(".")[0])
    return tuple(name for name in OPTIONAL if name in imported)


def enabled() -> bool:
    return _WANTED and turned_on()


def turned_on() -> bool:
    return os.environ.get("ABGRADE_WORKER_ZYGOTE", "1") != "0"


def serve_doors(doors: dict[tuple[str, ...], socket.socket]) -> None:
    """In the server: the doors of the zygotes it holds, for the grades it forks."""
    global _DOORS
    _DOORS = dict(doors)


def serving() -> bool:
    """A served grade's child with a server's zygote to fork its worker from."""
    return bool(_DOORS) and turned_on()


def served_set(preimport: tuple[str, ...]) -> bool:
    """In a served grade's child: whether the server held a zygote of this set at the fork."""
    return tuple(preimport) in _DOORS


def serve_grade(preimport: tuple[str, ...]) -> None:
    """In a served grade's child: its `.py` worker forks from the server's zygote that
    imported `preimport` (`preimports_for` the lab's probe, as a batch's), where a batch's
    would fork (zygote_for)."""
    global _SERVED
    _SERVED = tuple(preimport)


def _served_door() -> socket.socket | None:
    return _DOORS.get(_SERVED) if _SERVED is not None and not _WANTED else None


def note() -> str | None:
    """Why workers start without the zygote in this grader process, if they do."""
    return _NOTE


def _command(fd: int, preimport: tuple[str, ...], door: int | None = None) -> list[str]:
    """The zygote's command line; `door`: a server's (zygote_process._serve)."""
    call = f"\nmain({fd}, 'worker', {SITE_PATHS!r}, {preimport!r}, {door!r})\n"
    return [sys.executable, "-I", "-S", "-u", "-c", _SOURCE + call]


def zygote_for(isolation: Isolation, uid: int | None) -> KernelZygote | None:
    """This grader process's worker zygote (started on first use), or None when workers
    must start the usual way: not wanted, turned off, no leased uid, a user namespace of
    the student's own, or a zygote that can't run here."""
    global _ZYGOTE, _NOTE
    door = _served_door()
    if not (enabled() or door is not None) or not turned_on() or uid is None or isolation.userns:
        return None
    from .kernel_zygote import KernelZygote

    with _START_LOCK:
        if _ZYGOTE is not None and _ZYGOTE.owner != os.getpid():  # a forked grader: not ours
            _ZYGOTE = None
        if door is not None:
            return _served(door)
        if _ZYGOTE is None or not _ZYGOTE.alive:
            if _ZYGOTE is not None:
                _NOTE = f"worker zygote: {_ZYGOTE.problem}; restarted"
                _warn(_NOTE)
            # what use() said when it starts: a Dask worker that grades another lab later
            # keeps this zygote (its forks may be serving; only a module more or less to import)
            zygote = KernelZygote(functools.partial(_command, preimport=_PREIMPORT))
            if not zygote.alive:
                _NOTE = f"worker zygote unavailable ({zygote.problem}): one interpreter per worker"
                _warn(_NOTE)
                _ZYGOTE = None
                return None
            _ZYGOTE = zygote
        return _ZYGOTE


def failed(problem: str) -> None:
    """A fork was refused: say why once (a batch's; a served grade's silently); the worker
    starts the usual way."""
    global _NOTE
    _NOTE = f"worker zygote: {problem}; this worker started the usual way"
    if _served_door() is None:
        _warn(_NOTE)


def _served(door: socket.socket) -> KernelZygote | None:
    """A served grade's channel to the server's zygote (made once), or None: the usual way,
    silently, and for the rest of this grade once the zygote failed it."""
    global _ZYGOTE, _NOTE, _SERVED
    from .kernel_zygote import KernelZygote

    if _ZYGOTE is None:
        zygote = KernelZygote(door=door)
        if zygote.alive:
            _ZYGOTE = zygote
            return zygote
        _NOTE = f"the server's worker zygote: {zygote.problem}; this worker started the usual way"
    elif _ZYGOTE.alive:
        return _ZYGOTE
    _SERVED = None
    return None
