"""The installed labs, found through the entry-point group `abgrade.labs` (the built-in
labs are registered the same way in pyproject.toml, so a course's own lab package is a
peer of them), and labs that live in a folder of their own (a game, a reference and a
spec: README, "Write your own lab"), built by the loader registered under
`abgrade.lab_folders`. Wherever a lab name is accepted, such a folder's path is too
(`folder_of`, `open_lab`). This module sits at the bottom of the import order and names
no lab: shared code (spec loader, reports, CLI help) asks it instead of importing
`grader.labs`.

Entry points are read straight from the `entry_points.txt` of each distribution folder
(`*.dist-info`, `*.egg-info`) on `sys.path`, in path order, the first distribution of a
name winning, as `importlib.metadata` does, but without importing it or parsing every
distribution's metadata (about a tenth of `abgrade grade`'s start-up); it is asked only
when nothing is found that way (a zipped egg, an unusual finder)."""

from __future__ import annotations

import importlib
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Protocol

from .distributions import distribution_folders
from .results import ordered_kinds

GROUP = "abgrade.labs"
FOLDER_GROUP = "abgrade.lab_folders"  # what reads lab folders: `from_folder(path)`, `new_folder(path)`
# labs loaded from folders in this process, by name: reports and the spec loader find them
# by the name their results carry, as they find an installed lab
_FOLDER_LABS: dict[str, Any] = {}


class LabInfo(Protocol):
    """What shared code may ask of a lab without importing it (see grader.labs.kit.Lab)."""

    name: str
    kinds: tuple[str, ...]
    bug_hints: Mapping[str, str]

    def picture(self, details: Mapping[str, Any]) -> str: ...


class FolderNotFound(KeyError):
    """A lab folder's path that names no folder (a usage error, like an unknown name)."""


@dataclass(frozen=True)
class EntryPoint:
    """One line of a distribution's entry_points.txt: `name = module:attribute`."""

    name: str
    value: str

    def load(self) -> Any:
        module, _, attribute = re.split(r"[\s\[]", self.value.strip(), maxsplit=1)[0].partition(":")
        found: Any = importlib.import_module(module)
        for part in attribute.split(".") if attribute else ():
            found = getattr(found, part)
        return found


def _read_points(group: str) -> list[EntryPoint]:
    found = []
    for _, _, folder in distribution_folders():
        try:
            with open(os.path.join(folder, "entry_points.txt"), encoding="utf-8") as handle:
                text = handle.read()
        except (OSError, UnicodeDecodeError):
            continue
        if f"[{group}]" not in text:
            continue
        section = None
        for raw in text.splitlines():
            line = raw.strip()
            if not line or line.startswith(("#", ";")):
                continue
            if line.startswith("[") and line.endswith("]"):
                section = line[1:-1].strip()
            elif section == group and "=" in line:
                name, _, value = line.partition("=")
                found.append(EntryPoint(name.strip(), value.strip()))
    return found


@cache
def group_points(group: str) -> tuple[EntryPoint, ...]:
    """Every entry point of `group`, in path order; `importlib.metadata`'s when the
    distribution folders hold none."""
    found = _read_points(group)
    if not found:
        from importlib.metadata import entry_points

        found = [EntryPoint(point.name, point.value) for point in entry_points(group=group)]
    return tuple(found)


@cache
def _entry_points() -> dict[str, EntryPoint]:
    """name -> entry point; the first one wins when a checkout is also on the path."""
    found: dict[str, EntryPoint] = {}
    for point in group_points(GROUP):
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
    """A fresh instance of the lab `name` (or the lab of that name loaded from a folder in
    this process), or None when there is no such lab."""
    try:
        return lab_class(name)()
    except KeyError:
        return _FOLDER_LABS.get(name)


def folder_of(ref: str) -> Path | None:
    """The folder `ref` names when it is a lab folder's path rather than an installed lab's
    name: an installed name wins; anything else that is a folder, or is written as a path
    (with a `/`, or starting with `.` or `~`), is a folder reference."""
    if ref in _entry_points():
        return None
    path = Path(ref).expanduser()
    if "/" in ref or ref.startswith((".", "~")) or path.is_dir():
        return path
    return None


def open_lab(ref: str) -> Any:
    """A lab instance from a name or a lab folder's path. KeyError (FolderNotFound for a
    missing folder) names what is known; a broken folder raises the loader's own error (a
    SpecError naming the file and line)."""
    folder = folder_of(ref)
    if folder is None:
        try:
            return lab_class(ref)()
        except KeyError as exc:
            raise KeyError(f"{exc.args[0]}, or the path of a lab folder (game.py, reference.py, spec.yaml)") from None
    if not folder.is_dir():
        raise FolderNotFound(
            f"{ref}: no such lab folder; give the folder that holds game.py, reference.py and spec.yaml, "
            f"or a lab name: {', '.join(lab_names())}"
        )
    lab = _folder_kind(ref).from_folder(folder)
    _FOLDER_LABS[lab.name] = lab
    return lab


def new_lab_folder(folder: Path) -> list[Path]:
    """Write a working three-file lab into `folder` (which must not exist); the files made."""
    return list(_folder_kind(str(folder)).new_folder(folder))


def _folder_kind(ref: str) -> Any:
    """The class registered under FOLDER_GROUP (the first by name, if several are)."""
    kinds = sorted(group_points(FOLDER_GROUP), key=lambda point: point.name)
    if not kinds:
        raise KeyError(f"{ref}: nothing installed reads lab folders (entry-point group {FOLDER_GROUP})")
    return kinds[0].load()


def check_kinds(labs: Iterable[str] | None = None) -> tuple[str, ...]:
    """The shared check kinds and those of `labs` (default: every installed lab), in the
    stable order of `ordered_kinds`. Loads those labs (so a caller that knows its lab
    names only that one)."""
    names = lab_names() if labs is None else labs
    own = [kind for name in names if (lab := find(name)) is not None for kind in lab.kinds]
    return ordered_kinds(own, everything=True)


def spec_kinds(lab: str) -> tuple[str, ...]:
    """The check kinds a spec of `lab` may score: the lab's own and the shared ones; every
    installed lab's when `lab` is not known (the lab name is judged elsewhere)."""
    return check_kinds([lab] if lab in _entry_points() or lab in _FOLDER_LABS else None)


def spec_fields(lab: str) -> tuple[str, ...]:
    """Top-level fields a spec of `lab` may have besides the shared ones (a lab folder's
    spec lists its accepted `variants`)."""
    found = find(lab)
    return tuple(getattr(found, "spec_fields", ())) if found is not None else ()


def spec_conventions(lab: str) -> tuple[str, ...]:
    """The conventions (`cutoff`, `returns`) a spec of `lab` may declare: the lab's own
    declaration (Lab.conventions); none for a lab that is not known."""
    found = find(lab)
    return tuple(getattr(found, "conventions", ())) if found is not None else ()
