"""`abgrade gradebook show|override|export`: the instructor's work on a batch's gradebook
after grading: look at it, override a score (with who, when and why: grades.csv, the
student's feedback and the class pages are rewritten at once), and export final scores
for an LMS. Every number is adjustments.py's final score. The gradebook is found with
`--book` (the batch's output folder or its gradebook.sqlite), else in the current folder
or the one `*-abgrade` folder in it; the lab with `--lab`, needed only when the gradebook
holds several."""

from __future__ import annotations

import argparse
import getpass
import json
import math
import os
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .common import EXIT_FAILED, EXIT_OK, UsageError, check_output_file

if TYPE_CHECKING:
    from ..batch.gradebook import Gradebook, StoredGrade

BOOK_NAME = "gradebook.sqlite"


def register(commands: argparse._SubParsersAction) -> None:
    gradebook = commands.add_parser("gradebook", help="show, override, export and publish the grades of a batch")
    actions = gradebook.add_subparsers(metavar="ACTION")
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--book", type=Path, metavar="PATH", help="the batch's output folder or its gradebook.sqlite (default: found)"
    )
    common.add_argument("--lab", help="the lab (default: the gradebook's only one)")

    show = actions.add_parser("show", parents=[common], help="the grades as a table, or one student's in full")
    show.add_argument("student", nargs="?", metavar="STUDENT", help="one student's grade, penalty and overrides")
    show.add_argument("--json", action="store_true", help="as JSON")
    show.set_defaults(run=run_show)

    override = actions.add_parser(
        "override", parents=[common], help="set or adjust a student's final score, with the reason (audited)"
    )
    override.add_argument("student", metavar="STUDENT")
    what = override.add_mutually_exclusive_group(required=True)
    what.add_argument("--points", type=float, metavar="N", help="the final score is N (penalty and grade aside)")
    what.add_argument("--add", type=float, metavar="N", help="N points on top of the penalised score (negative: off)")
    what.add_argument("--remove", action="store_true", help="remove the student's override")
    override.add_argument("--reason", required=True, metavar="TEXT", help="why (kept in the audit trail)")
    override.add_argument("--by", metavar="NAME", help="who (default: the operating system user)")
    override.set_defaults(run=run_override)

    export = actions.add_parser("export", parents=[common], help="final scores in an LMS's import layout")
    export.add_argument("--format", required=True, choices=("canvas", "moodle", "blackboard", "gradescope-csv", "csv"))
    export.add_argument(
        "--roster",
        type=Path,
        metavar="FILE",
        help="the class list: Canvas's gradebook export, Moodle's participants download, Blackboard's Grade "
        "Center download, or abgrade's own CSV (student,name,canvas_id,sis_user_id,...)",
    )
    export.add_argument("-o", "--output", type=Path, metavar="FILE", help="write here (default: standard output)")
    export.add_argument("--assignment", metavar="NAME", help="the grade column's name (default: abgrade LAB)")
    export.add_argument(
        "--moodle-id",
        choices=("email", "username", "idnumber"),
        help="moodle: the roster field identifying students (default: email); map it to useremail, username "
        "or useridnumber in Moodle's import",
    )
    export.set_defaults(run=run_export)

    from .gradebook_publish import add_publish_parser, run_publish

    add_publish_parser(actions, common, lambda args: run_publish(args, open_book, operator))
    gradebook.set_defaults(run=lambda args: gradebook.print_help() or 2)


def find_book(given: Path | None, start: Path | None = None) -> Path:
    """The gradebook file: `--book` (a folder or the file), else in the current folder,
    else the one `*-abgrade/gradebook.sqlite` in it. Never creates one."""
    if given is not None:
        path = given / BOOK_NAME if given.is_dir() else given
        if not path.is_file():
            raise UsageError(f"{given}: no gradebook there; give the batch's output folder (DIR-abgrade)")
        return path
    start = start or Path.cwd()
    if (start / BOOK_NAME).is_file():
        return start / BOOK_NAME
    found = sorted(start.glob(f"*-abgrade/{BOOK_NAME}"))
    if len(found) == 1:
        return found[0]
    where = ", ".join(str(p.parent) for p in found) if found else f"no *-abgrade folder in {start}"
    raise UsageError(f"which gradebook? ({where}); give --book DIR-abgrade")


