"""Final scores in the column layouts that learning management systems import, with a
roster that maps abgrade's student ids to the LMS's own identifiers.

Layouts (one row per student with a final score; students without one are left out, so
an import leaves their LMS grade alone):

- `canvas`: Canvas's gradebook import CSV: `Student, ID, SIS User ID, SIS Login ID,
  Section, <assignment>`, then a `Points Possible` row under the header (Canvas's own
  export has one; the import reads it as such). Canvas matches a row by ID, SIS User ID or
  SIS Login ID, and an assignment column it does not know becomes a new assignment; name
  the column as Canvas exports it, `Lab 1 (12345)`, to update an existing one. (Canvas
  Instructor Guide, "How do I import grades in the Gradebook?"; Ohio State's CarmenCanvas
  guide, "Import a CSV file into Carmen Grades", lists the same columns.) ID is the
  roster's `canvas_id`, else the abgrade id when it is a number (a Canvas download's
  file names carry the Canvas user id: `smith_john_10001_65001_lab.py`).
- `moodle`: Moodle's "Import grades from CSV file": one column identifying the user and
  one grade column, mapped in the import form ("Map from" the column, "Map to" `useremail`,
  `username` or `useridnumber`; MoodleDocs, "Grade import"). `--moodle-id` picks which:
  `Email address` (default), `Username` or `ID number`, from the roster.
- `gradescope-csv`: `Name, SID, Email, Total Score`, the roster fields Gradescope matches
  students by (Gradescope Help, "Adding Students and Staff": name, email, SID) and the
  score column of Gradescope's own grade export. SID is the roster's `sis_user_id`, else
  the abgrade id.
- `blackboard`: Blackboard Learn's Grade Center upload: `Username` and the grade column,
  whose header must carry the column's ID (`Lab 1 |12345`, as the Grade Center download
  heads it) so that the upload updates that column instead of adding a text column worth 0
  points; every cell quoted, as its comma-delimited upload asks (Blackboard Help,
  "Upload Grades from External Sources").
- `csv`: abgrade's own grades.csv layout (graded score, penalty, override, final, ...).

Identifier cells (ID, SIS ids, e-mail, username, ID number) are written exactly as the
roster has them: the LMS matches students on them, so they are never prefixed with `'`
like free-text cells that a spreadsheet could read as a formula; an abgrade id used as an
identifier that starts like a formula is left out instead (with the reason).

The roster CSV (`--roster FILE`) has a header with `student` (the abgrade id, as in
grades.csv) and any of `name`, `canvas_id`, `sis_user_id`, `sis_login_id`, `section`,
`email`, `username`, `idnumber`; other columns are refused (a typo would silently empty a
column the LMS needs).
"""

from __future__ import annotations

import csv
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from ..lab_setup import UsageError
from ..text import clean_line
from .csv_input import open_csv
from .exports import FORMULA_STARTS, text_cell, write_grades_rows
from .gradebook import StoredGrade

FORMATS = ("canvas", "moodle", "blackboard", "gradescope-csv", "csv")
ROSTER_FIELDS = (
    "student",
    "name",
    "canvas_id",
    "sis_user_id",
    "sis_login_id",
    "section",
    "email",
    "username",
    "idnumber",
)
MOODLE_IDS = {
    "email": ("Email address", "email"),
    "username": ("Username", "username"),
    "idnumber": ("ID number", "idnumber"),
}
CANVAS_COLUMNS = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")
GRADESCOPE_COLUMNS = ("Name", "SID", "Email", "Total Score")


@dataclass(frozen=True)
class RosterEntry:
    student: str
    fields: Mapping[str, str]

    def get(self, key: str) -> str:
        return self.fields.get(key, "")


@dataclass
class Export:
    """The rows written, and the students left out with why (for the terminal)."""

    rows: int = 0
    left_out: list[str] = field(default_factory=list)
    unmatched: list[str] = field(default_factory=list)  # students with a final score but no row


