"""What a batch leaves in its output folder, all rebuilt from the gradebook (so a resumed
run exports everyone, not just what it graded itself), by a batch and at once by
`gradebook override` alike (`publish`), with the final score of adjustments.py in each:

- `grades.csv`: a row per student found: student, name, file, status (graded, error,
  skipped), score (as graded), max_score, submitted_at, time_source (where the time came
  from, or `time unknown`), days_late, penalty (points), override (`set N` / `add N`),
  final, score and maximum per check kind, feedback file, reason, override_reason;
- `feedback/<student>.md` and `feedback/<student>.html`: per student, Markdown (see
  feedback.py) and the HTML report with the search trees drawn; a batch writes each
  student's as their grade is recorded (`write_recorded_feedback`), while its grader
  processes grade the others, and its end writes the rest (`publish(written_by=...)`);
- `summary.txt` and `summary.svg`: the class summary as text and as a picture;
- `class.html`: the class misconceptions page (classpage.py).
"""

from __future__ import annotations

import csv
import hashlib
import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..report.html import FinalScore, write_html
from ..results import ordered_kinds
from ..text import LINE_CHARS, clean_line
from .adjustments import adjustment_items, number
from .classpage import class_page_parts
from .discovery import Skipped
from .feedback import feedback_markdown
from .gradebook import Gradebook, StoredGrade
from .insights import ClassInsights, InsightsBuilder, class_insights
from .picture import class_picture
from .roll import RollEntry, RollSpool, class_roll, roll_entry
from .summary import ClassSummary, SummaryBuilder, summary_text

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def write_grades_csv(
    grades: list[StoredGrade], path: Path, names: Mapping[str, str] | None = None, skipped: Sequence[Skipped] = ()
) -> None:
    """One row per student found: graded, error (could not be graded, with the reason) or
    skipped (the folder entry could not be used, with the reason). Text cells are
    neutralised against spreadsheet formulas; score cells are plain numbers."""
    with path.open("w", newline="", encoding="utf-8", errors="replace") as handle:
        write_grades_rows(grades, csv.writer(handle), names, skipped)


def write_grades_rows(
    grades: Iterable[StoredGrade], writer: Any, names: Mapping[str, str] | None = None, skipped: Sequence[Skipped] = ()
) -> None:
    """grades.csv's header and rows, to a csv writer (`gradebook export --format csv` too)."""
    grades = list(grades)
    kinds = ordered_kinds(k for g in grades if g.report for k in g.report.subtotals())
    rows = GradesRows(writer, kinds, names, skipped)
    for grade in sorted(grades, key=lambda g: g.student):
        rows.add(grade)
    rows.finish()


class GradesRows:
    """grades.csv written as the grades come, by student (the gradebook's order): a header
    of the check kinds found, then one row per student, the skipped folder entries in their
    place among them. Holds one row at a time."""

    def __init__(
        self, writer: Any, kinds: Iterable[str], names: Mapping[str, str] | None = None, skipped: Sequence[Skipped] = ()
    ) -> None:
        self.writer, self.kinds, self.names = writer, list(kinds), names or {}
        self.skipped = sorted(skipped, key=lambda entry: entry.student)
        self.files = FeedbackNames()
        writer.writerow(
            [
                "student",
                "name",
                "file",
                "status",
                *ADJUSTED_COLUMNS,
                *(column for kind in self.kinds for column in (kind, f"{kind}_max")),
                "feedback",
                "reason",
                "override_reason",
            ]
        )

    def add(self, grade: StoredGrade) -> None:
        self._skipped_before(grade.student)
        if grade.report is None:
            by_kind = [""] * (2 * len(self.kinds))
        else:
            subtotals = grade.report.subtotals()
            by_kind = [number(x) for kind in self.kinds for x in subtotals.get(kind, (None, None))]
        status = "graded" if grade.report is not None else "error"
        self.writer.writerow(
            [
                text_cell(grade.student),
                text_cell(self.names.get(grade.student) or grade.name),
                text_cell(grade.file),
                status,
                *adjusted_cells(grade),
                *by_kind,
                f"feedback/{self.files.name(grade.student)}",
                text_cell(grade.error or ""),
                text_cell(override_note(grade)),
            ]
        )

    def finish(self) -> None:
        self._skipped_before(None)

    def _skipped_before(self, student: str | None) -> None:
        """The skipped entries that sort before `student` (None: all that are left); one
        of the same id comes after the graded row, as a stable sort put it."""
        while self.skipped and (student is None or self.skipped[0].student < student):
            entry = self.skipped.pop(0)
            self.writer.writerow(
                [
                    text_cell(entry.student),
                    text_cell(entry.name),
                    text_cell(entry.shown),
                    "skipped",
                    *([""] * (len(ADJUSTED_COLUMNS) + 2 * len(self.kinds))),
                    "",
                    text_cell(entry.reason),
                    "",
                ]
            )