def open_book(args: argparse.Namespace) -> tuple[Gradebook, str]:
    from ..batch.gradebook import Gradebook

    path = find_book(args.book)
    book = Gradebook(path)
    labs = book.labs()
    if args.lab is not None:
        if args.lab not in labs:
            book.close()
            raise UsageError(f"--lab {args.lab}: {path} holds no grades of it (labs: {', '.join(labs) or 'none'})")
        return book, args.lab
    if len(labs) != 1:
        book.close()
        raise UsageError(f"{path} holds {'no grades' if not labs else 'the labs ' + ', '.join(labs)}; give --lab")
    return book, labs[0]


def known_student(book: Gradebook, lab: str, student: str) -> None:
    from ..text import clean_line

    students = book.students(lab)
    if student not in students:
        shown = ", ".join(clean_line(s) for s in students[:10]) + (", ..." if len(students) > 10 else "")
        raise UsageError(
            f"no student {clean_line(student)!r} in lab {lab} of {book.path} (students: {shown or 'none'}); "
            "give the id as in grades.csv"
        )


# --- show ---------------------------------------------------------------------------


def _number(value: float | None) -> str:
    from ..batch.adjustments import number

    return number(value)


def grade_record(grade: StoredGrade, history: list | None = None) -> dict[str, Any]:
    """One student's grade as plain data (every student-side string cleaned)."""
    from ..batch.adjustments import lateness
    from ..text import LINE_CHARS, clean_line

    mark, penalty, override = grade.mark, grade.penalty, grade.override
    record: dict[str, Any] = {
        "student": clean_line(grade.student),
        "name": clean_line(grade.name),
        "file": clean_line(grade.file),
        "status": grade.status,
        "score": mark.raw,
        "max_score": mark.max_score,
        "penalty": None,
        "override": None,
        "final": mark.final,
        "graded_at": grade.graded_at,
        "error": None if grade.error is None else clean_line(grade.error, LINE_CHARS),
    }
    if penalty is not None:
        known = not penalty.time_unknown
        record["penalty"] = {
            "submitted_at": penalty.submitted_at if known else None,
            "source": penalty.source,
            "late": lateness(penalty),  # "2 days late", "on time" or "time unknown"
            "days_late": penalty.days_late if known else None,
            "percent": penalty.percent,
            "points": mark.penalty_points,
            "policy": penalty.policy,
        }
    if override is not None:
        record["override"] = {
            "mode": override.mode,
            "points": override.points,
            "reason": clean_line(override.reason, LINE_CHARS),
            "by": clean_line(override.by),
            "at": override.at,
        }
    if grade.report is not None:
        record["kinds"] = {kind: list(pair) for kind, pair in grade.report.subtotals().items()}
        record["diagnoses"] = sorted({clean_line(d) for t in grade.report.tests for d in t.diagnoses})
    if history is not None:
        record["history"] = [
            {
                "action": e.action,
                "points": e.points,
                "reason": clean_line(e.reason, LINE_CHARS),
                "by": clean_line(e.by),
                "at": e.at,
            }
            for e in history
        ]
    return record


TABLE_COLUMNS = ("student", "name", "status", "score", "max", "late", "penalty", "override", "final")


