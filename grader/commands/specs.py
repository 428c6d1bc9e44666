"""`abgrade specs verify`: recompute every stored expectation with the reference."""

from __future__ import annotations

import argparse
from pathlib import Path

from .common import EXIT_FAILED, EXIT_OK, UsageError, load_lab


def register(commands: argparse._SubParsersAction) -> None:
    specs = commands.add_parser("specs", help="work with lab specs")
    actions = specs.add_subparsers(metavar="ACTION")
    verify = actions.add_parser("verify", help="recompute every stored expectation with the reference")
    verify.add_argument(
        "labs",
        nargs="*",
        help="labs (names or lab folders) to verify (default: every installed lab, and the example specs "
        "of specs/examples/)",
    )
    verify.add_argument(
        "--spec", type=Path, help="verify this spec file (its `lab`, or the lab folder it lies in, names the lab)"
    )
    verify.set_defaults(run=run_verify)


def run_verify(args: argparse.Namespace) -> int:
    from ..paths import SPECS_DIR
    from ..registry import lab_names
    from ..spec import spec_path

    if args.spec:
        if len(args.labs) > 1:
            raise UsageError("--spec verifies one spec: name at most one lab with it")
        targets = [load_lab(args.labs[0] if args.labs else _lab_of(args.spec), args.spec)]
    else:
        names = args.labs or [n for n in lab_names() if spec_path(n).exists()]
        targets = [load_lab(name) for name in names]
        if not args.labs:  # the shipped examples (a course's own conventions) are kept right too
            targets += [load_lab(_lab_of(path), path) for path in sorted((SPECS_DIR / "examples").glob("*.yaml"))]
    failed = False
    for lab, spec in targets:
        problems = lab.verify(spec) + lab.advice(spec)
        for problem in problems:
            print(problem)
        print(f"{spec.path}: {'FAILED' if problems else 'ok'} ({len(spec.cases)} fixed cases)")
        failed = failed or bool(problems)
    return EXIT_FAILED if failed else EXIT_OK


def _lab_of(spec_file: Path) -> str:
    """The lab a spec file belongs to: the lab folder it lies in, else its `lab` field."""
    from ..spec import SpecError
    from ..spec.yaml_lines import LineDict, read_yaml_file

    folder = spec_file.parent
    if (folder / "game.py").is_file() and (folder / "reference.py").is_file():
        return str(folder)
    _, raw = read_yaml_file(spec_file, str(spec_file), "spec", SpecError)
    lab = raw.get("lab") if isinstance(raw, LineDict) else None
    if not isinstance(lab, str):
        raise SpecError(str(spec_file), 1, "lab", "missing: the lab's name")
    return lab
