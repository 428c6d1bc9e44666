"""`abgrade batch DIR --lab LAB`: grade a whole class folder in parallel, into a gradebook
and exports (grades.csv, feedback per student, class summary)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..registry import lab_names
from .common import EXIT_FAILED, EXIT_MACHINE, EXIT_OK, EXIT_USAGE, UsageError, load_lab


def register(commands: argparse._SubParsersAction) -> None:
    batch = commands.add_parser("batch", help="grade every submission of a class folder in parallel")
    batch.add_argument(
        "folder", type=Path, metavar="DIR", help="one .py/.ipynb file per student, or one folder per student"
    )
    batch.add_argument("--lab", required=True, help=f"the lab: {', '.join(lab_names())}")
    batch.add_argument("--spec", type=Path, help="a spec file instead of the bundled specs/LAB.yaml")
    batch.add_argument("--jobs", "-j", type=int, metavar="N", help="parallel graders (default: the number of cores)")
    batch.add_argument(
        "--scheduler",
        metavar="tcp://HOST:PORT",
        help="grade on the workers of this dask.distributed scheduler instead of local processes "
        "(needs pip install 'abgrade[dask]' here and on the workers; README, Grading on a cluster)",
    )
    batch.add_argument(
        "--out", type=Path, metavar="OUT", help="gradebook and exports (default: DIR-abgrade next to DIR)"
    )
    batch.add_argument(
        "--id-pattern",
        metavar="REGEX",
        help="student id = the named group `id` of REGEX searched in each file or folder name "
        "(default: the name without its suffix), e.g. '_(?P<id>\\d+)_'",
    )
    batch.add_argument(
        "--seed",
        type=int,
        help="seed of the random cases (default: the last run's, so a rerun continues it; "
        "fresh for the first run and with --regrade)",
    )
    batch.add_argument("--regrade", action="store_true", help="grade every submission again, even unchanged ones")
    batch.add_argument("--show-hidden", action="store_true", help="feedback files show hidden tests' details too")
    batch.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from ..batch.discovery import compile_id_pattern
    from ..batch.pool import default_workers
    from ..batch.runner import BatchOptions, default_out, run_batch
    from ..batch.summary import summary_text

    if not args.folder.is_dir():
        raise UsageError(f"{args.folder}: not a folder of submissions")
    if args.jobs is not None and args.jobs < 1:
        raise UsageError("--jobs must be at least 1")
    if args.jobs is not None and args.scheduler:
        raise UsageError("--jobs is for local graders; with --scheduler the cluster's workers grade (one each)")
    try:
        pattern = compile_id_pattern(args.id_pattern)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    lab, spec = load_lab(args.lab, args.spec)
    out = args.out or default_out(args.folder)
    options = BatchOptions(
        folder=args.folder,
        out=out,
        jobs=args.jobs or default_workers(),
        id_pattern=pattern,
        seed=args.seed,
        regrade=args.regrade,
        show_hidden=args.show_hidden,
        command=("abgrade", *getattr(args, "argv", ("batch",))),
    )
    if args.scheduler:
        from ..batch.dask_pool import DaskUnavailable, connect

        try:
            cluster = connect(args.scheduler)
        except DaskUnavailable as exc:
            print(f"abgrade: {exc}", file=sys.stderr)
            return EXIT_MACHINE if exc.machine else EXIT_USAGE
        with cluster:
            try:
                result = run_batch(options, lab, spec, sys.stderr, executor=cluster)
            except (OSError, TimeoutError) as exc:  # the scheduler went away mid-run
                print(
                    f"abgrade: lost the dask scheduler at {args.scheduler} ({type(exc).__name__}: {exc}); "
                    "every finished submission is in the gradebook; the same command grades the rest",
                    file=sys.stderr,
                )
                return EXIT_MACHINE
    else:
        result = run_batch(options, lab, spec, sys.stderr)
    print(summary_text(result.summary, lab.bug_hints))
    if result.problems:
        print("\n  not graded (fix the folder and run again):")
        print("\n".join(f"    {problem}" for problem in result.problems))
    print(
        f"\n{result.graded_now} graded now, {result.found - result.graded_now} up to date; seed {result.seed}; "
        f"run {result.run_id}"
    )
    if result.ignored:
        print(
            f"\n  ignored {len(result.ignored)} entr{'y' if len(result.ignored) == 1 else 'ies'} that are not "
            "submissions (listed above)"
        )
    summary = result.summary
    print(
        f"wrote {out}/grades.csv, feedback/ ({len(summary.scores) + len(summary.errors) + len(summary.failed)} "
        f"students), summary.txt, summary.svg; gradebook {out}/gradebook.sqlite"
    )
    return EXIT_FAILED if result.problems or summary.errors or summary.failed else EXIT_OK