def table_text(records: list[dict[str, Any]]) -> str:
    """A plain aligned table (the cells are cleaned already; widths capped)."""
    rows = [list(TABLE_COLUMNS)]
    for r in records:
        penalty, override = r["penalty"], r["override"]
        rows.append(
            [
                r["student"][:40],
                r["name"][:30],
                r["status"],
                _number(r["score"]),
                _number(r["max_score"]),
                _late_cell(penalty),
                f"-{_number(penalty['points'])}" if penalty and penalty["points"] else "",
                f"{override['mode']} {_number(override['points'])}" if override else "",
                _number(r["final"]),
            ]
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(TABLE_COLUMNS))]
    return "\n".join("  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in rows)


def _late_cell(penalty: dict[str, Any] | None) -> str:
    if penalty is None or penalty["late"] == "on time":
        return ""
    return "time unknown" if penalty["days_late"] is None else f"{penalty['days_late']}d"


def student_text(record: dict[str, Any]) -> str:
    lines = [
        f"student   {record['student']}" + (f" ({record['name']})" if record["name"] else ""),
        f"file      {record['file']}",
        f"status    {record['status']}" + (f": {record['error']}" if record["error"] else ""),
        f"score     {_number(record['score'])} / {_number(record['max_score'])} (as graded {record['graded_at']})",
    ]
    penalty = record["penalty"]
    if penalty is not None and penalty["days_late"] is None:
        lines.append("submitted time unknown: no source named for it had this student's time; not penalised")
        lines.append(f"policy    {penalty['policy']}")
    elif penalty is not None:
        late = (
            f"late by {penalty['days_late']} day(s): -{penalty['percent']:g}%, -{_number(penalty['points'])} points"
            if penalty["days_late"]
            else "on time"
        )
        lines.append(f"submitted {penalty['submitted_at']} ({penalty['source']}); {late}")
        lines.append(f"policy    {penalty['policy']}")
    override = record["override"]
    if override is not None:
        lines.append(
            f"override  {override['mode']} {_number(override['points'])} by {override['by']} at {override['at']}: "
            f"{override['reason']}"
        )
    lines.append(f"final     {_number(record['final'])}")
    for kind, (got, most) in record.get("kinds", {}).items():
        lines.append(f"  {kind:<12}{got:g} / {most:g}")
    if record.get("diagnoses"):
        lines.append("likely bugs: " + ", ".join(record["diagnoses"]))
    if record.get("history"):
        lines.append("override history:")
        for event in record["history"]:
            points = "" if event["points"] is None else f" {_number(event['points'])}"
            lines.append(f"  {event['at']}  {event['action']}{points}  by {event['by']}: {event['reason']}")
    return "\n".join(lines)


def run_show(args: argparse.Namespace) -> int:
    book, lab = open_book(args)
    try:
        if args.student is not None:
            known_student(book, lab, args.student)
            [grade] = book.grades(lab, [args.student])
            record = grade_record(grade, book.override_history(lab, args.student))
            print(json.dumps(record, indent=2, ensure_ascii=False) if args.json else student_text(record))
        else:
            records = [grade_record(g) for g in book.grades(lab)]
            print(json.dumps(records, indent=2, ensure_ascii=False) if args.json else table_text(records))
    finally:
        book.close()
    return EXIT_OK


# --- override -----------------------------------------------------------------------


def operator() -> str:
    """Who runs this: the operating system user (a container may have no name for it)."""
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return f"uid {os.getuid()}"


def run_override(args: argparse.Namespace) -> int:
    from ..batch.adjustments import Override
    from ..text import clean_line

    reason = args.reason.strip()
    if not reason:
        raise UsageError("--reason: say why (it is kept in the gradebook's audit trail)")
    value = args.points if args.points is not None else args.add
    if value is not None and not math.isfinite(value):
        raise UsageError(f"--points/--add: {value} is not a number of points")
    if args.points is not None and args.points < 0:
        raise UsageError(f"--points {args.points:g}: a score can't be negative; use --add to take points off")
    by = (args.by or operator()).strip() or operator()
    book, lab = open_book(args)
    try:
        known_student(book, lab, args.student)
        student = clean_line(args.student)
        if args.remove:
            if not book.remove_override(lab, args.student, reason, by):
                raise UsageError(f"student {student!r} has no override to remove")
            print(f"removed the override of {student} (lab {lab})")
        else:
            mode = "set" if args.points is not None else "add"
            at = datetime.now(timezone.utc).isoformat(timespec="seconds")
            book.set_override(lab, args.student, Override(mode, float(value), reason, by, at))
        [grade] = book.grades(lab, [args.student])
        mark = grade.mark
        if not args.remove:
            print(f"override of {student} (lab {lab}): {grade.override.describe() if grade.override else ''}")
        print(f"  {mark_line(grade)}")
        if mark.max_score is not None and mark.final is not None and mark.final > mark.max_score:
            print(f"  note: the final score is above the maximum ({mark.max_score:g})")
        print(f"  {republish(book, lab, args.student, graded=grade.report is not None)}")
    finally:
        book.close()
    return EXIT_OK


def mark_line(grade: StoredGrade) -> str:
    """Graded score, lateness and penalty, override, final: one line for the terminal."""
    from ..batch.adjustments import lateness

    mark, penalty, override = grade.mark, grade.penalty, grade.override
    late = lateness(penalty)
    parts = [f"graded {_number(mark.raw) or 'none'} / {_number(mark.max_score) or 'none'}"]
    if late:
        parts.append(f"{late}, penalty -{_number(mark.penalty_points)}" if mark.penalty_points else late)
    parts.append(f"override {override.describe()}" if override else "no override")
    parts.append(f"final {_number(mark.final) or 'none'}")
    return ", ".join(parts)


def republish(book: Gradebook, lab: str, student: str, graded: bool = True) -> str:
    """Rewrite the exports the override changes (grades.csv, the student's feedback, the
    class pages) as the last batch wrote them; what was done, as one line."""
    from .. import registry
    from ..batch.exports import feedback_names, publish
    from ..batch.lock import GradebookBusy, gradebook_lock

    context = book.export_context(lab)
    if context is not None and context.hints:  # the words the batch wrote with (its spec's course)
        hints = dict(context.hints)
    else:
        found = registry.find(lab)
        from ..checks.state_hint import with_state_hint

        hints = with_state_hint(found.bug_hints) if found is not None else {}
    out = book.path.parent
    try:
        with gradebook_lock(out):  # never two writers of one export folder
            published = publish(book, lab, out, hints, feedback_for=[student])
    except GradebookBusy:
        return (
            f"a batch is grading into {out} now: when it ends it rewrites grades.csv, the feedback and the "
            "class pages, with this override"
        )
    if published is None:
        return (
            f"{out}: its exports were written by an abgrade that kept no record of them; the next "
            "`abgrade batch` of the class rewrites them (it grades nothing new); `abgrade gradebook export` has it now"
        )
    name = feedback_names([student])[student].removesuffix(".md")
    pages = f"feedback/{name}.md" + (" and .html" if graded else "")
    return f"rewrote {out}/grades.csv, {pages}, summary.txt, summary.svg, class.html"


# --- export -------------------------------------------------------------------------


def run_export(args: argparse.Namespace) -> int:
    from ..batch.lms import write_export
    from ..batch.rosters import blackboard_column_id, grade_column, read_any_roster, resolve
    from ..text import clean_line

    if args.format == "moodle" and args.roster is None:
        raise UsageError(
            "--format moodle needs --roster FILE: Moodle identifies students by email, username or idnumber"
        )
    if args.moodle_id is not None and args.format != "moodle":
        raise UsageError(f"--moodle-id goes with --format moodle, not {args.format}")
    check_output_file(args.output, "-o")
    roster = read_any_roster(args.roster) if args.roster is not None else None
    book, lab = open_book(args)
    try:
        grades = book.grades(lab)
    finally:
        book.close()
    assignment = grade_column(roster, args.assignment or f"abgrade {lab}")
    if args.format == "blackboard" and blackboard_column_id(assignment) is None:
        raise UsageError(
            f"--assignment {assignment!r}: Blackboard matches a grade column by its ID: give the header of the "
            "Grade Center download's column, e.g. 'Lab 1 [Total Pts: 10 Score] |12345' (or 'Lab 1 |12345'), or "
            "--roster with that download; without it the upload adds a text column worth 0 points"
        )
    matched = resolve(roster, ((g.student, g.name) for g in grades))
    moodle_id = args.moodle_id or "email"
    if args.output is not None:
        try:
            with args.output.open("w", newline="", encoding="utf-8") as handle:
                result = write_export(args.format, grades, matched, handle, assignment, moodle_id)
        except OSError as exc:
            raise UsageError(f"{args.output}: cannot write ({exc.strerror})") from None
        print(f"wrote {args.output}: {result.rows} student(s), format {args.format}", file=sys.stderr)
    else:
        result = write_export(args.format, grades, matched, sys.stdout, assignment, moodle_id)
    for line in result.left_out:
        print(f"  left out {clean_line(line, 500)}", file=sys.stderr)
    if roster is not None:
        matched_rows = {id(roster.find(g.student, g.name)) for g in grades if g.student in matched}
        unlisted = [e for e in roster.entries if id(e) not in matched_rows]
        if unlisted:
            print(
                f"  {len(unlisted)} roster student(s) have no grade in the gradebook (left out, their LMS grade "
                "stays as it is): "
                + ", ".join(clean_line(e.get("name") or e.student) for e in unlisted[:10])
                + (", ..." if len(unlisted) > 10 else ""),
                file=sys.stderr,
            )
    if result.unmatched:
        print(
            f"abgrade: {len(result.unmatched)} of {len(result.unmatched) + result.rows} graded student(s) have no "
            f"row in the {args.format} export: "
            + ", ".join(clean_line(s) for s in result.unmatched[:20])
            + (", ..." if len(result.unmatched) > 20 else "")
            + "; give --roster with their LMS ids (Canvas's gradebook export, Moodle's participants, Blackboard's "
            "Grade Center download), or check the class folder's ids (`abgrade gradebook show`)",
            file=sys.stderr,
        )
        return EXIT_FAILED
    return EXIT_OK
