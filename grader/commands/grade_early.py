"""The student's worker of `abgrade grade FILE.py`, spawned before the CLI is imported.

A `.py` grade's critical path is the student's interpreter start-up (issue 26, goal 1):
the sooner it is spawned, the more of it overlaps the grader's own imports (argparse,
the commands, the pipeline, the lab and its spec). So `main` reads the command line
here first, with none of argparse's imports, and opens the sandbox when the words are
plainly a grade of one existing `.py` file. This is only a head start, never a decision:
argparse reads the same words afterwards as it always did (a bad command line gets its
usual error), and `grade` takes the session only for the very submission and lab it
parsed (`take`); any other session is closed, folder, uid and cgroup included
(`discard`, which `main` calls on every way out). Nothing the spawn uses depends on the
spec: the spec's limits and the probe reach the worker in its setup, as before. For a
lab given by name the worker is spawned by sandbox/first_spawn.py, before even the
sandbox's modules are imported, and the session is built around it; when that can't be
done (no recipe stored yet, the `process` level, a lab's folder), the session opens the
ordinary way.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (on the way to the first spawn)

if TYPE_CHECKING:
    from pathlib import Path

    from ..labs import Lab
    from ..sandbox.session import Session

# `grade`'s options that take a value, and those that don't (commands/grade.py); any
# other word that starts with "-" (an abbreviation, a bundle like -qv, `--`, `--help`)
# means no head start: argparse alone then decides what it means
_VALUED = frozenset({"--lab", "--spec", "--json", "--html", "--seed", "--config"})
_FLAGS = frozenset({"--show-hidden", "--quiet", "-q", "--verbose", "-v"})

_EARLY: tuple[str, str, Session] | None = None  # (submission as typed, lab as typed, its session)
_OPENED: tuple[str, Lab] | None = None  # (lab as typed, the lab _served_fork opened), for `grade` to take


def plain_grade_of_py(words: list[str]) -> tuple[str, str] | None:
    """(submission, lab) when `words` are `grade FILE.py --lab LAB [options]` spelled in
    full, with FILE an existing file; None for anything else (argparse's to read)."""
    if not words or words[0] != "grade":
        return None
    positional: list[str] = []
    lab: str | None = None
    rest = iter(words[1:])
    for word in rest:
        if not word.startswith("-") or word == "-":
            positional.append(word)
            continue
        name, equals, value = word.partition("=")
        if name in _VALUED:
            if not equals:
                value = next(rest, "")
                if not value or value.startswith("-"):
                    return None  # argparse's error (or a value that looks like an option)
            if name == "--lab":
                lab = value
        elif word not in _FLAGS:
            return None
    if len(positional) != 1 or not lab:
        return None
    submission = positional[0]
    if not submission.endswith(".py") or not os.path.isfile(submission):
        return None
    return submission, lab


def start(words: list[str]) -> None:
    """Open the sandbox of a plain `.py` grade now (see the module docstring); anything
    that goes wrong here is left for `grade` to meet again, in its usual order, and say."""
    global _EARLY
    discard()
    found = plain_grade_of_py(words)
    if found is None:
        return
    submission, lab = found
    spawned = None
    if _served_fork(lab):
        pass  # the session's worker forks from the server's zygote (sandbox/worker_zygote.py)
    elif not _may_be_folder(lab):  # a lab's folder may hide more: its setup says (_private_dirs)
        from ..sandbox.first_spawn import spawn

        spawned = spawn(submission)  # None: the ordinary way below
    try:
        from pathlib import Path

        from ..sandbox.session import PythonSession

        if spawned is not None:
            session = PythonSession(Path(submission), (), spawned)
        else:
            session = PythonSession(Path(submission), _private_dirs(lab))
    except Exception:  # noqa: BLE001 - grade opens it again and reports the error there
        return
    _EARLY = (submission, lab, session)


def _served_fork(lab: str) -> bool:
    """In a grade forked by `abgrade serve` that holds worker zygotes: this grade's worker
    will fork from the one of its lab's preimport set, as a batch's would (the session's
    `_start_worker`); False (a cold grade, the lab unknown here): the usual way."""
    import sys

    global _OPENED
    zygotes = sys.modules.get("grader.sandbox.worker_zygote")  # never imported here by a cold grade
    if zygotes is None or not zygotes.serving():
        return False
    try:
        from ..registry import open_lab

        opened = open_lab(lab)
        preimport = zygotes.preimports_for(opened.probe)
    except Exception:  # noqa: BLE001 - grade meets it again and says it
        return False
    _OPENED = (lab, opened)  # `grade` loads this very instance (opened_lab): a lab folder is read once
    if not zygotes.served_set(preimport):  # the server starts it for the next grades; this one goes cold
        from ..serve.zygotes import ask

        ask(preimport)
        return False
    zygotes.serve_grade(preimport)
    return True


def take(submission: Path, lab: str) -> Session | None:
    """The session opened early for this very submission and lab (the caller's to close),
    or None; one opened for anything else is closed."""
    global _EARLY
    early, _EARLY = _EARLY, None
    if early is None:
        return None
    typed, typed_lab, session = early
    if str(submission) == str(type(submission)(typed)) and lab == typed_lab:
        return session
    _close(session)
    return None


def opened_lab(lab: str) -> Lab | None:
    """The lab instance opened early for this very lab reference (once; None otherwise):
    what `load_lab` would open, a fresh instance no one else has used."""
    global _OPENED
    opened, _OPENED = _OPENED, None
    return opened[1] if opened is not None and opened[0] == lab else None


def discard() -> None:
    """Close a session opened early that no grade took (a bad command line, `--help`,
    an interrupt): its worker, work folder, uid and cgroups go before the command ends."""
    global _EARLY
    early, _EARLY = _EARLY, None
    if early is not None:
        _close(early[2])


def _close(session: Session) -> None:
    session.close()
    session.wait_closed()


def _private_dirs(lab: str) -> list[Path]:
    """lab_setup.private_dirs(lab), without reading the installed labs when `lab` can't be
    a folder (registry.folder_of: an installed name, or neither a path nor a folder)."""
    if not _may_be_folder(lab):
        return []
    from ..lab_setup import private_dirs

    return private_dirs(lab)


def _may_be_folder(lab: str) -> bool:
    """Whether `lab` may name a lab's folder rather than an installed lab (registry.folder_of)."""
    return "/" in lab or lab.startswith((".", "~")) or os.path.isdir(os.path.expanduser(lab))
