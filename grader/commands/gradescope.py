"""`abgrade gradescope build --lab LAB -o autograder.zip`: a Gradescope autograder bundle;
`abgrade gradescope run`: what the bundle's run_autograder calls on Gradescope."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..registry import lab_names
from .common import EXIT_FAILED, EXIT_OK, UsageError


def register(commands: argparse._SubParsersAction) -> None:
    gradescope = commands.add_parser("gradescope", help="build or run a Gradescope autograder")
    actions = gradescope.add_subparsers(metavar="ACTION")
    build = actions.add_parser(
        "build",
        help="write the autograder zip to upload to Gradescope",
        description="Bundle setup.sh, run_autograder and abgrade's wheel (built from "
        "this checkout, offline) for one lab.",
    )
    build.add_argument(
        "--lab", required=True, help=f"the lab: {', '.join(lab_names())}, or a lab folder's path (bundled with it)"
    )
    build.add_argument(
        "-o",
        "--output",
        type=Path,
        default=Path("autograder.zip"),
        help="where to write the zip (default: autograder.zip)",
    )
    build.add_argument("--spec", type=Path, help="bundle this spec instead of the one inside abgrade")
    build.add_argument("--wheel", type=Path, help="bundle this abgrade wheel instead of building one")
    build.add_argument(
        "--seed",
        type=int,
        help="seed of the random cases for every run of this bundle (default: a fresh one, drawn once now "
        "and kept in the bundle, where students can't read it)",
    )
    build.add_argument("--force", action="store_true", help="overwrite an existing output file")
    build.set_defaults(run=run_build)
    run = actions.add_parser("run", help="grade ROOT/submission into ROOT/results/results.json (Gradescope)")
    run.add_argument(
        "--root", type=Path, help="the autograder folder (default: $ABGRADE_AUTOGRADER_ROOT, else /autograder)"
    )
    run.add_argument("--lab", help="the lab (default: the bundle's settings)")
    run.add_argument("--spec", type=Path, help="the spec (default: the bundle's settings)")
    run.add_argument("--seed", type=int, help="seed of the random cases (default: the bundle's)")
    run.set_defaults(run=run_run)


def run_build(args: argparse.Namespace) -> int:
    from ..course.gradescope_bundle import BundleError, build_bundle
    from ..seeding import seed_problem

    if args.output.exists() and not args.force:
        raise UsageError(f"{args.output} already exists; choose another path with -o, or --force")
    if args.wheel and not (args.wheel.is_file() and args.wheel.suffix == ".whl"):
        raise UsageError(f"{args.wheel}: not a wheel file")
    if args.seed is not None and (problem := seed_problem(args.seed)):
        raise UsageError(f"--seed: {problem}")
    try:
        build_bundle(args.lab, args.output, args.spec, args.wheel, args.seed)
    except BundleError as exc:
        print(f"abgrade: {exc}", file=sys.stderr)
        return EXIT_FAILED
    print(
        f"wrote {args.output}: upload it as the autograder of the {args.lab} assignment (its random cases come "
        "from a seed kept in the bundle: every run of it draws the same ones; keep the file from students)"
    )
    return EXIT_OK


def run_run(args: argparse.Namespace) -> int:
    from ..course.autograder import autograder_root, run_autograder

    root = autograder_root(args.root)
    results = run_autograder(root, args.lab, args.spec, args.seed)
    extra = results.get("extra_data", {})
    # run_autograder's stdout: Gradescope shows it to instructors only (the notes students don't need)
    print(f"abgrade: {results['score']:g}/{extra.get('max_score', 0):g} written to {root / 'results' / 'results.json'}")
    for note in extra.get("instructor_notes", []):
        print(f"  note: {note}")
    return EXIT_OK
