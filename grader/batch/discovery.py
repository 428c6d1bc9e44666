"""Which file in a class folder is whose submission.

A class folder holds one entry per student: a `.py`/`.ipynb` file, or a folder with the
student's files in it (LMS downloads come both ways). The student id is the entry's name
(the file name without its suffix, or the folder name), or the `id` group of a pattern
searched in that name, e.g. `_(?P<id>\\d+)_` for `smith_john_12345_lab.ipynb`.
"""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path

from ..grading import SUPPORTED_SUFFIXES

_SKIPPED_FOLDERS = {"__pycache__", "__MACOSX"}  # dot-folders (.ipynb_checkpoints) are skipped too


@dataclass(frozen=True)
class Submission:
    """One student's file, as found now; `file_hash` says whether it changed since."""

    student: str
    path: Path
    file_hash: str
    shown: str  # the path relative to the class folder, for messages and exports


@dataclass
class Discovery:
    submissions: list[Submission] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # entries that are not graded, and why


def compile_id_pattern(pattern: str | None) -> re.Pattern | None:
    """The --id-pattern, checked: valid, with a named group `id`. Raises ValueError."""
    if pattern is None:
        return None
    try:
        compiled = re.compile(pattern)
    except re.error as exc:
        raise ValueError(f"--id-pattern {pattern!r} is not a valid regular expression: {exc}") from None
    if "id" not in compiled.groupindex:
        raise ValueError(f"--id-pattern {pattern!r} needs a named group `id`, e.g. '_(?P<id>\\d+)_'")
    return compiled


def file_hash(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def discover(folder: Path, id_pattern: re.Pattern | None = None) -> Discovery:
    """Every submission in `folder`, sorted by student; entries that can't be graded
    (unknown file types, ambiguous folders, names the pattern misses, two entries for one
    student) are reported in `problems` and left out."""
    found = Discovery()
    claims: dict[str, list[Submission]] = {}
    for entry in sorted(folder.iterdir()):
        if entry.name.startswith("."):
            continue
        path, problem = _submission_file(entry)
        if problem is None:
            student, problem = _student_id(entry, id_pattern)
        if problem is not None:
            found.problems.append(f"{entry.name}: {problem}")
            continue
        claims.setdefault(student, []).append(
            Submission(student, path, file_hash(path), path.relative_to(folder).as_posix()))
    for student, submissions in sorted(claims.items()):
        if len(submissions) == 1:
            found.submissions.append(submissions[0])
        else:
            names = ", ".join(s.shown for s in submissions)
            found.problems.append(f"student {student!r} has {len(submissions)} submissions ({names}); "
                                  "keep one (or refine --id-pattern); none of them was graded")
    return found


def _submission_file(entry: Path) -> tuple[Path, str | None]:
    if entry.is_file():
        if entry.suffix in SUPPORTED_SUFFIXES:
            return entry, None
        return entry, f"not a submission (expected {' or '.join(SUPPORTED_SUFFIXES)}, or a folder per student)"
    if not entry.is_dir():
        return entry, "not a file or folder"
    candidates = [p for p in sorted(entry.rglob("*")) if p.is_file() and _visible(p, entry)]
    for suffix in (".ipynb", ".py"):  # a notebook wins over .py helpers or an exported copy
        files = [p for p in candidates if p.suffix == suffix]
        if len(files) == 1:
            return files[0], None
        if files:
            names = ", ".join(p.relative_to(entry).as_posix() for p in files)
            return entry, f"folder with {len(files)} {suffix} files ({names}); leave exactly one"
    return entry, f"folder without a {' or '.join(SUPPORTED_SUFFIXES)} file"


def _visible(path: Path, root: Path) -> bool:
    parts = path.relative_to(root).parts
    return not any(p.startswith(".") or p in _SKIPPED_FOLDERS for p in parts)


def _student_id(entry: Path, pattern: re.Pattern | None) -> tuple[str, str | None]:
    if pattern is None:
        return (entry.stem if entry.is_file() else entry.name), None
    match = pattern.search(entry.name)
    if match is None or not match.group("id"):
        return "", f"name does not match --id-pattern {pattern.pattern!r}"
    return match.group("id"), None
