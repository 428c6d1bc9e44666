"""The class roll of a batch: every student found in the class folder, with their name and
what became of their entry (graded, graded but the file did not load, not graded, or
skipped), the final score and the reason, for class.html's "Students" table. An instructor
reading the page sees who is missing from the statistics above it, and why."""

from __future__ import annotations

import heapq
import json
import tempfile
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import astuple, dataclass

from ..text import LINE_CHARS, clean_line
from .discovery import Skipped
from .gradebook import StoredGrade

GRADED, NOT_LOADED, NOT_GRADED, SKIPPED = "graded", "did not load", "not graded", "skipped"


@dataclass(frozen=True)
class RollEntry:
    student: str
    name: str
    file: str
    status: str  # GRADED, NOT_LOADED, NOT_GRADED or SKIPPED
    score: str  # "final / max", or "" when there is none
    reason: str  # why not graded, or why the file did not load; "" otherwise


def _number(value: float | None) -> str:
    return "" if value is None else f"{value:g}"


def class_roll(
    grades: Iterable[StoredGrade], names: Mapping[str, str] | None = None, skipped: Sequence[Skipped] = ()
) -> list[RollEntry]:
    """One entry per student found, sorted by id; every string cleaned (text.py)."""
    rows = [roll_entry(grade, names) for grade in grades]
    return sorted(rows + skipped_entries(skipped), key=lambda r: r.student)


def roll_entry(grade: StoredGrade, names: Mapping[str, str] | None = None) -> RollEntry:
    """One graded (or failed) student's entry: a few short strings, so a publish that
    streams the gradebook keeps only these, never the reports."""
    mark = grade.mark
    score = f"{_number(mark.final)} / {_number(mark.max_score)}" if mark.final is not None else ""
    name = clean_line((names or {}).get(grade.student) or grade.name)
    if grade.report is None:
        status, reason = NOT_GRADED, grade.error or "not graded"
    else:
        load = next((t for t in grade.report.tests if t.kind == "load"), None)
        if load is not None and not load.passed:
            status, reason = NOT_LOADED, load.output.strip().splitlines()[0] if load.output.strip() else ""
        else:
            status, reason = GRADED, ""
    return RollEntry(
        clean_line(grade.student), name, clean_line(grade.file), status, score, clean_line(reason, LINE_CHARS)
    )


def skipped_entries(skipped: Sequence[Skipped]) -> list[RollEntry]:
    """The entries of the files a batch skipped (no grade in the gradebook)."""
    return [
        RollEntry(
            clean_line(entry.student),
            clean_line(entry.name),
            clean_line(entry.shown),
            SKIPPED,
            "",
            clean_line(entry.reason, LINE_CHARS),
        )
        for entry in skipped
    ]


class RollSpool:
    """The roll of a publish that streams the gradebook: each graded student's entry is
    written to a temporary file as it comes (by student), and read back, merged with the
    skipped entries, once the page that shows it is written. Nothing per student stays in
    memory."""

    def __init__(self, skipped: Sequence[Skipped] = ()) -> None:
        self._file = tempfile.TemporaryFile("w+", encoding="utf-8")  # noqa: SIM115 - closed by __exit__
        self._skipped = skipped
        self.count = len(skipped)

    def add(self, entry: RollEntry) -> None:
        self._file.write(json.dumps(astuple(entry)) + "\n")
        self.count += 1

    def entries(self) -> Iterator[RollEntry]:
        """Every entry, by student (a skipped entry before a graded one of the same id)."""
        self._file.seek(0)
        graded = (RollEntry(*json.loads(line)) for line in self._file)
        return heapq.merge(skipped_entries(sorted(self._skipped, key=lambda s: s.student)), graded, key=_student)

    def __enter__(self) -> RollSpool:
        return self

    def __exit__(self, *exc: object) -> None:
        self._file.close()


def _student(entry: RollEntry) -> str:
    return entry.student
