"""`abgrade specs verify`: recompute every stored expectation with the reference."""

from __future__ import annotations

import argparse
from pathlib import Path

from .common import EXIT_FAILED, EXIT_OK, UsageError


def register(commands: argparse._SubParsersAction) -> None:
    specs = commands.add_parser("specs", help="work with lab specs")
    actions = specs.add_subparsers(metavar="ACTION")
    verify = actions.add_parser("verify", help="recompute every stored expectation with the reference")
    verify.add_argument("labs", nargs="*", help="labs to verify (default: all)")
    verify.add_argument("--spec", type=Path, help="verify this spec file (its `lab` names the adapter)")
    verify.set_defaults(run=run_verify)


def run_verify(args: argparse.Namespace) -> int:
    from ..labs import get_lab, lab_names
    from ..spec import load_spec, spec_path

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