ADJUSTED_COLUMNS = (
    "score",
    "max_score",
    "submitted_at",
    "time_source",
    "days_late",
    "penalty",
    "override",
    "final",
)
TIME_SOURCES = {"timestamps": "timestamps file", "file name": "file name", "file time": "file time"}


def adjusted_cells(grade: StoredGrade) -> list[str]:
    """The ADJUSTED_COLUMNS of a student: graded score, lateness, override, final score.
    A student whose time is unknown has `time unknown` and no days late nor penalty."""
    mark, penalty, override = grade.mark, grade.penalty, grade.override
    known = penalty is not None and not penalty.time_unknown
    return [
        number(mark.raw),
        number(mark.max_score),
        penalty.submitted_at if penalty else "",
        ("time unknown" if penalty.time_unknown else TIME_SOURCES.get(penalty.source, penalty.source))
        if penalty
        else "",
        str(penalty.days_late) if penalty and known else "",
        number(mark.penalty_points) if penalty and known and mark.raw is not None else "",
        override.describe() if override else "",
        number(mark.final),
    ]


def override_note(grade: StoredGrade) -> str:
    """Why, by whom and when the score was overridden (one line, sanitised)."""
    override = grade.override
    if override is None:
        return ""
    return clean_line(f"{override.reason} ({override.by}, {override.at})", LINE_CHARS)


def text_cell(value: str) -> str:
    """A text cell a spreadsheet shows as text: one starting like a formula gets a `'`."""
    return f"'{value}" if value.startswith(FORMULA_STARTS) else value


SLUG_CHARS = 60  # of the readable part; with the hash a name stays far below the 255-byte limit
HASH_CHARS = 12


def feedback_name(student: str) -> str:
    """The feedback file name (without suffix) of a student id: the id itself when it is a
    short, lower-case, portable name; otherwise a readable slug, `~` and a hash of the exact
    id. The same id always gets the same name (stable across runs), and two ids never share
    one: `~` never appears in a plain name, and hashed names differ by their hash. Lower
    case only, so that a case-insensitive file system (macOS) can't merge `Ann` and `ann`."""
    slug = re.sub(r"[^a-z0-9._-]", "_", student.lower(), flags=re.ASCII).strip(".") or "student"
    if slug == student and len(slug) <= SLUG_CHARS:
        return slug
    digest = hashlib.sha256(student.encode("utf-8", "surrogatepass")).hexdigest()[:HASH_CHARS]
    return f"{slug[:SLUG_CHARS]}~{digest}"


def feedback_names(students: list[str]) -> dict[str, str]:
    """Student id -> feedback file name (`.md`); distinct by construction, checked anyway."""
    names = FeedbackNames()
    return {student: names.name(student) for student in students}


class FeedbackNames:
    """Feedback file names (`.md`) handed out one student at a time, each hashed one
    checked against those handed out before: a 48-bit hash collision is refused rather
    than mixing two students up. A plain name is the id itself, which no other id has,
    and is not kept (a class of plain ids costs no memory here)."""

    def __init__(self) -> None:
        self._hashed: dict[str, str] = {}

    def name(self, student: str) -> str:
        stem = feedback_name(student)
        if stem != student and self._hashed.setdefault(stem, student) != student:
            raise RuntimeError("two student ids map to one feedback file name")
        return f"{stem}.md"


def write_feedback(
    grades: list[StoredGrade], lab: str, folder: Path, show_hidden: bool, hints: Mapping[str, str]
) -> None:
    """Each student's feedback, `.md` and (when graded) `.html`, both with the final score."""
    folder.mkdir(parents=True, exist_ok=True)
    names = FeedbackNames()
    for grade in grades:
        write_one_feedback(grade, lab, folder / names.name(grade.student), show_hidden, hints)


def write_one_feedback(grade: StoredGrade, lab: str, path: Path, show_hidden: bool, hints: Mapping[str, str]) -> None:
    """One student's feedback: `path` (Markdown) and, when graded, the HTML report beside it."""
    path.write_text(feedback_markdown(grade, lab, show_hidden), encoding="utf-8", errors="replace")
    if grade.report is not None:
        adjusted = FinalScore(grade.mark.final, adjustment_items(grade.mark, grade.penalty, grade.override))
        write_html(grade.report, path.with_suffix(".html"), show_hidden=show_hidden, hints=hints, adjusted=adjusted)


