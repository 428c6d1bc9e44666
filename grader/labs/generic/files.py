"""A lab folder read once into memory: game.py, reference.py, every other Python file in
it (accepted variants, `bugs/`), and the lab's name from spec.yaml.

Everything is graded from this snapshot, never from the folder again: a batch grades every
student against the same files even if the instructor edits one meanwhile, and the snapshot
travels with a grading task to another process or machine (a Dask worker has no folder).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

from ...registry import lab_names
from ...spec import SpecError
from ...spec.yaml_lines import LineDict, line_of, read_yaml_file

GAME, REFERENCE, SPEC, BUGS = "game.py", "reference.py", "spec.yaml", "bugs"
MAX_FILES = 200  # Python files in a lab folder
MAX_BYTES = 1_000_000  # per file
NAME = re.compile(r"[A-Za-z][A-Za-z0-9_-]{0,39}")


class LabError(SpecError):
    """A broken lab folder: `file:line: what: problem`, one line (exit code 2)."""


@dataclass(frozen=True)
class SourceFile:
    """One Python file of the folder: its path inside the folder and its text."""

    name: str  # relative, with `/`: "game.py", "bugs/strict_cutoff.py"
    text: str
    shown: str  # the path as messages give it (the folder as the user wrote it, joined)


@dataclass(frozen=True)
class LabFiles:
    name: str  # the lab's name (spec.yaml's `lab`)
    folder: Path  # resolved
    shown: str  # the folder as the user wrote it
    sources: tuple[SourceFile, ...]
    spec_name_line: int | None = None

    def source(self, name: str) -> SourceFile | None:
        return next((source for source in self.sources if source.name == name), None)

    @property
    def game(self) -> SourceFile:
        return self._required(GAME)

    @property
    def reference(self) -> SourceFile:
        return self._required(REFERENCE)

    @property
    def bugs(self) -> tuple[SourceFile, ...]:
        """`bugs/*.py`: the bug replays, named after their files; and `bugs/NAME/*.py`: one bug
        written several ways that read differently (each a replay, all diagnosed as NAME)."""
        return tuple(
            source for source in self.sources if source.name.count("/") in (1, 2) and source.name.startswith(f"{BUGS}/")
        )

    @property
    def spec_file(self) -> Path:
        """spec.yaml, as the user named the folder (messages show this path)."""
        return Path(self.shown) / SPEC

    @property
    def reference_file(self) -> Path:
        return Path(self.shown) / REFERENCE

    def _required(self, name: str) -> SourceFile:
        found = self.source(name)
        assert found is not None, f"read_folder checked that {name} exists"
        return found

    def digest(self) -> str:
        """A digest of every file, so that a change of the game or of a reference shows."""
        hashed = hashlib.sha256()
        for source in self.sources:
            hashed.update(f"{source.name}\0{len(source.text)}\0".encode())
            hashed.update(source.text.encode("utf-8", "surrogatepass"))
        return hashed.hexdigest()[:16]


def read_folder(folder: Path) -> LabFiles:
    """The folder's snapshot; a LabError names the file that is missing or unreadable."""
    shown = str(folder)
    for required in (GAME, REFERENCE, SPEC):
        if not (folder / required).is_file():
            raise LabError(
                _join(shown, required),
                None,
                "lab folder",
                f"missing: a lab folder holds {GAME}, {REFERENCE} and {SPEC} (`abgrade lab new NAME` writes them)",
            )
    paths = sorted(
        path for path in folder.rglob("*.py") if "__pycache__" not in path.parts and not path.name.startswith(".")
    )
    if len(paths) > MAX_FILES:
        raise LabError(shown, None, "lab folder", f"holds {len(paths)} Python files; at most {MAX_FILES}")
    sources = tuple(_read(folder, path, shown) for path in paths)
    name, line = _lab_name(folder / SPEC, _join(shown, SPEC))
    return LabFiles(name, folder.resolve(), shown, sources, line)


def _read(folder: Path, path: Path, shown: str) -> SourceFile:
    relative = path.relative_to(folder).as_posix()
    where = _join(shown, relative)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise LabError(where, None, "file", f"cannot read it ({exc.strerror})") from None
    if len(data) > MAX_BYTES:
        raise LabError(where, None, "file", f"is {len(data):,} bytes; at most {MAX_BYTES:,}")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise LabError(where, None, "file", f"is not UTF-8 text (byte {exc.start})") from None
    return SourceFile(relative, text, where)


def _lab_name(path: Path, shown: str) -> tuple[str, int | None]:
    """spec.yaml's `lab`: a short name, not an installed lab's (results, gradebooks and
    reports know a lab by its name)."""
    _, raw = read_yaml_file(path, shown, "spec", LabError)
    if not isinstance(raw, LineDict) or not isinstance(raw.get("lab"), str):
        raise LabError(shown, line_of(raw, "lab") if isinstance(raw, LineDict) else 1, "lab", "missing: the lab's name")
    name, line = raw["lab"], line_of(raw, "lab")
    if not NAME.fullmatch(name):
        raise LabError(shown, line, "lab", f"{name!r} is not a lab name: a letter, then letters, digits, - or _")
    if name in lab_names():
        raise LabError(shown, line, "lab", f"{name!r} is the name of an installed lab; give this lab a name of its own")
    return name, line


def _join(shown: str, name: str) -> str:
    return f"{shown.rstrip('/')}/{name}"
