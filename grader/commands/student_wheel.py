"""`abgrade student-wheel -o DIR`: build the package students and student repositories
install (course/student_wheel.py): `check` and `exercise`, the skeletons and the visible
cases' stored expectations, and no answer."""

from __future__ import annotations

import argparse
from pathlib import Path

from .common import EXIT_OK, UsageError


def register(commands: argparse._SubParsersAction) -> None:
    wheel = commands.add_parser(
        "student-wheel",
        help="build the wheel students and their repositories' CI install (check and exercise, no answers)",
        description="Build abgrade's student wheel into DIR: the check and exercise commands, the skeletons and "
        "the visible cases' stored expectations; no reference solutions, no hidden or random cases. Needs a "
        "checkout of abgrade (it builds from the sources).",
    )
    wheel.add_argument("-o", "--output", type=Path, required=True, metavar="DIR", help="the folder to write it to")
    wheel.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from ..course.gradescope_bundle import BundleError
    from ..course.student_wheel import StudentBuildError, build_student_wheel
    from ..paths import IS_CHECKOUT, PROJECT_DIR

    if args.output.exists() and not args.output.is_dir():
        raise UsageError(f"-o {args.output}: not a folder")
    try:
        wheel = build_student_wheel(args.output, PROJECT_DIR if IS_CHECKOUT else None)
    except (BundleError, StudentBuildError) as exc:
        raise UsageError(str(exc).replace("pass --wheel FILE, or run", "run")) from None
    print(
        f"wrote {wheel}: check and exercise, the skeletons and the visible cases; no reference solutions, "
        "no hidden or random cases (README, What students install). Commit it to the course repository and run "
        f"abgrade check --init-ci --package {wheel.name if wheel.parent == Path('.') else wheel}"
    )
    return EXIT_OK
