"""`abgrade exercise LAB [--notebook] [-o PATH]`: a student's starting copy of a lab."""

from __future__ import annotations

import argparse
from pathlib import Path

from .common import EXIT_OK, UsageError


def register(commands: argparse._SubParsersAction) -> None:
    exercise = commands.add_parser("exercise", help="write a student's starting copy of a lab")
    exercise.add_argument("lab")
    exercise.add_argument("-o", "--output", type=Path, help="where to write it (default: ./LAB_lab.py or .ipynb)")
    exercise.add_argument("--notebook", action="store_true", help="write the Jupyter notebook instead of the .py")
    exercise.add_argument("--force", action="store_true", help="overwrite an existing file")
    exercise.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from ..exercises import exercise_notebook_text, exercise_text

    try:
        text = exercise_notebook_text(args.lab) if args.notebook else exercise_text(args.lab)
    except KeyError as exc:
        raise UsageError(exc.args[0]) from None
    target = args.output or Path(f"{args.lab}_lab.{'ipynb' if args.notebook else 'py'}")
    if target.exists() and not args.force:
        raise UsageError(f"{target} already exists; choose another path with -o, or --force")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text)
    print(f"wrote {target}")
    return EXIT_OK
