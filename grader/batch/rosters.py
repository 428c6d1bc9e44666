"""Rosters as the LMS gives them, read into one model, and matched to the students abgrade
graded (whose ids come from file names: a Canvas user id, a Moodle participant id, a
Blackboard username, or whatever the class folder used).

Recognised from the header row:

- abgrade's own roster (`student`, then name, canvas_id, ...; see lms.py);
- Canvas's gradebook export (Grades > Export): `Student, ID, SIS User ID, SIS Login ID,
  [Integration ID,] Section, <assignments...>`, with its `Points Possible` row and the rows
  without an ID (`Muted` / `Manual Posting`) left out;
- Moodle's participants download (Participants > "Download table data as" CSV): `First name`,
  `Last name` (or `Surname`), and the identity fields the site shows: `ID number`,
  `Email address`, `Username`;
- Blackboard Learn's Grade Center download (Work Offline > Download, comma or tab, UTF-8 or
  the UTF-16 that Blackboard writes for `.xls`): `Last Name, First Name, Username,
  Student ID, ...` and the grade columns `Lab 1 [Total Pts: 10 Score] |12345`.

A graded student is matched to a roster row by any identifier of the row (abgrade id, Canvas
ID, SIS user id, SIS login, username, ID number, e-mail), else by the name when exactly one
row has it (a Moodle download's id is Moodle's own participant id, found in no roster)."""

from __future__ import annotations

import csv
import io
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from ..lab_setup import UsageError
from .lms import RosterEntry, read_roster

IDENTIFIERS = ("canvas_id", "sis_user_id", "sis_login_id", "username", "idnumber", "email")
CANVAS_HEADER = ("Student", "ID")
CANVAS_FIELDS = {
    "Student": "name",
    "ID": "canvas_id",
    "SIS User ID": "sis_user_id",
    "SIS Login ID": "sis_login_id",
    "Section": "section",
}
CANVAS_NOT_GRADES = {"Student", "ID", "SIS User ID", "SIS Login ID", "Integration ID", "Section"}
MOODLE_FIELDS = {"ID number": "idnumber", "Email address": "email", "Username": "username"}
BLACKBOARD_FIELDS = {"Username": "username", "Student ID": "idnumber"}
BLACKBOARD_COLUMN_ID = re.compile(r"\|\s*(\d+)\s*$")


@dataclass(frozen=True)
class Roster:
    """Every student row of a roster file, and the grade columns of an LMS export."""

    path: Path
    kind: str  # "abgrade", "canvas", "moodle", "blackboard"
    entries: tuple[RosterEntry, ...]
    grade_columns: tuple[str, ...] = ()  # as headed in an LMS's own export (`Lab 1 (4711)`, `Lab 1 |12345`)
    by_key: dict[str, list[RosterEntry]] = field(default_factory=dict, repr=False, compare=False)
    by_name: dict[str, list[RosterEntry]] = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self) -> None:
        for entry in self.entries:
            keys = {entry.student, *(entry.get(k) for k in IDENTIFIERS)} - {""}
            for key in keys:
                self.by_key.setdefault(key.casefold(), []).append(entry)
            if entry.get("name"):
                self.by_name.setdefault(name_key(entry.get("name")), []).append(entry)

    def find(self, student: str, name: str = "") -> RosterEntry | None:
        """The one row that names `student` by an identifier, else by `name`; None when no
        row, or more than one, does."""
        found = self.by_key.get(student.casefold(), [])
        if len({id(e) for e in found}) == 1:
            return found[0]
        if not found and name:
            same = self.by_name.get(name_key(name), [])
            if len(same) == 1:
                return same[0]
        return None


def name_key(name: str) -> str:
    """A name as letters only, sorted: `Smith, Ann`, `ann smith` and Canvas's `smithann`
    agree (accents dropped, case folded)."""
    plain = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode().casefold()
    return "".join(sorted(c for c in plain if c.isalpha()))


def resolve(roster: Roster | None, students: Iterable[tuple[str, str]]) -> dict[str, RosterEntry]:
    """abgrade id -> the roster row of that student (keyed by the abgrade id), for every
    (student, name) the roster matches."""
    if roster is None:
        return {}
    matched = {}
    for student, name in students:
        entry = roster.find(student, name)
        if entry is not None:
            matched[student] = RosterEntry(student, dict(entry.fields))
    return matched


