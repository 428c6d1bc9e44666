"""abgrade's own version, as installed (the package metadata), for `--version` and for
caches keyed by it."""

from __future__ import annotations

from functools import cache


@cache
def abgrade_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("abgrade")
    except PackageNotFoundError:  # run from a checkout that was never installed
        return "0+unknown"
