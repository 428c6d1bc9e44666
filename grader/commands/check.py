"""`abgrade check [LAB=PATH | LAB ...]`: the visible checks of a course or student
repository's labs (listed in abgrade.yaml or given as arguments), for a student or CI."""
from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path

from .common import EXIT_FAILED, EXIT_OK, UsageError, check_submission_path

WORKFLOW_TEMPLATE = "abgrade-check.yml"
WORKFLOW_PATH = Path(".github") / "workflows" / WORKFLOW_TEMPLATE


def register(commands: argparse._SubParsersAction) -> None:
    check = commands.add_parser(
        "check", help="run the visible checks of a course repository's labs (abgrade.yaml or LAB=PATH)",
        description="Run the visible cases of each lab (hidden ones never run here) and print what failed. "
                    "Without arguments every lab of the nearest abgrade.yaml is checked.")
    check.add_argument("labs", nargs="*", metavar="LAB=PATH | LAB",
                       help="a lab and its submission file, or a lab named in abgrade.yaml")
    check.add_argument("--config", type=Path, help="the config file (default: the nearest abgrade.yaml)")
    check.add_argument("--junit", type=Path, metavar="FILE", help="also write JUnit XML here (for CI)")
    check.add_argument("--init-ci", action="store_true",
                       help=f"write the GitHub Actions workflow to {WORKFLOW_PATH} and stop")
    check.add_argument("--force", action="store_true", help="with --init-ci: overwrite an existing workflow")
    check.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    if args.init_ci:
        return _init_ci(args.force)
    from ..course.config import select_labs
    from ..course.junit import write_junit
    from ..course.visible import check_lab
    from ..report.terminal import summary

    entries = [replace(entry, submission=_near(entry.submission))
               for entry in select_labs(args.labs, args.config, Path.cwd())]
    for entry in entries:  # every path first: a typo stops the check before anything runs
        check_submission_path(entry.submission)
    reports = []
    for entry in entries:
        report = check_lab(entry)
        reports.append(report)
        print(summary(report, color=sys.stdout.isatty()))
        print()
    if args.junit:
        write_junit(reports, args.junit)
    failed = [r for r in reports if r.visible_failures]
    if failed:
        names = ", ".join(f"{r.lab} ({len(r.visible_failures)} of {len(r.tests)} failed)" for r in failed)
        print(f"abgrade check: FAILED: {names}")
        return EXIT_FAILED
    print(f"abgrade check: every visible check passes ({len(reports)} lab{'s' if len(reports) != 1 else ''})")
    return EXIT_OK


def _near(path: Path) -> Path:
    """`path` relative to the working folder when inside it: shorter in the summary and logs."""
    try:
        return path.relative_to(Path.cwd())
    except ValueError:
        return path


def _init_ci(force: bool) -> int:
    from ..course.template_files import template_text

    if WORKFLOW_PATH.exists() and not force:
        raise UsageError(f"{WORKFLOW_PATH} already exists; use --force to overwrite it")
    WORKFLOW_PATH.parent.mkdir(parents=True, exist_ok=True)
    WORKFLOW_PATH.write_text(template_text(WORKFLOW_TEMPLATE))
    print(f"wrote {WORKFLOW_PATH}: set ABGRADE_PACKAGE in it to where pip gets abgrade, "
          f"and list the labs in abgrade.yaml")
    return EXIT_OK
