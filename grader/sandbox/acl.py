"""File permissions for the student group at the `process` level (no mount namespace to
hide things in): POSIX ACLs, set with `setfacl` (Debian package `acl`), on two kinds of
folder. The grader's folders (the project, the class folder, the output folder) get a
named-group entry with no permissions, which denies the student group even where
"other" may read; the folders on the way to the interpreter that others can't traverse
(an interpreter in root's 0700 home) get traverse permission (x, not read) for that group
only; the closed folders on the way to one grading's own work folders (a batch keeps them
in a 0700 folder per run and per job) get traverse permission for that grading's uid only.

Two rules keep parallel graders from undoing each other's entries (`setfacl -m` reads,
changes and writes back a whole ACL): every change is made under one machine-wide lock, and
a grader writes group entries only where every grader writes the same ones (the shared
folders), never on another grading's folder. Each folder is done once per grader process."""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager

from .confine import closed_ancestors
from .identity import LEASE_DIR

_done: set[tuple[str, str]] = set()
MISSING = (
    "abgrade: `setfacl` is not installed; at the process isolation level the student user can't be kept "
    "out of the grader's folders (or reach an interpreter in a closed folder). Install the `acl` package."
)


def _setfacl(entry: str, *paths: str) -> None:
    todo = [p for p in paths if (entry, p) not in _done]
    if not todo:
        return
    _done.update((entry, p) for p in todo)
    if shutil.which("setfacl") is None:
        print(MISSING, file=sys.stderr)
        return
    with _machine_lock():  # -P: never follow a symbolic link (one in root's home could point on the way)
        subprocess.run(["setfacl", "-P", "-m", entry, "--", *todo], capture_output=True, timeout=30)


@contextmanager
def _machine_lock() -> Iterator[None]:
    """One ACL change at a time on this machine: two concurrent read-change-write cycles on
    one folder would lose one of the entries (a student then can't reach its own file)."""
    LEASE_DIR.mkdir(mode=0o700, exist_ok=True)
    fd = os.open(LEASE_DIR / "acl.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock


def close_to_group(folders: Iterable[str], gid: int) -> None:
    """Deny the student group every access to `folders`."""
    for folder in folders:
        if os.path.isdir(folder):
            _setfacl(f"g:{gid}:---", folder)


def open_way_to_group(paths: Iterable[str], gid: int) -> None:
    """Let the student group traverse the closed folders on the way to `paths` (shared by
    every student: the interpreter), and only that: everything else in such a folder (root's
    home: dot files, keys, caches) is denied to the group, looked at again for every student
    process (no default ACL: it would be inherited by every folder made there later, the
    way to a new venv included)."""
    open_way(paths, (), gid, uid=None)


def open_way(shared: Iterable[str], own: Iterable[str], gid: int, uid: int | None) -> None:
    """Open the way to the `shared` paths to the group (see open_way_to_group) and the way
    to this grading's `own` work folders to its `uid` alone. The folders only on the way to
    `own` (a batch's run and job folders, made closed by the grader) get a user entry and
    nothing else: the group entries there are another grading's, and what such a folder
    holds is closed on its own (work folders 0700, each owned by its student)."""
    shared, own = list(shared), list(own)
    everything = [*shared, *own]
    shared_closed = closed_ancestors(shared, outermost=False)
    for folder in shared_closed:
        _setfacl(f"g:{gid}:--x", folder)
        try:
            entries = [
                os.path.join(folder, name)
                for name in os.listdir(folder)
                if not os.path.islink(os.path.join(folder, name))
            ]
        except OSError:
            continue
        _setfacl(f"g:{gid}:---", *(e for e in entries if not any(_on_way(e, p) for p in everything)))
    if uid is None:
        return
    for folder in closed_ancestors(own, outermost=False):
        if folder not in shared_closed:
            _setfacl(f"u:{uid}:--x", folder)


def _on_way(entry: str, path: str) -> bool:
    return path == entry or path.startswith(entry.rstrip("/") + "/")
