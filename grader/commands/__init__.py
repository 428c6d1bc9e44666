"""One module per `abgrade` sub-command, each with `register(subparsers)`. Adding a
command means adding a module here and its name to COMMANDS."""

from __future__ import annotations

import importlib

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (on the way to the first spawn)

if TYPE_CHECKING:  # argparse only once a parser is built: grade_early.py runs before it
    import argparse

COMMANDS = (
    "grade",
    "batch",
    "gradebook",
    "check",
    "gradescope",
    "demo",
    "exercise",
    "specs",
    "cluster",
    "student_wheel",
    "lab",
    "serve",
)


def register_all(subparsers: argparse._SubParsersAction, only: str | None = None) -> None:
    """Register every command's parser, or only that of the command `only` (as typed,
    e.g. `student-wheel`) when it is one: a command line that names its command needs no
    other (and importing them all costs `abgrade grade` a noticeable part of its start)."""
    typed = [name for name in COMMANDS if name.replace("_", "-") == only]
    for name in typed or COMMANDS:
        try:
            module = importlib.import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as exc:
            if exc.name == f"{__name__}.{name}":
                continue  # a command still being written
            raise
        module.register(subparsers)
