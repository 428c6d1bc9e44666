"""A per-user cache of what the grader would otherwise work out again in every process:
the parsed YAML of a spec (keyed by the text's own hash), the compiled seccomp filter and
the isolation level this machine allows (keyed by everything they depend on), the first
spawn's recipe, and the observer's modules compiled for the student's interpreter (keyed
by their source and the interpreter; a hex string the grader only ships to the student's
process, session.py). Each entry is one file of plain data (`marshal` of strings,
numbers, lists, tuples and dicts: never code the grader runs, never pickle), written
whole (a temporary file, then a rename), so a reader sees an old entry or a new one,
never half of one.

Where: `$ABGRADE_CACHE_DIR`, else `$XDG_CACHE_HOME/abgrade/run-cache`, else
`~/.cache/abgrade/run-cache`. `ABGRADE_CACHE=0` turns it off. It is used only while it is
the grader's own: a folder (not a link) owned by this user with no access for anyone else
(made 0700), in a folder no one else may write to; an entry owned by anyone else, or
writable by anyone else, is ignored. So a student process,
which runs as another uid (a root grader) or in a read-only mount namespace, can neither
read nor write it; at the `process` level without root the student can already write
everything the grader's user can (README, Security), this cache included.

Every reader checks what it gets back (type and shape) and works it out afresh when the
entry is missing, unreadable or of another shape: the cache only ever saves time."""

from __future__ import annotations

import marshal
import os
import stat
import sys

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (on the way to the first spawn)

if TYPE_CHECKING:  # imported by the first spawn (sandbox/first_spawn.py): no pathlib before it
    from pathlib import Path
    from typing import Any

FORMAT = 1  # part of every entry's name: a change of layout never reads an old entry


def folder() -> Path | None:
    """The cache folder, made if need be, or None when there is none to trust."""
    from pathlib import Path

    found = _folder()
    return None if found is None else Path(found)


def _folder() -> str | None:
    """folder(), as a string (os.path only: see the imports)."""
    if os.environ.get("ABGRADE_CACHE", "1") == "0":
        return None
    given = os.environ.get("ABGRADE_CACHE_DIR")
    if given:
        path = os.path.normpath(given)
    else:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        if not os.path.isabs(base):
            return None
        path = os.path.join(base, "abgrade", "run-cache")
    try:
        os.makedirs(path, mode=0o700, exist_ok=True)
        info, parent = os.lstat(path), os.stat(os.path.dirname(os.path.abspath(path)))
    except OSError:
        return None
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid() or info.st_mode & 0o077:
        return None
    if parent.st_uid not in (0, os.geteuid()) or (parent.st_mode & 0o022 and not parent.st_mode & stat.S_ISVTX):
        return None  # someone else could put another folder in its place
    return path


def _entry(name: str) -> str | None:
    found = _folder()
    return (
        None if found is None else os.path.join(found, f"{name}.v{FORMAT}-py{sys.version_info[0]}{sys.version_info[1]}")
    )


def read(name: str) -> Any:
    """The value stored under `name`, or None (none, or none to trust)."""
    path = _entry(name)
    if path is None:
        return None
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if info.st_uid != os.geteuid() or info.st_mode & 0o022 or not stat.S_ISREG(info.st_mode):
            return None
        with os.fdopen(fd, "rb", closefd=False) as handle:
            data = handle.read()
        return marshal.loads(data)
    except (OSError, EOFError, ValueError, TypeError):
        return None
    finally:
        os.close(fd)


def write(name: str, value: Any) -> None:
    """Store `value` (plain data) under `name`; a cache that can't be written is no error."""
    path = _entry(name)
    if path is None:
        return
    head, name = os.path.split(path)
    temporary = os.path.join(head, f".{name}.{os.getpid()}.tmp")
    try:
        data = marshal.dumps(value)
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(temporary, path)
    except (OSError, ValueError):
        try:
            os.unlink(temporary)
        except OSError:
            pass


def forget(name: str) -> None:
    """Drop the entry `name` (it proved wrong)."""
    path = _entry(name)
    if path is not None:
        try:
            os.unlink(path)
        except OSError:
            pass