def write_recorded_feedback(
    book: Gradebook, lab: str, student: str, out: Path, show_hidden: bool, hints: Mapping[str, str]
) -> None:
    """One student's feedback files, read back from the gradebook just as `publish` reads
    them (penalty and override included), so the file is the one the batch's end would
    write: a batch calls it as each grade is recorded, the batch process being idle while
    the pool runs, and its end then skips the students of its own run (`written_by`)."""
    folder = out / "feedback"
    for grade in book.iter_grades(lab, [student]):
        folder.mkdir(parents=True, exist_ok=True)
        write_one_feedback(grade, lab, folder / f"{feedback_name(grade.student)}.md", show_hidden, hints)


def write_exports(
    grades: list[StoredGrade],
    summary: ClassSummary,
    hints: Mapping[str, str],
    out: Path,
    show_hidden: bool,
    names: Mapping[str, str] | None = None,
    skipped: Sequence[Skipped] = (),
    feedback_for: Collection[str] | None = None,
) -> None:
    """Every export; the feedback files only of `feedback_for` when given (the others are
    unchanged: an override changes one student's)."""
    out.mkdir(parents=True, exist_ok=True)
    write_grades_csv(grades, out / "grades.csv", names, skipped)
    chosen = grades if feedback_for is None else [g for g in grades if g.student in feedback_for]
    write_feedback(chosen, summary.lab, out / "feedback", show_hidden, hints)
    roll = class_roll(grades, names, skipped)
    write_class_pages(summary, class_insights(grades, hints), hints, out, roll, len(roll))


@dataclass(frozen=True)
class Published:
    """What a publish computed on its way through the class: the summary and the insights."""

    summary: ClassSummary
    insights: ClassInsights


def publish(
    book: Gradebook,
    lab: str,
    out: Path,
    hints: Mapping[str, str],
    feedback_for: Collection[str] | None = None,
    written_by: int | None = None,
) -> Published | None:
    """Rewrite the exports of `lab` in `out` from the gradebook: its grades, penalties and
    overrides, and what the last batch's exports were made of (ExportContext). A batch
    calls it at its end and `gradebook override` at once, so both write the same files.
    One pass over the gradebook, one student at a time (grades.csv's row, the feedback,
    the summary's and insights' counts), so a class of any size takes the same memory.
    Returns the summary and insights, or None when no batch of this abgrade has written
    this lab's exports yet (nothing is written then). `written_by`: the run whose grades'
    feedback files are written already (write_recorded_feedback), skipped here."""
    context = book.export_context(lab)
    if context is None:
        return None
    out.mkdir(parents=True, exist_ok=True)
    folder = out / "feedback"
    folder.mkdir(exist_ok=True)
    summary, insights = SummaryBuilder(lab), InsightsBuilder(hints)
    kinds = ordered_kinds(book.graded_kinds(lab, exported=True))
    with RollSpool(context.skipped) as roll:
        with (out / "grades.csv").open("w", newline="", encoding="utf-8", errors="replace") as handle:
            rows = GradesRows(csv.writer(handle), kinds, skipped=context.skipped)
            for grade in book.iter_grades(lab, exported=True):
                rows.add(grade)
                roll.add(roll_entry(grade))
                chosen = feedback_for is None or grade.student in feedback_for
                if chosen and (written_by is None or grade.run_id != written_by):
                    write_one_feedback(grade, lab, folder / rows.files.name(grade.student), context.show_hidden, hints)
                summary.add(grade)
                insights.add(grade)
            rows.finish()
        published = Published(summary.result(), insights.result())
        write_class_pages(published.summary, published.insights, hints, out, roll.entries(), roll.count)
    return published


def write_class_pages(
    summary: ClassSummary,
    insights: ClassInsights,
    hints: Mapping[str, str],
    out: Path,
    roll: Iterable[RollEntry],
    found: int,
) -> None:
    """summary.txt, summary.svg and class.html (with the class roll: every student found,
    `found` entries, written as they are read)."""
    (out / "summary.txt").write_text(summary_text(summary, hints, insights) + "\n", encoding="utf-8")
    (out / "summary.svg").write_text(class_picture(summary, hints, insights), encoding="utf-8")
    with (out / "class.html").open("w", encoding="utf-8") as page:
        page.writelines(class_page_parts(summary, insights, roll, found))
