"""Setting up a grading from what a user typed: the lab and its spec, the submission's
path, and the one-line usage error when either is wrong. Below the commands, so that
course/ and batch/ use it without importing a command."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # imported when used: `abgrade` starts without loading the labs
    from .labs import Lab
    from .spec import Spec


class UsageError(Exception):
    """A command-line mistake: printed as one line, exit code 2."""


SUBMISSION_SUFFIXES = (".py", ".ipynb")  # grading.SUPPORTED_SUFFIXES, without importing the pipeline


def check_submission_path(path: Path) -> None:
    """A submission named on the command line must be a .py or .ipynb file: anything else
    is the user's typo, said in one line with the fix (exit code 2), not a graded result
    with every test "not run"."""
    fix = "give the path of your .py or .ipynb"
    if not path.exists():
        raise UsageError(f"{path}: no such file; {fix}")
    if path.is_dir():
        raise UsageError(f"{path}: is a folder; {fix} file in it")
    if path.suffix not in SUBMISSION_SUFFIXES:
        raise UsageError(f"{path}: not a .py or .ipynb file; {fix}")


def load_lab(lab_name: str, spec_file: Path | None = None, opened: Lab | None = None) -> tuple[Lab, Spec]:
    """The lab's adapter and its spec (the bundled one unless `spec_file` is given).
    `lab_name` may also be the path of a lab folder (game.py, reference.py, spec.yaml),
    whose own spec.yaml is then the default. `opened`: `get_lab(lab_name)` made already
    (a served grade's, grade_early.opened_lab), so a lab folder is not read twice."""
    from .labs import get_lab
    from .spec import SpecError, load_spec, spec_path

    try:
        lab = opened if opened is not None else get_lab(lab_name)
    except KeyError as exc:
        raise UsageError(exc.args[0]) from None
    spec = load_spec(spec_file or lab.spec_file or spec_path(lab_name))
    if spec.lab != lab.name:
        raise SpecError(
            spec.path, spec.raw.lines.get("lab"), "lab", f"this spec is for lab {spec.lab!r}, not {lab.name!r}"
        )
    return lab, lab.adopt(spec)


def private_dirs(lab_name: str) -> list[Path]:
    """Folders of the lab `lab_name` the student process must not see, known before the lab
    is loaded (so that a worker started early is walled off from them too): a lab folder."""
    from .registry import folder_of

    folder = folder_of(lab_name)
    return [folder.resolve()] if folder is not None and folder.is_dir() else []
