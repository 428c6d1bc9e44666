"""`abgrade check [LAB=PATH | LAB ...]`: the visible checks of a course or student
repository's labs (listed in abgrade.yaml or given as arguments), for a student or CI."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from pathlib import Path

from .common import EXIT_FAILED, EXIT_OK, UsageError, check_submission_path

WORKFLOW_TEMPLATE = "abgrade-check.yml"
WORKFLOW_PATH = Path(".github") / "workflows" / WORKFLOW_TEMPLATE


def register(commands: argparse._SubParsersAction) -> None:
    check = commands.add_parser(
        "check",
        help="run the visible checks of a course repository's labs (abgrade.yaml or LAB=PATH)",
        description="Run the visible cases of each lab (hidden ones never run here) and print what failed. "
        "Without arguments every lab of the nearest abgrade.yaml is checked.",
    )
    check.add_argument(
        "labs",
        nargs="*",
        metavar="LAB=PATH | LAB",
        help="a lab and its submission file, or a lab named in abgrade.yaml",
    )
    check.add_argument("--config", type=Path, help="the config file (default: the nearest abgrade.yaml)")
    check.add_argument("--junit", type=Path, metavar="FILE", help="also write JUnit XML here (for CI)")
    check.add_argument(
        "--seed",
        type=int,
        help="seed of the random cases, where a spec makes them visible (default: abgrade.yaml's `seed:`, "
        "else the spec's own)",
    )
    check.add_argument(
        "--init-ci", action="store_true", help=f"write the GitHub Actions workflow to {WORKFLOW_PATH} and stop"
    )
    check.add_argument("--force", action="store_true", help="with --init-ci: overwrite an existing workflow")
    check.add_argument(
        "--package",
        metavar="SPEC",
        help="with --init-ci: the student wheel committed to the repository, which the workflow's pip installs "
        "(abgrade student-wheel -o ci; default: the one in ./ci/)",
    )
    check.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    if args.init_ci:
        if args.labs or args.junit:
            raise UsageError("--init-ci writes the workflow and stops: give no labs and no --junit with it")
        return _init_ci(args.force, args.package)
    if args.package:
        raise UsageError("--package goes with --init-ci")
    if args.force:
        raise UsageError("--force goes with --init-ci (it overwrites the workflow)")
    from ..course.config import nearest_config_seed, select_labs
    from ..course.junit import write_junit
    from ..course.visible import check_lab
    from ..report.terminal import summary

    entries = [
        replace(entry, submission=_near(entry.submission)) for entry in select_labs(args.labs, args.config, Path.cwd())
    ]
    for entry in entries:  # every path first: a typo stops the check before anything runs
        check_submission_path(entry.submission)
    configured = None if args.seed is not None else nearest_config_seed(args.config, Path.cwd())
    reports = []
    for entry in entries:
        report = check_lab(entry, args.seed, configured)
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


PACKAGE_LINE = 'ABGRADE_PACKAGE: "SET-ME: abgrade check --init-ci --package SPEC"'
STUDENT_WHEELS = "ci/abgrade-*+student-py3-none-any.whl"  # where --init-ci looks without --package
PACKAGE_FIX = (
    "build the student wheel in a checkout of abgrade (abgrade student-wheel -o ci), commit it to this "
    "repository and give its path, e.g. ./ci/abgrade-1.0.0+student-py3-none-any.whl"
)


def package_problem(spec: str) -> str | None:
    """Why `spec` is not the student wheel in this repository, or None. A bare name or a
    version of it comes from the package index, where `abgrade` is not ours; a git URL, a
    source archive or the full wheel install the reference solutions and every hidden case
    where any student reads them; a wheel at a URL can't be checked."""
    from ..course.student_build import student_wheel_problem

    if not spec.strip() or any(c in spec for c in "\"'\n\r$`\\"):
        return "not a pip requirement (no quotes, newlines, $ or backslashes)"
    location = spec.split(" @ ", 1)[-1].strip()
    if "git+" in location or location.endswith((".tar.gz", ".zip")):
        return (
            "the full abgrade, with the reference solutions and every hidden case, which any student could read "
            "in their own CI job"
        )
    if not location.endswith(".whl"):
        return "a name on the package index, which is not a source your course controls (anyone may register it)"
    if "://" in location:
        return "a wheel at a URL, which can't be checked to be the student wheel; commit it and give its path"
    path = Path(location)
    if not path.is_file():
        return "no such file here (run --init-ci at the repository's root)"
    return student_wheel_problem(path)


def default_package() -> str | None:
    """The one student wheel in ./ci/, as the workflow names it, or None."""
    found = sorted(Path.cwd().glob(STUDENT_WHEELS))
    if len(found) > 1:
        raise UsageError(f"several student wheels in ci/ ({', '.join(p.name for p in found)}); give one with --package")
    return f"./{found[0].relative_to(Path.cwd())}" if found else None


def _init_ci(force: bool, package: str | None) -> int:
    from ..course.template_files import template_text

    if package is not None and (problem := package_problem(package)):
        raise UsageError(f"--package {package}: {problem}; {PACKAGE_FIX}")
    if WORKFLOW_PATH.exists() and not force:
        raise UsageError(f"{WORKFLOW_PATH} already exists; use --force to overwrite it")
    if package is None and (package := default_package()) is not None and (problem := package_problem(package)):
        raise UsageError(f"{package}: {problem}; {PACKAGE_FIX}")
    text = template_text(WORKFLOW_TEMPLATE)
    assert PACKAGE_LINE in text
    if package is not None:
        text = text.replace(PACKAGE_LINE, f"ABGRADE_PACKAGE: {json.dumps(package)}")  # JSON strings are YAML
    WORKFLOW_PATH.parent.mkdir(parents=True, exist_ok=True)
    WORKFLOW_PATH.write_text(text)
    if package is None:
        print(
            f"wrote {WORKFLOW_PATH}; it fails until you set ABGRADE_PACKAGE in it (or run again with "
            f"--package WHEEL --force): {PACKAGE_FIX}. List the labs in abgrade.yaml."
        )
    else:
        print(f"wrote {WORKFLOW_PATH}: it installs the student wheel {package}; list the labs in abgrade.yaml")
    return EXIT_OK
