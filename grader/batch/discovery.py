"""Which file in a class folder is whose submission.

A class folder holds one entry per student: a `.py`/`.ipynb` file, or a folder with the
student's files in it (LMS downloads come both ways). The student id is the entry's name
(the file name without its suffix, or the folder name), or the `id` group of a pattern
searched in that name, e.g. `_(?P<id>\\d+)_` for `smith_john_12345_lab.ipynb`; the part of
the name before the id is then the student's name (`smith john`).

Every entry ends in one of three lists:
- `submissions`: graded;
- `skipped`: a student's entry that can't be graded (a symlink, a folder with two
  notebooks, a name the pattern misses, ...): a row in grades.csv, and exit code 1;
- `ignored`: not a submission at all (README.txt, `__pycache__/`, .DS_Store, an older
  LMS resubmission, a student's other files): listed, but no row and no effect on the
  exit code.

Symlinks are never followed (a link could point a student's "submission" at any file the
grader can read, and its first line would end up in the feedback).
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ..grading import SUPPORTED_SUFFIXES

_NOT_SUBMISSIONS = {"__pycache__", "__MACOSX", "Thumbs.db", "desktop.ini"}  # and every dot-name
_LATE = re.compile(r"[_ ]?late$", re.IGNORECASE)  # Canvas marks late submissions `name_late_<id>_...`
_LMS_NUMBER = re.compile(r"_?(\d+)_")  # Canvas: `<name>_<student id>_<submission id>_<file>`
REFUSED_SYMLINK = "symlink: refused"


@dataclass(frozen=True)
class Submission:
    """One student's file, as found now; `file_hash` says whether it changed since."""

    student: str
    path: Path
    file_hash: str
    shown: str  # the path relative to the class folder, for messages and exports
    name: str = ""  # the student's name, when the file name carries one (LMS downloads)


@dataclass(frozen=True)
class Skipped:
    """A student's entry that was not graded, and why."""

    student: str  # the id read from the entry's name (the name itself when none can be read)
    shown: str
    reason: str
    name: str = ""


@dataclass
class Discovery:
    submissions: list[Submission] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    ignored: list[str] = field(default_factory=list)  # "entry: why", not submissions at all

    @property
    def problems(self) -> list[str]:
        """The skipped entries as one line each, for the terminal."""
        return [f"{s.shown}: {s.reason}" for s in self.skipped]


@dataclass
class Claim:
    """What one folder entry says about one student."""

    student: str
    name: str
    shown: str
    lms_number: int | None  # the LMS's submission number, when the name carries one
    path: Path | None = None  # the submission file, when the entry is usable
    reason: str = ""  # why not, otherwise
    order: bytes = b""  # the entry's name as the folder holds it: a student's claims keep folder order


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


def clean_name(text: str) -> str:
    """A file name as text that is safe to print and store: undecodable bytes and lone
    surrogates become U+FFFD, control characters (newlines, escape sequences) `\\xNN`."""
    text = text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    text = text.encode("utf-8", "surrogatepass").decode("utf-8", "replace")
    return re.sub(r"[\x00-\x1f\x7f-\x9f]", lambda m: f"\\x{ord(m.group()):02x}", text)


def has_entries(folder: Path) -> bool:
    """Whether `folder` holds anything that may be a student's entry (a file with a
    submission suffix or a folder), cheaply: an empty class folder is said before any work."""
    return any(
        not entry.name.startswith(".")
        and entry.name not in _NOT_SUBMISSIONS
        and (entry.suffix in SUPPORTED_SUFFIXES or entry.is_dir() or entry.is_symlink())
        for entry in folder.iterdir()
    )


def discover(folder: Path, id_pattern: re.Pattern | None = None) -> Discovery:
    """Every submission in `folder`, sorted by student, with what was skipped or ignored.
    Holds the whole class in memory: a batch uses ClassList (classlist.py) instead, which
    groups the same claims in an SQLite file."""
    found = Discovery()
    claims: dict[str, list[Claim]] = {}
    for item in scan(sorted(folder.iterdir()), id_pattern):
        if isinstance(item, str):
            found.ignored.append(item)
        else:
            claims.setdefault(item.student, []).append(item)
    for student, mine in sorted(claims.items()):
        for result in settle(folder, student, mine):
            if isinstance(result, Submission):
                found.submissions.append(result)
            elif isinstance(result, Skipped):
                found.skipped.append(result)
            else:
                found.ignored.append(result)
    return found


def scan(entries: Iterable[Path], id_pattern: re.Pattern | None = None) -> Iterator[Claim | str]:
    """Each folder entry's claim on a student, or the line saying why it is ignored."""
    for entry in entries:
        shown = clean_name(entry.name)
        if entry.name.startswith(".") or entry.name in _NOT_SUBMISSIONS:
            yield f"{shown}: not a submission"
            continue
        claim = _claim(entry, shown, id_pattern)
        if claim is None:
            yield f"{shown}: not a submission (expected {' or '.join(SUPPORTED_SUFFIXES)}, or a folder per student)"
            continue
        claim.order = os.fsencode(entry.name)
        yield claim


