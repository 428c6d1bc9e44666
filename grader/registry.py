"""The installed labs, found through the entry-point group `abgrade.labs` (the built-in
labs are registered the same way in pyproject.toml, so a course's own lab package is a
peer of them). This module sits at the bottom of the import order and names no lab:
shared code (spec loader, reports, CLI help) asks it instead of importing `grader.labs`."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import cache
from importlib.metadata import EntryPoint, entry_points
from typing import Any, Protocol

from .results import ordered_kinds

GROUP = "abgrade.labs"


class LabInfo(Protocol):
    """What shared code may ask of a lab without importing it (see grader.labs.kit.Lab)."""

    name: str
    kinds: tuple[str, ...]
    bug_hints: Mapping[str, str]

    def picture(self, details: Mapping[str, Any]) -> str: ...


@cache
def _entry_points() -> dict[str, EntryPoint]:
    """name -> entry point; the first one wins when a checkout is also on the path."""
    found: dict[str, EntryPoint] = {}
    for point in entry_points(group=GROUP):
        found.setdefault(point.name, point)
    return found


def lab_names() -> list[str]:
    return sorted(_entry_points())


@cache
def lab_class(name: str) -> Any:
    """The lab class registered as `name`; KeyError (with the known names) otherwise."""
    points = _entry_points()
    if name not in points:
        raise KeyError(f"unknown lab {name!r}; known labs: {', '.join(lab_names())}")
    return points[name].load()


def find(name: str) -> LabInfo | None:
    """A fresh instance of the lab `name`, or None when no such lab is installed."""
    try:
        return lab_class(name)()
    except KeyError:
        return None


def check_kinds(labs: Iterable[str] | None = None) -> tuple[str, ...]:
    """The shared check kinds and those of `labs` (default: every installed lab), in the
    stable order of `ordered_kinds`. Loads those labs (so a caller that knows its lab
    names only that one)."""
    names = lab_names() if labs is None else labs
    own = [kind for name in names if (lab := find(name)) is not None for kind in lab.kinds]
    return ordered_kinds(own, everything=True)


def spec_kinds(lab: str) -> tuple[str, ...]:
    """The check kinds a spec of `lab` may score: the lab's own and the shared ones; every
    installed lab's when `lab` is not installed (the lab name is judged elsewhere)."""
    return check_kinds([lab] if lab in _entry_points() else None)
