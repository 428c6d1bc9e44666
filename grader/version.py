"""abgrade's own version, as installed, for `--version` and for caches keyed by it.

Read from the name of abgrade's distribution folder on `sys.path` (`abgrade-1.2.dist-info`,
which an installer names by the normalised version), so that a grade's start-up needn't
import `importlib.metadata` (the registry reads entry points the same way); the metadata
is asked only when no such folder is found (a zipped egg, an unusual finder)."""

from __future__ import annotations

import os
import re
import sys
from functools import cache

_FOLDER = re.compile(r"abgrade-([^-]+)\.dist-info$")


@cache
def abgrade_version() -> str:
    for entry in sys.path:
        try:
            names = os.listdir(entry or os.getcwd())
        except OSError:
            continue
        for name in names:
            found = _FOLDER.match(name)
            if found:
                return found.group(1)
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("abgrade")
    except PackageNotFoundError:  # run from a checkout that was never installed
        return "0+unknown"