def read_roster(path: Path) -> dict[str, RosterEntry]:
    """Student id -> their LMS fields; raises UsageError naming the file, line and fix."""
    with open_csv(path, "roster") as reader:
        header = [(h or "").strip().lower().replace(" ", "_") for h in reader.fieldnames or []]
        if "student" not in header:
            raise UsageError(
                f"{path}:1: the roster needs a column `student` (the abgrade id, as in grades.csv); "
                f"optional: {', '.join(ROSTER_FIELDS[1:])}"
            )
        for column in header:
            if column not in ROSTER_FIELDS:
                raise UsageError(f"{path}:1: unknown roster column {column!r}; known: {', '.join(ROSTER_FIELDS)}")
        reader.fieldnames = header
        roster: dict[str, RosterEntry] = {}
        for row in reader:
            student = (row.get("student") or "").strip()
            if not student:
                raise UsageError(f"{path}:{reader.line_num}: student: empty; every row needs the abgrade id")
            if student in roster:
                raise UsageError(f"{path}:{reader.line_num}: student {student!r} is listed twice; keep one row")
            values = {k: (v or "").strip() for k, v in row.items() if k is not None and k != "student"}
            roster[student] = RosterEntry(student, values)
    return roster


def _name(grade: StoredGrade, entry: RosterEntry | None) -> str:
    return clean_line((entry.get("name") if entry else "") or grade.name or grade.student)


def _score(value: float | None) -> str:
    return "" if value is None else f"{value:g}"


def write_export(
    fmt: str,
    grades: list[StoredGrade],
    roster: Mapping[str, RosterEntry],
    handle: TextIO,
    assignment: str,
    moodle_id: str = "email",
) -> Export:
    """Write `grades` in the layout `fmt` to `handle`."""
    result = Export()
    writer = csv.writer(handle)
    if fmt == "csv":
        write_grades_rows(grades, writer)
        result.rows = len(grades)
        return result
    scored = []
    for grade in grades:
        if grade.mark.final is None:
            result.left_out.append(f"{grade.student}: no final score (not graded, no override)")
        else:
            scored.append(grade)
    points = max((g.mark.max_score or 0.0 for g in grades if g.report is not None), default=0.0)
    if fmt == "canvas":
        writer.writerow([*CANVAS_COLUMNS, text_cell(assignment)])
        writer.writerow(["Points Possible", "", "", "", "", _score(points)])
        for grade in scored:
            entry = roster.get(grade.student)
            canvas_id = (entry.get("canvas_id") if entry else "") or (grade.student if grade.student.isdigit() else "")
            ids = [canvas_id, entry.get("sis_user_id") if entry else "", entry.get("sis_login_id") if entry else ""]
            if not any(ids):
                result.left_out.append(f"{grade.student}: no Canvas ID, SIS User ID or SIS Login ID (add to roster)")
                result.unmatched.append(grade.student)
                continue
            section = entry.get("section") if entry else ""
            # identifiers exactly as the roster has them (Canvas matches on them); only text is neutralised
            writer.writerow([text_cell(_name(grade, entry)), *ids, text_cell(section), _score(grade.mark.final)])
            result.rows += 1
    elif fmt == "moodle":
        label, key = MOODLE_IDS[moodle_id]
        writer.writerow([label, text_cell(assignment)])
        for grade in scored:
            entry = roster.get(grade.student)
            ident = entry.get(key) if entry else ""
            if not ident:
                result.left_out.append(f"{grade.student}: no {key} in the roster")
                result.unmatched.append(grade.student)
                continue
            writer.writerow([ident, _score(grade.mark.final)])  # the identifier as the roster has it
            result.rows += 1
    elif fmt == "blackboard":
        quoted = csv.writer(handle, quoting=csv.QUOTE_ALL)
        quoted.writerow(["Username", assignment])
        for grade in scored:
            entry = roster.get(grade.student)
            username = (entry.get("username") if entry else "") or grade.student
            if not entry and username.startswith(FORMULA_STARTS):
                result.left_out.append(f"{grade.student}: no username in the roster, and the id starts like a formula")
                result.unmatched.append(grade.student)
                continue
            quoted.writerow([username, _score(grade.mark.final)])
            result.rows += 1
    elif fmt == "gradescope-csv":
        writer.writerow(GRADESCOPE_COLUMNS)
        for grade in scored:
            entry = roster.get(grade.student)
            sid = (entry.get("sis_user_id") if entry else "") or grade.student
            if not (entry and entry.get("sis_user_id")) and sid.startswith(FORMULA_STARTS):
                result.left_out.append(
                    f"{grade.student}: no sis_user_id in the roster, and the id starts like a formula"
                )
                result.unmatched.append(grade.student)
                continue
            email = entry.get("email") if entry else ""
            writer.writerow([text_cell(_name(grade, entry)), sid, email, _score(grade.mark.final)])
            result.rows += 1
    else:
        raise UsageError(f"--format {fmt!r}: expected one of {', '.join(FORMATS)}")
    return result
