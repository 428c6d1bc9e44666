"""`abgrade batch DIR --lab LAB`: grade a whole class folder in parallel, into a gradebook
and exports (grades.csv, feedback per student, class summary and class page); with
`--student ID` / `--failed-only`, grade only those students again with the class's seed;
with a late policy (`--deadline ...`, or `deadlines:` in abgrade.yaml), record each
student's lateness and penalty."""

from __future__ import annotations

import argparse
import gc
import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from ..registry import lab_names
from .common import EXIT_FAILED, EXIT_MACHINE, EXIT_OK, EXIT_USAGE, UsageError, load_lab

if TYPE_CHECKING:
    from ..batch.dask_pool import TlsFiles
    from ..batch.late import LatePolicy


def register(commands: argparse._SubParsersAction) -> None:
    batch = commands.add_parser("batch", help="grade every submission of a class folder in parallel")
    batch.add_argument(
        "folder", type=Path, metavar="DIR", help="one .py/.ipynb file per student, or one folder per student"
    )
    batch.add_argument(
        "--lab",
        required=True,
        help=f"the lab: {', '.join(lab_names())}, or a lab folder's path (game.py, reference.py, spec.yaml)",
    )
    batch.add_argument("--spec", type=Path, help="a spec file instead of the bundled specs/LAB.yaml")
    batch.add_argument("--jobs", "-j", type=int, metavar="N", help="parallel graders (default: the number of cores)")
    batch.add_argument(
        "--scheduler",
        metavar="tcp://HOST:PORT",
        help="grade on the workers of this dask.distributed scheduler instead of local processes "
        "(needs pip install 'abgrade[dask]' here and on the workers; README, Grading on a cluster); "
        "tls://HOST:PORT with --tls-ca, --tls-cert and --tls-key",
    )
    for option, name in (("--tls-ca", "the cluster's CA certificate"), ("--tls-cert", "this machine's certificate"),
                         ("--tls-key", "this machine's private key (mode 0600)")):  # fmt: skip
        batch.add_argument(
            option, type=Path, metavar="FILE", help=f"with --scheduler tls://...: {name} (abgrade cluster certs DIR)"
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
        help="seed of the random cases (default: the last run's, so a rerun continues it; for the first run "
        "and with --regrade: `seed:` of abgrade.yaml, else a fresh one, kept in the gradebook)",
    )
    batch.add_argument(
        "--regrade",
        action="store_true",
        help="grade every submission again, even unchanged ones (not with the last run's seed)",
    )
    batch.add_argument("--show-hidden", action="store_true", help="feedback files show hidden tests' details too")
    again = batch.add_argument_group("grading some students again (with the seed of the class's last run)")
    again.add_argument(
        "--student",
        action="append",
        default=[],
        metavar="ID",
        help="grade this student again, even if unchanged (repeatable); the id as in grades.csv",
    )
    again.add_argument(
        "--failed-only",
        action="store_true",
        help="grade again only the students below full marks or not graded",
    )
    late = batch.add_argument_group(
        "late penalties (default: the lab's entry under `deadlines:` in the nearest abgrade.yaml)"
    )
    late.add_argument(
        "--deadline",
        metavar="TIME",
        help="due date, ISO 8601, e.g. 2026-03-01T23:59:00+01:00 (no offset: UTC)",
    )
    late.add_argument("--grace", metavar="DURATION", help="still on time this long after the deadline: 15m, 2h, 1d")
    late.add_argument("--late-per-day", metavar="PERCENT", help="percent of the maximum off per started day late")
    late.add_argument(
        "--late-table", metavar="DAYS:PERCENT,...", help="percent off for up to DAYS days late, e.g. 1:10,2:25,7:50"
    )
    late.add_argument("--late-cap", metavar="PERCENT", help="at most this percent off (default 100)")
    late.add_argument(
        "--timestamps",
        type=Path,
        metavar="FILE",
        help="the LMS's submission times: a CSV with columns student,submitted_at (ISO 8601)",
    )
    late.add_argument(
        "--times-from",
        choices=("mtime",),
        help="where no timestamps file or LMS file name gives a student's time, take the file's modification "
        "time (right only if unzipping kept the LMS's times; never after a plain cp); without it such a "
        "student's time is unknown and not penalised",
    )
    late.add_argument(
        "--config", type=Path, metavar="FILE", help="abgrade.yaml with `deadlines:` and `seed:` (default: the nearest)"
    )
    batch.set_defaults(run=run)


