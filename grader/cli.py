"""The `abgrade` command (also `python -m grader`).

Exit codes: 0 when every visible test passes, 1 when one fails, 2 on a usage or spec error.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .spec import SpecError

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


class UsageError(Exception):
    """A command-line mistake: printed as one line, exit code 2."""


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if not getattr(args, "run", None):
        parser.print_help()
        return EXIT_USAGE
    try:
        return args.run(args)
    except (SpecError, UsageError) as exc:
        print(f"abgrade: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("abgrade: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `abgrade grade ... | head`: the reader left, nothing to report
        sys.stderr.close()
        return EXIT_OK


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="abgrade", description="Grade alpha-beta pruning labs exactly.")
    commands = parser.add_subparsers(metavar="COMMAND")

    grade = commands.add_parser("grade", help="grade one submission (.py)")
    grade.add_argument("submission", type=Path)
    grade.add_argument("--lab", required=True, help="the lab: tree, ...")
    grade.add_argument("--spec", type=Path, help="a spec file instead of the bundled specs/LAB.yaml")
    grade.add_argument("--json", type=Path, metavar="OUT", help="write Gradescope's results.json here")
    grade.add_argument("--seed", type=int, help="seed of the random cases (default: fresh each run)")
    grade.add_argument("--show-hidden", action="store_true", help="show the details of hidden tests too")
    grade.add_argument("--quiet", action="store_true", help="print only the score line")
    grade.set_defaults(run=_grade)

    demo = commands.add_parser("demo", help="grade the bundled example submissions")
    demo.set_defaults(run=_demo)

    specs = commands.add_parser("specs", help="work with lab specs")
    spec_commands = specs.add_subparsers(metavar="ACTION")
    verify = spec_commands.add_parser("verify", help="recompute every stored expectation with the reference")
    verify.add_argument("labs", nargs="*", help="labs to verify (default: all)")
    verify.add_argument("--spec", type=Path, help="verify this spec file (its `lab` names the adapter)")
    verify.set_defaults(run=_verify)

    exercise = commands.add_parser("exercise", help="write a student's starting copy of a lab")
    exercise.add_argument("lab")
    exercise.add_argument("-o", "--output", type=Path, help="where to write it (default: ./LAB_lab.py)")
    exercise.add_argument("--force", action="store_true", help="overwrite an existing file")
    exercise.add_argument("--notebook", action="store_true", help="write the Jupyter notebook instead of the .py")
    exercise.set_defaults(run=_exercise)
    return parser


def _load(lab_name: str, spec_file: Path | None):
    from .labs import get_lab
    from .spec import load_spec, spec_path

    try:
        lab = get_lab(lab_name)
    except KeyError as exc:
        raise UsageError(exc.args[0]) from None
    spec = load_spec(spec_file or spec_path(lab_name))
    if spec.lab != lab_name:
        raise SpecError(spec.path, spec.raw.lines.get("lab"), "lab", f"this spec is for lab {spec.lab!r}, not {lab_name!r}")
    return lab, spec


def _grade(args: argparse.Namespace) -> int:
    from .grading import grade_submission
    from .report.gradescope import write_results_json
    from .report.terminal import summary

    lab, spec = _load(args.lab, args.spec)
    report = grade_submission(args.submission, lab, spec, seed=args.seed)
    if args.json:
        write_results_json(report, args.json)
    if args.quiet:
        print(f"{report.score:g}/{report.max_score:g}")
    else:
        print(summary(report, show_hidden=args.show_hidden, color=sys.stdout.isatty()))
    return EXIT_FAILED if report.visible_failures else EXIT_OK


def _demo(args: argparse.Namespace) -> int:
    from .demo import run_demo

    return run_demo()


def _verify(args: argparse.Namespace) -> int:
    from .labs import get_lab, lab_names
    from .spec import load_spec, spec_path

    if args.spec:
        spec = load_spec(args.spec)
        targets = [(spec.lab, spec)]
    else:
        names = args.labs or [n for n in lab_names() if spec_path(n).exists()]
        targets = [(n, load_spec(spec_path(n))) for n in names]
    failed = False
    for name, spec in targets:
        try:
            lab = get_lab(name)
        except KeyError as exc:
            raise UsageError(exc.args[0]) from None
        problems = lab.verify(spec)
        for problem in problems:
            print(problem)
        print(f"{spec.path}: {'FAILED' if problems else 'ok'} ({len(spec.cases)} fixed cases)")
        failed = failed or bool(problems)
    return EXIT_FAILED if failed else EXIT_OK


def _exercise(args: argparse.Namespace) -> int:
    from .exercises import exercise_notebook_text, exercise_text

    try:
        text = exercise_notebook_text(args.lab) if args.notebook else exercise_text(args.lab)
    except KeyError as exc:
        raise UsageError(exc.args[0]) from None
    target = args.output or Path(f"{args.lab}_lab.{'ipynb' if args.notebook else 'py'}")
    if target.exists() and not args.force:
        raise UsageError(f"{target} already exists; choose another path with -o")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text)
    print(f"wrote {target}")
    return EXIT_OK
