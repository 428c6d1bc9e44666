"""abgrade's own version, as installed, for `--version` and for caches keyed by it.

Read from the name of abgrade's distribution folder on `sys.path` (`abgrade-1.2.dist-info`,
which an installer names by the normalised version), so that a grade's start-up needn't
import `importlib.metadata`; the metadata is asked only when no such folder names one (a
zipped egg, an unusual finder)."""

from __future__ import annotations

import os
from functools import cache

from .distributions import distribution_folders


@cache
def abgrade_version() -> str:
    for name, version_in_name, folder in distribution_folders():
        if name == "abgrade":
            found = version_in_name or _version_in_metadata(folder)
            if found:
                return found
            break
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("abgrade")
    except PackageNotFoundError:  # run from a checkout that was never installed
        return "0+unknown"


def _version_in_metadata(folder: str) -> str | None:
    """The `Version:` header of a distribution folder whose name carries none (a
    checkout's `abgrade.egg-info`)."""
    for file in ("METADATA", "PKG-INFO"):
        try:
            with open(os.path.join(folder, file), encoding="utf-8") as handle:
                for line in handle:
                    if line.startswith("Version:"):
                        return line.split(":", 1)[1].strip() or None
                    if not line.strip():
                        break  # the headers end at the first blank line
        except OSError:
            continue
    return None