def late_policy(args: argparse.Namespace, lab_name: str | None = None) -> LatePolicy | None:
    """The late policy from the options, else from abgrade.yaml (`deadlines.LAB`, by the
    lab's name: `lab_name` for a lab folder), else None; with `--times-from` (for either).
    Mistakes are one line naming the option, or the config file, line and field."""
    from dataclasses import replace

    policy = _stated_policy(args, lab_name)
    if args.times_from is not None:
        if policy is None:
            raise UsageError("--times-from needs a late policy: --deadline, or `deadlines:` in abgrade.yaml")
        policy = replace(policy, times_from=args.times_from)
    return policy


def _stated_policy(args: argparse.Namespace, lab_name: str | None = None) -> LatePolicy | None:
    from ..batch.late import PolicyError, parse_policy
    from ..course.config import ConfigError, deadline_fields, find_config
    from ..spec.yaml_lines import line_of

    given = {
        "due": args.deadline,
        "grace": args.grace,
        "per_day": args.late_per_day,
        "table": args.late_table,
        "cap": args.late_cap,
    }
    options = {"due": "--deadline", "per_day": "--late-per-day", "table": "--late-table", "cap": "--late-cap"}
    if args.deadline is not None:
        try:
            return parse_policy({k: v for k, v in given.items() if v is not None})
        except PolicyError as exc:
            option = options.get(exc.field.split(".")[0], "--grace")
            raise UsageError(f"{option}: {exc.problem}") from None
    if any(v is not None for v in given.values()):
        raise UsageError("--grace, --late-per-day, --late-table and --late-cap need --deadline")
    config = args.config or find_config(Path.cwd())
    if config is None:
        return None
    if not config.is_file():
        raise UsageError(f"{config}: no such config file")
    lab = lab_name or args.lab
    fields = deadline_fields(config, lab)
    if fields is None:
        return None
    try:
        return parse_policy(fields)
    except PolicyError as exc:
        key = exc.field.split(".")[0]
        raise ConfigError(
            str(config), line_of(fields, key) or line_of(fields), f"deadlines.{lab}.{exc.field}", exc.problem
        ) from None


def _tls_files(args: argparse.Namespace) -> TlsFiles | None:
    """--tls-ca, --tls-cert and --tls-key, all three or none."""
    from ..batch.dask_pool import TlsFiles

    given = (args.tls_ca, args.tls_cert, args.tls_key)
    if all(path is None for path in given):
        return None
    if any(path is None for path in given):
        raise UsageError("--tls-ca, --tls-cert and --tls-key go together (abgrade cluster certs DIR makes all three)")
    return TlsFiles(args.tls_ca, args.tls_cert, args.tls_key)


def _nothing_to_grade(folder: Path) -> int:
    """An empty class folder (an unzip that went elsewhere) is a failure, said before anything
    is written: never a run of 0 students that exits 0."""
    print(
        f"abgrade: {folder} holds no submissions (no .py or .ipynb file, no folder per student); "
        "nothing was graded: is it the right folder, and was the LMS's zip unpacked into it?",
        file=sys.stderr,
    )
    return EXIT_FAILED


