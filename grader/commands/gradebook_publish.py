"""`abgrade gradebook publish --canvas URL --course ID --assignment ID [--roster FILE]
[--comments] [--dry-run]`: the gradebook's final scores into a Canvas assignment
(grader/batch/canvas_publish.py). The token comes from CANVAS_TOKEN, never an option (a
command line ends up in shell histories and process lists)."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from .common import EXIT_FAILED, EXIT_MACHINE, EXIT_OK, EXIT_USAGE, UsageError


def add_publish_parser(actions: argparse._SubParsersAction, common: argparse.ArgumentParser, run: Callable) -> None:
    publish = actions.add_parser(
        "publish",
        parents=[common],
        help="send the final scores to a Canvas assignment (token from CANVAS_TOKEN)",
        description="Send each student's final score to a Canvas assignment through Canvas's REST API. Only "
        "grades that differ from Canvas's are sent, so running it again sends nothing new. The access token "
        "is read from the environment variable CANVAS_TOKEN.",
    )
    publish.add_argument("--canvas", required=True, metavar="URL", help="Canvas's address, https://canvas.example.edu")
    publish.add_argument("--course", required=True, metavar="ID", help="the course id (in its address: /courses/ID)")
    publish.add_argument(
        "--assignment", required=True, metavar="ID", help="the assignment id (/courses/ID/assignments/ID)"
    )
    publish.add_argument(
        "--roster",
        type=Path,
        metavar="FILE",
        help="match students through this class list (Canvas's gradebook export, or abgrade's roster CSV); "
        "without it an abgrade id must be the student's Canvas ID, SIS user id or login",
    )
    publish.add_argument(
        "--comments",
        action="store_true",
        help="also post each student's feedback as a submission comment, with the HTML report attached "
        "(once per feedback: a rerun doesn't post it again)",
    )
    publish.add_argument("--dry-run", action="store_true", help="show what would change; send nothing")
    publish.set_defaults(run=run)


def run_publish(
    args: argparse.Namespace, open_book: Callable[[argparse.Namespace], tuple[Any, str]], operator: Callable[[], str]
) -> int:
    """`open_book` and `operator` are gradebook.py's (passed in: it imports this module)."""
    from ..batch.canvas_publish import (
        TOKEN_VARIABLE,
        CanvasSession,
        CanvasUnavailable,
        feedback_digest,
        parse_target,
        plan_lines,
        plan_publication,
        read_feedback,
    )
    from ..batch.exports import feedback_names
    from ..batch.gradebook import Publication
    from ..batch.rosters import read_any_roster, resolve
    from ..text import clean_line

    token = os.environ.get(TOKEN_VARIABLE, "").strip()
    if not token:
        raise UsageError(
            f"set {TOKEN_VARIABLE} to a Canvas access token (Canvas: Account > Settings > New Access Token); "
            "it is read from the environment only, never from an option"
        )
    target = parse_target(args.canvas, args.course, args.assignment)
    roster = read_any_roster(args.roster) if args.roster is not None else None
    book, lab = open_book(args)
    try:
        grades = book.grades(lab)
        posted = book.publications(lab, target.label)
        matched = resolve(roster, ((g.student, g.name) for g in grades))
        folder = book.path.parent / "feedback"
        texts: dict[str, str] = {}
        if args.comments:
            scored = [g.student for g in grades if g.mark.final is not None]
            texts = read_feedback(folder, scored, feedback_names)
            lacking = sorted(set(scored) - set(texts))
            if lacking:
                raise UsageError(
                    f"--comments: no feedback file in {folder} for {', '.join(clean_line(s) for s in lacking[:10])}; "
                    "run the class's `abgrade batch` again (it rewrites the feedback), then publish"
                )
        digests = {s: feedback_digest(t) for s, t in texts.items()} if args.comments else None
        try:
            canvas = CanvasSession(target, token)
            state = canvas.state()
        except CanvasUnavailable as exc:
            print(f"abgrade: {exc}", file=sys.stderr)
            return EXIT_USAGE if exc.usage else EXIT_MACHINE
        plan = plan_publication(grades, matched, state.users, state.current, digests, posted)
        maximum = max((g.mark.max_score or 0.0 for g in grades if g.report is not None), default=0.0)
        print(
            f"Canvas {target.url}, course {target.course}, assignment {target.assignment} "
            f"({clean_line(state.assignment_name)!r}, {state.points_possible or 0:g} points; lab {lab} is out of "
            f"{maximum:g})"
        )
        if state.points_possible is not None and maximum and abs(state.points_possible - maximum) > 1e-9:
            print(
                f"  note: Canvas's assignment is worth {state.points_possible:g} points and lab {lab} {maximum:g}: "
                "scores are sent as points, unscaled"
            )
        print("\n".join(plan_lines(plan, args.dry_run)))
        if args.dry_run:
            print("dry run: nothing was sent")
        else:
            by = operator()
            names = feedback_names([g.student for g in grades])
            for change in plan.changes:
                comment = None
                if change.feedback is not None:
                    html = (folder / names[change.student]).with_suffix(".html")
                    comment = (texts[change.student], html)
                try:
                    canvas.send(change, state, comment)
                except CanvasUnavailable as exc:
                    print(
                        f"abgrade: {exc}; what was sent before is recorded; run again to send the rest", file=sys.stderr
                    )
                    return EXIT_USAGE if exc.usage else EXIT_MACHINE
                at = datetime.now(timezone.utc).isoformat(timespec="seconds")
                old = None if change.old is None else f"{change.old:g}"
                book.record_publication(
                    lab,
                    [
                        Publication(
                            change.student, target.label, str(change.user.id), old, change.new, change.feedback, by, at
                        )
                    ],
                )
            sent = len(plan.grade_changes)
            print(f"sent {sent} grade(s) and {len(plan.comments)} comment(s); recorded in {book.path}")
    finally:
        book.close()
    if plan.unmatched:
        print(
            f"abgrade: {len(plan.unmatched)} graded student(s) have no Canvas student to go to (nothing sent for "
            "them):\n" + "\n".join(f"  {clean_line(line, 500)}" for line in plan.unmatched),
            file=sys.stderr,
        )
        return EXIT_FAILED
    return EXIT_OK
