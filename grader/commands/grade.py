"""`abgrade grade SUBMISSION --lab LAB`: grade one `.py` or `.ipynb` submission."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from ..registry import lab_names
from .common import EXIT_FAILED, EXIT_OK, check_output_file, check_submission_path, load_lab, private_dirs

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from ..results import GradeReport
    from ..sandbox.session import Session


def register(commands: argparse._SubParsersAction) -> None:
    grade = commands.add_parser("grade", help="grade one submission (.py or .ipynb)")
    grade.add_argument("submission", type=Path)
    grade.add_argument(
        "--lab",
        required=True,
        help=f"the lab: {', '.join(lab_names())}, or a lab folder's path (game.py, reference.py, spec.yaml)",
    )
    grade.add_argument("--spec", type=Path, help="a spec file instead of the bundled specs/LAB.yaml")
    grade.add_argument("--json", type=Path, metavar="OUT", help="write Gradescope's results.json here")
    grade.add_argument(
        "--html", type=Path, metavar="OUT", help="write a self-contained HTML report here (pictures of each case)"
    )
    grade.add_argument(
        "--seed",
        type=int,
        help="seed of the random cases (default: `seed:` of the nearest abgrade.yaml, else the spec's own: "
        "the same cases on every run)",
    )
    grade.add_argument("--config", type=Path, metavar="FILE", help="abgrade.yaml with `seed:` (default: the nearest)")
    grade.add_argument("--show-hidden", action="store_true", help="show the details of hidden tests too")
    amount = grade.add_mutually_exclusive_group()  # both at once: exit code 2
    amount.add_argument("--quiet", "-q", action="store_true", help="print only the score line")
    amount.add_argument(
        "--verbose", "-v", action="store_true", help="show every failure in full (default: <= 40 lines)"
    )
    grade.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from . import grade_early

    # the student's worker first: its start-up overlaps loading the lab and the spec (walled
    # off from a lab folder's files, known from the path alone); `main` may have spawned it
    # already, before the CLI's own imports (grade_early.py)
    early = grade_early.take(args.submission, args.lab)
    try:
        check_submission_path(args.submission)
        check_output_file(args.json, "--json")
        check_output_file(args.html, "--html")
        if early is None and args.submission.suffix == ".py" and args.submission.is_file():
            from ..sandbox.opening import open_session

            early = open_session(args.submission, private_dirs(args.lab))
        if early is not None:
            early.cleanup_in_background = True  # the folder and the uid go while the report prints
        report, hints = _graded(args, early)
        _print_report(args, report, hints)
    finally:
        if early is not None:
            early.close()  # a no-op once grading closed it; else (a broken spec) it ends here
            early.wait_closed()  # no uid, folder or process of the student outlives the command
    return EXIT_FAILED if report.visible_failures else EXIT_OK


def _graded(args: argparse.Namespace, early: Session | None) -> tuple[GradeReport, Callable[[], Mapping[str, str]]]:
    """The report of the submission, and the classic bugs' hints in the words of the spec's
    course (asked for only by a report that names one); `early` (closed by the grading) is
    the caller's to close if a usage or spec error stops it first."""
    from ..grading import grade_submission
    from ..seeding import chosen_seed
    from ..spec_check import verify_once
    from .grade_early import opened_lab

    lab, spec = load_lab(args.lab, args.spec, opened_lab(args.lab))
    verify_once(lab, spec)  # a wrong stored expectation stops here (remembered once it passed)
    configured = None if args.seed is not None else _config_seed(args.config)
    seed = chosen_seed(args.seed, configured, spec)
    return grade_submission(args.submission, lab, spec, seed=seed, session=early), lambda: lab.hints(spec)


def _print_report(args: argparse.Namespace, report: GradeReport, hints: Callable[[], Mapping[str, str]]) -> None:
    # each report's module only when it is asked for (their imports cost a grade's start-up)
    if args.json:
        from ..report.gradescope import write_results_json

        write_results_json(report, args.json)
    if args.html:
        from ..report.html import write_html

        named = any(test.diagnoses for test in report.tests)  # a passing grade imports no classic bug
        write_html(report, args.html, show_hidden=args.show_hidden, hints=hints() if named else {})
    if args.quiet:
        print(f"{report.score:g}/{report.max_score:g}")
    else:
        from ..report.terminal import summary

        print(summary(report, show_hidden=args.show_hidden, color=sys.stdout.isatty(), verbose=args.verbose))


def _config_seed(config: Path | None) -> int | None:
    """`seed:` of the course config (`--config`, else the nearest abgrade.yaml); None when
    there is none. The config's reader (YAML, the labs' names) is imported only then."""
    from ..course.config_file import find_config

    path = config or find_config(Path.cwd())
    if path is None:
        return None
    from ..course.config import nearest_config_seed

    return nearest_config_seed(path, Path.cwd())
