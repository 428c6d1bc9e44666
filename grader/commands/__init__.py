"""One module per `abgrade` sub-command, each with `register(subparsers)`. Adding a
command means adding a module here and its name to COMMANDS."""

from __future__ import annotations

import argparse
import importlib

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
)


def register_all(subparsers: argparse._SubParsersAction) -> None:
    for name in COMMANDS:
        try:
            module = importlib.import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as exc:
            if exc.name == f"{__name__}.{name}":
                continue  # a command still being written
            raise
        module.register(subparsers)
