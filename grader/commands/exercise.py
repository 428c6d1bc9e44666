"""`abgrade exercise LAB [--notebook] [-o PATH]`: a student's starting copy of a lab (LAB
may be a lab folder: its reference with the solution regions cut, and its game module
written beside it)."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from .common import EXIT_OK, UsageError


def register(commands: argparse._SubParsersAction) -> None:
    exercise = commands.add_parser("exercise", help="write a student's starting copy of a lab")
    exercise.add_argument("lab", help="a lab name, or a lab folder's path")
    exercise.add_argument("-o", "--output", type=Path, help="where to write it (default: ./LAB_lab.py or .ipynb)")
    exercise.add_argument("--notebook", action="store_true", help="write the Jupyter notebook instead of the .py")
    exercise.add_argument("--force", action="store_true", help="overwrite an existing file")
    exercise.set_defaults(run=run)


def check_suffix(target: Path, notebook: bool) -> None:
    """The file's suffix says what it holds: notebook JSON in `x.py` would be graded as
    Python ("name 'null' is not defined"), Python in `x.ipynb` is not a notebook."""
    wanted = ".ipynb" if notebook else ".py"
    if target.suffix == wanted:
        return
    if notebook:
        raise UsageError(f"-o {target}: a notebook is written to a .ipynb file; give -o {target.with_suffix(wanted)}")
    fix = "add --notebook for a notebook" if target.suffix == ".ipynb" else f"give -o {target.with_suffix(wanted)}"
    raise UsageError(f"-o {target}: the .py exercise is written to a .py file; {fix}")


def run(args: argparse.Namespace) -> int:
    from ..exercises import MarkerError, exercise_notebook_text, exercise_text, skeleton_text
    from ..registry import folder_of

    if args.output is not None:
        check_suffix(args.output, args.notebook)
    extra: dict[str, str] = {}
    name = args.lab
    if folder_of(args.lab) is not None:
        from .common import load_lab

        lab, _ = load_lab(args.lab)
        assert lab.solution_file is not None  # a lab folder names its reference
        try:
            text = skeleton_text(lab.solution_file)
        except MarkerError as exc:
            raise UsageError(str(exc)) from None
        name, extra = re.sub(r"\W", "_", lab.name), dict(lab.student_files)
        text = exercise_notebook_text(name, text) if args.notebook else text
    else:
        try:
            text = exercise_notebook_text(args.lab) if args.notebook else exercise_text(args.lab)
        except KeyError as exc:
            raise UsageError(exc.args[0]) from None
    target = args.output or Path(f"{name}_lab.{'ipynb' if args.notebook else 'py'}")
    beside = {target.parent / file: content for file, content in extra.items()}
    for path in (target, *beside):
        if path.exists() and not args.force:
            raise UsageError(f"{path} already exists; choose another path with -o, or --force")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text)
    print(f"wrote {target}")
    for path, content in beside.items():
        path.write_text(content)
        print(f"wrote {path} (the game your code imports)")
    return EXIT_OK