def run(args: argparse.Namespace) -> int:
    from ..batch.discovery import compile_id_pattern, has_entries
    from ..batch.download_names import detect_layout
    from ..batch.late import read_timestamps
    from ..batch.pool import default_workers
    from ..batch.runner import BatchOptions, default_out, run_batch
    from ..batch.summary import summary_text
    from ..course.config import nearest_config_seed
    from ..spec_check import verify_once

    if not args.folder.is_dir():
        raise UsageError(f"{args.folder}: not a folder of submissions")
    if args.jobs is not None and args.jobs < 1:
        raise UsageError("--jobs must be at least 1")
    if args.regrade and (args.student or args.failed_only):
        raise UsageError(
            "--regrade grades everyone with a fresh seed; --student and --failed-only regrade with the class's "
            "seed: give one or the other"
        )
    if not args.scheduler and any(p is not None for p in (args.tls_ca, args.tls_cert, args.tls_key)):
        raise UsageError("--tls-ca, --tls-cert and --tls-key go with --scheduler tls://HOST:PORT")
    if args.jobs is not None and args.scheduler:
        raise UsageError("--jobs is for local graders; with --scheduler the cluster's workers grade (one each)")
    try:
        pattern = compile_id_pattern(args.id_pattern)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    lab, spec = load_lab(args.lab, args.spec)  # a broken lab or spec is said first (exit code 2)
    empty = not has_entries(args.folder)  # said after every option is checked (exit 2 comes first)
    if pattern is None and not empty:
        layout = detect_layout(args.folder)
        if layout is not None:
            pattern = layout.compiled()
            print(
                f"abgrade batch: {layout.lms} download names recognised: the student id is {layout.id_means} "
                f"(--id-pattern {shlex.quote(layout.pattern)}; give your own --id-pattern to change it)",
                file=sys.stderr,
            )
    if not empty:
        verify_once(lab, spec)  # a wrong stored expectation stops here, before any student is graded
    policy = late_policy(args, lab.name)
    if args.timestamps is not None and policy is None:
        raise UsageError("--timestamps needs a late policy: --deadline, or `deadlines:` in abgrade.yaml")
    timestamps = read_timestamps(args.timestamps) if args.timestamps is not None else None
    configured_seed = None if args.seed is not None else nearest_config_seed(args.config, Path.cwd())
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
        students=tuple(args.student),
        failed_only=args.failed_only,
        late=policy,
        timestamps=timestamps,
        configured_seed=configured_seed,
    )
    if args.scheduler:
        from ..batch.dask_pool import DaskUnavailable, connect

        try:
            cluster = connect(args.scheduler, tls=_tls_files(args))
        except DaskUnavailable as exc:
            print(f"abgrade: {exc}", file=sys.stderr)
            return EXIT_MACHINE if exc.machine else EXIT_USAGE
        # dask's modules (some 60,000 objects) live until this process exits: moved out of
        # the cyclic collector's way, no collection during the run or at the exit walks them
        # again (about 0.15-0.25 s of CPU per run at load 30; bench_batch.py's CPU line)
        gc.freeze()
        with cluster:
            if empty:
                return _nothing_to_grade(args.folder)
            try:
                result = run_batch(options, lab, spec, sys.stderr, executor=cluster)
            except (OSError, TimeoutError) as exc:  # the scheduler went away mid-run
                print(
                    f"abgrade: lost the dask scheduler at {args.scheduler} ({type(exc).__name__}: {exc}); "
                    "every finished submission is in the gradebook; the same command grades the rest",
                    file=sys.stderr,
                )
                return EXIT_MACHINE
    elif empty:
        return _nothing_to_grade(args.folder)
    else:
        result = run_batch(options, lab, spec, sys.stderr)
    print(summary_text(result.summary, lab.hints(spec), result.insights))  # the course's words
    if result.problems:
        print("\n  not graded (fix the folder and run again):")
        print("\n".join(f"    {problem}" for problem in result.problems))
    print(
        f"\n{result.graded_now} graded now, {result.found - result.graded_now} up to date; seed {result.seed} "
        f"({result.seed_source}); run {result.run_id}"
    )
    if result.ignored:
        print(
            f"\n  ignored {len(result.ignored)} entr{'y' if len(result.ignored) == 1 else 'ies'} that are not "
            "submissions (listed above)"
        )
    summary = result.summary
    print(
        f"wrote {out}/grades.csv, feedback/ ({len(summary.scores) + len(summary.errors) + len(summary.failed)} "
        f"students), summary.txt, summary.svg, class.html; gradebook {out}/gradebook.sqlite"
    )
    return EXIT_FAILED if result.problems or summary.errors or summary.failed else EXIT_OK
