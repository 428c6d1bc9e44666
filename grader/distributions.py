"""The installed distributions, found by their folders (`*.dist-info`, `*.egg-info`) on
`sys.path` as `importlib.metadata` finds them, but without importing it or parsing every
distribution's metadata (a noticeable part of a grade's start-up): the registry reads
entry points from them, and abgrade's version is in its folder's name."""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterator

_DIST_FOLDER = re.compile(r"(.+?)(?:-([^-]*))?\.(dist-info|egg-info)$")


def distribution_folders() -> Iterator[tuple[str, str | None, str]]:
    """(normalised name, version as the folder names it or None, folder) of every
    distribution folder on sys.path, in path order, the first of each name only."""
    seen: set[str] = set()
    for entry in sys.path:
        base = entry or os.getcwd()
        try:
            names = os.listdir(base)
        except OSError:
            continue
        for name in names:
            matched = _DIST_FOLDER.match(name)
            if matched is None:
                continue
            normal = re.sub(r"[-_.]+", "_", matched.group(1)).lower()
            if normal not in seen:
                seen.add(normal)
                yield normal, matched.group(2), os.path.join(base, name)
