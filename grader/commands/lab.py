"""`abgrade lab new NAME`: write a working lab folder (game.py, reference.py, spec.yaml and
bugs/) to start a course's own lab from (README, "Write your own lab")."""

from __future__ import annotations

import argparse
from pathlib import Path

from .common import EXIT_OK, UsageError


def register(commands: argparse._SubParsersAction) -> None:
    lab = commands.add_parser("lab", help="make a lab of your own (a folder of three files)")
    actions = lab.add_subparsers(metavar="ACTION")
    new = actions.add_parser(
        "new",
        help="write a working three-file lab into the new folder NAME",
        description="Write NAME/game.py, NAME/reference.py, NAME/spec.yaml and NAME/bugs/no_pruning.py: a small "
        "game of sticks that grades as it is. Change them into your own lab, then `abgrade specs verify NAME`.",
    )
    new.add_argument("folder", type=Path, metavar="NAME", help="the new folder (its name is the lab's name)")
    new.set_defaults(run=run_new)


def run_new(args: argparse.Namespace) -> int:
    from ..registry import new_lab_folder

    try:
        written = new_lab_folder(args.folder)
    except KeyError as exc:
        raise UsageError(exc.args[0]) from None
    for path in written:
        print(f"wrote {path}")
    folder = args.folder
    print(
        f"next: abgrade specs verify {folder}; abgrade exercise {folder} -o student.py; "
        f"abgrade grade {folder}/reference.py --lab {folder}"
    )
    return EXIT_OK
