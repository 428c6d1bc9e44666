"""Whether the grader's code changed since the server imported it: the size and time of
every loaded module's file under the grader's package, the reference's and each lab's
package, of every folder on sys.path (a package installed or removed changes it) and of
the files named in `$ABGRADE_SERVE_WATCH` (os.pathsep between them; the tests' hook).
The server stats them all before each request; one changed: the server answers "stale",
the client grades cold and the server exits (the next `abgrade serve` imports the new
code)."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable

WATCH_VARIABLE = "ABGRADE_SERVE_WATCH"

Snapshot = dict[str, tuple[int, int]]  # path -> (size, mtime_ns); (-1, -1): missing


def roots(packages: Iterable[str]) -> list[str]:
    """The folders of the named top-level packages that are loaded (with a separator at
    the end, so that `grader2/` is not under `grader/`)."""
    found = []
    for name in packages:
        module = sys.modules.get(name)
        for folder in getattr(module, "__path__", None) or ():
            found.append(os.path.join(os.path.abspath(folder), ""))
    return found


def watched(folders: list[str]) -> list[str]:
    """Every file to stat: the loaded modules under `folders`, the folders on sys.path,
    and the test hook's files."""
    paths = set()
    for module in list(sys.modules.values()):
        file = getattr(module, "__file__", None)
        if isinstance(file, str) and os.path.abspath(file).startswith(tuple(folders)):
            paths.add(os.path.abspath(file))
    paths.update(os.path.abspath(entry) for entry in sys.path if isinstance(entry, str) and entry)
    paths.update(extra for extra in os.environ.get(WATCH_VARIABLE, "").split(os.pathsep) if extra)
    return sorted(paths)


def snapshot(paths: Iterable[str]) -> Snapshot:
    """The size and time of each path now."""
    found: Snapshot = {}
    for path in paths:
        try:
            info = os.stat(path)
            found[path] = (info.st_size, info.st_mtime_ns)
        except OSError:
            found[path] = (-1, -1)
    return found


def changed(before: Snapshot) -> str | None:
    """The first path whose size or time moved since `before`, or None."""
    now = snapshot(before)
    for path, seen in before.items():
        if now[path] != seen:
            return path
    return None
