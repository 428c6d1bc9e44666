"""`abgrade demo`: grade the bundled example submissions."""

from __future__ import annotations

import argparse


def register(commands: argparse._SubParsersAction) -> None:
    demo = commands.add_parser("demo", help="grade the bundled example submissions")
    demo.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from ..demo import run_demo

    return run_demo()
