"""What a batch leaves in its output folder, all rebuilt from the gradebook (so a resumed
run exports everyone, not just what it graded itself):

- `grades.csv`: student, file, status, score, max_score, then score and maximum per check kind;
- `feedback/<student>.md` and `feedback/<student>.html`: per student, Markdown (see
  feedback.py) and the HTML report with the search trees drawn;
- `summary.txt` and `summary.svg`: the class summary as text and as a picture.
"""
from __future__ import annotations

import csv
import hashlib
import re
from pathlib import Path

from ..report.html import write_html
from ..results import ordered_kinds
from .feedback import feedback_markdown
from .gradebook import StoredGrade
from .picture import class_picture
from .summary import ClassSummary, summary_text


def write_grades_csv(grades: list[StoredGrade], path: Path) -> None:
    kinds = list(ordered_kinds(k for g in grades if g.report for k in g.report.subtotals()))
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["student", "file", "status", "score", "max_score",
                         *(column for kind in kinds for column in (kind, f"{kind}_max")), "error"])
        for grade in grades:
            if grade.report is None:
                writer.writerow([grade.student, grade.file, grade.status, "", "", *([""] * 2 * len(kinds)),
                                 grade.error or ""])
                continue
            subtotals = grade.report.subtotals()
            cells = [_number(x) for kind in kinds for x in subtotals.get(kind, (None, None))]
            writer.writerow([grade.student, grade.file, grade.status, _number(grade.report.score),
                             _number(grade.report.max_score), *cells, ""])


def _number(value: float | None) -> str:
    return "" if value is None else f"{value:g}"


def feedback_names(students: list[str]) -> dict[str, str]:
    """A safe, distinct file name per student id (ids may hold any character)."""
    names: dict[str, str] = {}
    taken: set[str] = set()
    for student in students:
        name = re.sub(r"[^\w.-]", "_", student).strip(".") or "student"
        if name in taken:
            name = f"{name}-{hashlib.sha256(student.encode()).hexdigest()[:8]}"
        taken.add(name)
        names[student] = f"{name}.md"
    return names


def write_feedback(grades: list[StoredGrade], lab: str, folder: Path, show_hidden: bool,
                   hints: dict[str, str]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    names = feedback_names([g.student for g in grades])
    for grade in grades:
        path = folder / names[grade.student]
        path.write_text(feedback_markdown(grade, lab, show_hidden))
        if grade.report is not None:
            write_html(grade.report, path.with_suffix(".html"), show_hidden=show_hidden, hints=hints)


def write_exports(grades: list[StoredGrade], summary: ClassSummary, hints: dict[str, str],
                  out: Path, show_hidden: bool) -> None:
    out.mkdir(parents=True, exist_ok=True)
    write_grades_csv(grades, out / "grades.csv")
    write_feedback(grades, summary.lab, out / "feedback", show_hidden, hints)
    (out / "summary.txt").write_text(summary_text(summary, hints) + "\n")
    (out / "summary.svg").write_text(class_picture(summary))