def _claim(entry: Path, shown: str, pattern: re.Pattern | None) -> Claim | None:
    """What `entry` says about whose it is and what to grade; None when it is clearly
    not a student's (a stray file whose name carries no student id)."""
    match = pattern.search(entry.name) if pattern is not None else None
    is_file = entry.is_file() and not entry.is_symlink()
    if is_file and entry.suffix not in SUPPORTED_SUFFIXES and match is None:
        return None
    own_name = clean_name(entry.stem if is_file or entry.suffix in SUPPORTED_SUFFIXES else entry.name)
    if pattern is None:
        student, name, number = own_name, "", None
    elif match is None or not match.group("id"):
        return Claim(own_name, "", shown, None, reason=f"name does not match --id-pattern {pattern.pattern!r}")
    else:
        # a pattern may say where the name is (`name`, empty: none) and what orders resubmissions (`order`)
        named = "name" in pattern.groupindex
        prefix = (match.group("name") or "") if named else entry.name[: match.start()]
        student, name, number = clean_name(match.group("id")), _student_name(prefix), None
        order = match.group("order") if "order" in pattern.groupindex else None
        lms = None if order is not None else _LMS_NUMBER.match(entry.name, match.end("id"))
        if order is not None and order.strip():
            number = int(re.sub(r"\D", "", order) or 0)
        elif lms is not None:
            number = int(lms.group(1))
    claim = Claim(student, name, shown, number)
    if entry.is_symlink():
        claim.reason = REFUSED_SYMLINK
    elif is_file:
        if entry.suffix in SUPPORTED_SUFFIXES:
            claim.path = entry
        else:
            claim.reason = f"not a submission (expected {' or '.join(SUPPORTED_SUFFIXES)})"
    elif entry.is_dir():
        claim.path, problem = _file_in_folder(entry)
        if problem:
            claim.reason = problem
    else:
        claim.reason = "not a file or folder"
    return claim


def _student_name(prefix: str) -> str:
    """`smith_john_late` -> `smith john`: what an LMS puts before the student id."""
    return clean_name(" ".join(_LATE.sub("", prefix).replace("_", " ").split()))


def _file_in_folder(entry: Path) -> tuple[Path | None, str | None]:
    """The one submission file in a student's folder (a notebook wins over `.py` helpers or
    an exported copy); symlinked files and folders are never followed."""
    candidates: list[Path] = []
    for root, dirs, files in os.walk(entry, followlinks=False):
        dirs[:] = sorted(d for d in dirs if not (d.startswith(".") or d in _NOT_SUBMISSIONS))
        candidates += [Path(root) / f for f in sorted(files) if not (f.startswith(".") or f in _NOT_SUBMISSIONS)]
    candidates = [p for p in candidates if p.is_symlink() or p.is_file()]  # no FIFOs or devices: reading them blocks
    for suffix in (".ipynb", ".py"):
        found = [p for p in candidates if p.suffix == suffix]
        shown = ", ".join(clean_name(p.relative_to(entry).as_posix()) for p in found)
        if len(found) == 1:
            if found[0].is_symlink():
                return None, f"{REFUSED_SYMLINK} ({shown})"
            return found[0], None
        if found:
            return None, f"folder with {len(found)} {suffix} files ({shown}); leave exactly one"
    return None, f"folder without a {' or '.join(SUPPORTED_SUFFIXES)} file"


def settle(folder: Path, student: str, claims: list[Claim]) -> Iterator[Submission | Skipped | str]:
    """One student's entries (in folder order): one to grade, one skipped row, and the rest
    ignored (lines). Several usable files are resolved by the LMS's submission number
    (Canvas: the highest is the latest resubmission) when every one carries a distinct one."""
    usable = [c for c in claims if c.path is not None]
    chosen: Claim | None = None
    if len(usable) == 1:
        chosen = usable[0]
    elif usable:
        numbers = [c.lms_number for c in usable]
        if None not in numbers and len(set(numbers)) == len(numbers):
            chosen = max(usable, key=lambda c: c.lms_number or 0)
    name = next((c.name for c in claims if c.name), "")
    if chosen is not None:
        assert chosen.path is not None
        yield Submission(
            student,
            chosen.path,
            file_hash(chosen.path),
            clean_name(chosen.path.relative_to(folder).as_posix()),
            name,
        )
        for other in claims:
            if other is not chosen:
                why = (
                    f"an older submission of student {student!r} (the latest is {chosen.shown})"
                    if other.path is not None
                    else f"{other.reason} (another file of student {student!r})"
                )
                yield f"{other.shown}: {why}"
        return
    if usable:
        names = ", ".join(c.shown for c in usable)
        reason = (
            f"student {student!r} has {len(usable)} submissions ({names}); "
            "keep one (or refine --id-pattern); none of them was graded"
        )
        yield Skipped(student, names, reason, name)
    else:  # one row per student, saying what is wrong with each of their entries
        shown = ", ".join(c.shown for c in claims)
        reason = claims[0].reason if len(claims) == 1 else "; ".join(f"{c.shown}: {c.reason}" for c in claims)
        yield Skipped(student, shown, reason, name)
