"""File permissions for the student group at the `process` level (no mount namespace to
hide things in): POSIX ACLs, set with `setfacl` (Debian package `acl`), on two kinds of
folder. The grader's folders (the project, the class folder, the output folder) get a
named-group entry with no permissions, which denies the student group even where
"other" may read; the folders on the way to the interpreter that others can't traverse
(an interpreter in root's 0700 home) get traverse permission (x, not read) for that group
only. Each folder is done once per grader process; entries are idempotent."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterable

from .confine import closed_ancestors

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
    # -P: never follow a symbolic link (one in root's home could point on the way)
    subprocess.run(["setfacl", "-P", "-m", entry, "--", *todo], capture_output=True, timeout=30)


def close_to_group(folders: Iterable[str], gid: int) -> None:
    """Deny the student group every access to `folders`."""
    for folder in folders:
        if os.path.isdir(folder):
            _setfacl(f"g:{gid}:---", folder)


def open_way_to_group(paths: Iterable[str], gid: int) -> None:
    """Let the student group traverse the closed folders on the way to `paths`, and only
    that: everything else in such a folder (root's home: dot files, keys, caches) is
    denied to the group, looked at again for every student process (no default ACL: it
    would be inherited by every folder made there later, the way to a new venv included)."""
    paths = list(paths)
    for folder in closed_ancestors(paths, outermost=False):
        _setfacl(f"g:{gid}:--x", folder)
        try:
            entries = [
                os.path.join(folder, name)
                for name in os.listdir(folder)
                if not os.path.islink(os.path.join(folder, name))
            ]
        except OSError:
            continue
        _setfacl(f"g:{gid}:---", *(e for e in entries if not any(_on_way(e, p) for p in paths)))


def _on_way(entry: str, path: str) -> bool:
    return path == entry or path.startswith(entry.rstrip("/") + "/")