def read_any_roster(path: Path) -> Roster:
    """The roster at `path`, whichever layout it has; UsageError naming the file otherwise."""
    text = _text(path)
    first = text.split("\n", 1)[0]
    delimiter = "\t" if first.count("\t") > first.count(",") else ","
    rows = list(csv.reader(io.StringIO(text, newline=""), delimiter=delimiter))
    header = [cell.strip() for cell in rows[0]] if rows else []
    lowered = {h.lower().replace(" ", "_") for h in header}
    if tuple(header[:2]) == CANVAS_HEADER and ({"SIS User ID", "SIS Login ID"} & set(header)):
        return _canvas(path, header, rows[1:])
    if "student" in lowered:  # abgrade's own: its reader names an unknown column
        return Roster(path, "abgrade", tuple(read_roster(path).values()))
    if "Email address" in header and "First name" in header and ({"Last name", "Surname"} & set(header)):
        return _moodle(path, header, rows[1:])
    if {"Username", "Last Name", "First Name"} <= set(header):
        return _blackboard(path, header, rows[1:])
    raise UsageError(
        f"{path}:1: not a roster abgrade knows: expected abgrade's (`student,name,...`), Canvas's gradebook "
        "export (`Student,ID,SIS User ID,...`), Moodle's participants download (`First name,Last name,"
        "Email address,...`) or Blackboard's Grade Center download (`Last Name,First Name,Username,...`)"
    )


def _text(path: Path) -> str:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise UsageError(f"{path}: cannot read the roster ({exc.strerror})") from None
    encoding = "utf-16" if data.startswith((b"\xff\xfe", b"\xfe\xff")) else "utf-8-sig"
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as exc:
        raise UsageError(
            f"{path}: the roster is not {encoding.upper().replace('-SIG', '')} (byte {exc.start}); "
            "save it from the LMS again, or as CSV UTF-8 from your spreadsheet"
        ) from None


def _cells(header: list[str], row: list[str]) -> dict[str, str]:
    return {h: (row[i].strip() if i < len(row) else "") for i, h in enumerate(header)}


def _entries(path: Path, rows: Iterable[tuple[int, str, dict[str, str]]]) -> tuple[RosterEntry, ...]:
    """Rows keyed by their first identifier; a key listed twice is an error at its line."""
    seen: dict[str, int] = {}
    entries = []
    for line, key, fields in rows:
        if key in seen:
            raise UsageError(f"{path}:{line}: {key!r} is listed twice (first at line {seen[key]}); keep one row")
        seen[key] = line
        entries.append(RosterEntry(key, {k: v for k, v in fields.items() if v}))
    return tuple(entries)


def _canvas(path: Path, header: list[str], rows: list[list[str]]) -> Roster:
    def students() -> Iterable[tuple[int, str, dict[str, str]]]:
        for line, row in enumerate(rows, start=2):
            cells = _cells(header, row)
            if cells.get("Student", "") == "Points Possible" or not cells.get("ID"):
                continue  # the points row, and the muted / manual-posting rows, name no student
            yield line, cells["ID"], {CANVAS_FIELDS[h]: v for h, v in cells.items() if h in CANVAS_FIELDS}

    grades = tuple(h for h in header if h and h not in CANVAS_NOT_GRADES)
    return Roster(path, "canvas", _entries(path, students()), grades)


def _moodle(path: Path, header: list[str], rows: list[list[str]]) -> Roster:
    last = "Last name" if "Last name" in header else "Surname"

    def students() -> Iterable[tuple[int, str, dict[str, str]]]:
        for line, row in enumerate(rows, start=2):
            cells = _cells(header, row)
            fields = {MOODLE_FIELDS[h]: v for h, v in cells.items() if h in MOODLE_FIELDS}
            fields["name"] = " ".join(p for p in (cells.get("First name", ""), cells.get(last, "")) if p)
            key = fields.get("idnumber") or fields.get("email") or fields.get("username") or ""
            if key:
                yield line, key, fields

    return Roster(path, "moodle", _entries(path, students()))


def _blackboard(path: Path, header: list[str], rows: list[list[str]]) -> Roster:
    def students() -> Iterable[tuple[int, str, dict[str, str]]]:
        for line, row in enumerate(rows, start=2):
            cells = _cells(header, row)
            fields = {BLACKBOARD_FIELDS[h]: v for h, v in cells.items() if h in BLACKBOARD_FIELDS}
            fields["name"] = " ".join(p for p in (cells.get("First Name", ""), cells.get("Last Name", "")) if p)
            if fields.get("username"):
                yield line, fields["username"], fields

    grades = tuple(h for h in header if BLACKBOARD_COLUMN_ID.search(h))
    return Roster(path, "blackboard", _entries(path, students()), grades)


def grade_column(roster: Roster | None, wanted: str) -> str:
    """The LMS export's own header of the column `wanted` names (`Lab 1` -> `Lab 1 (4711)`
    or `Lab 1 [Total Pts: 10 Score] |12345`), so that the import updates that column; else
    `wanted` as given."""
    if roster is None or wanted in roster.grade_columns:
        return wanted
    starts = [c for c in roster.grade_columns if c.startswith(wanted + " ") or c.startswith(wanted + "|")]
    return starts[0] if len(starts) == 1 else wanted


def blackboard_column_id(header: str) -> str | None:
    match = BLACKBOARD_COLUMN_ID.search(header)
    return match.group(1) if match else None
