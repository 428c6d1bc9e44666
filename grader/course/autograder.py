"""What the bundle's `run_autograder` does on Gradescope: grade the one `.py` or `.ipynb`
file in `ROOT/submission` and write `ROOT/results/results.json` (ROOT = /autograder, or
ABGRADE_AUTOGRADER_ROOT). A student's mistake (no file, several files, code that doesn't
load) is a graded result with a clear message, never a crash: Gradescope then shows the
student 0 out of the full score and why.

Spec visibilities are Gradescope's own values (visible, hidden, after_due_date,
after_published) and are written as they are; hidden cases run here, with a fresh seed."""

from __future__ import annotations

import json
import os
from pathlib import Path

from ..grading import SUPPORTED_SUFFIXES, grade_submission
from ..lab_setup import load_lab
from ..labs import Lab
from ..report.gradescope import results_json
from ..results import GradeReport
from ..spec import Spec, SpecError
from .gradescope_bundle import SETTINGS_FILE

ROOT_VARIABLE = "ABGRADE_AUTOGRADER_ROOT"
DEFAULT_ROOT = Path("/autograder")
# Folders that uploads and editors add and that never hold the submission.
_IGNORED_FOLDERS = {"__pycache__", ".ipynb_checkpoints", "__MACOSX"}


class NoSingleSubmission(Exception):
    """The submission folder does not hold exactly one .py or .ipynb file."""


def autograder_root(given: Path | None = None) -> Path:
    return given or Path(os.environ.get(ROOT_VARIABLE) or DEFAULT_ROOT)


def find_submission(folder: Path) -> Path:
    """The one `.py` or `.ipynb` file anywhere under `folder` (hidden files and editor
    folders aside); raises NoSingleSubmission with a message for the student."""
    files = sorted(p for p in folder.rglob("*") if p.is_file() and not _ignored(p.relative_to(folder)))
    code = [p for p in files if p.suffix in SUPPORTED_SUFFIXES]
    if len(code) == 1:
        return code[0]
    wanted = " or ".join(SUPPORTED_SUFFIXES)
    if code:
        names = ", ".join(str(p.relative_to(folder)) for p in code)
        raise NoSingleSubmission(
            f"your submission holds {len(code)} Python files ({names}); submit exactly one {wanted} file"
        )
    others = ", ".join(str(p.relative_to(folder)) for p in files[:10]) + (", ..." if len(files) > 10 else "")
    raise NoSingleSubmission(f"your submission holds no {wanted} file" + (f" (only: {others})" if files else ""))


def _ignored(relative: Path) -> bool:
    return any(part.startswith(".") or part in _IGNORED_FOLDERS for part in relative.parts)


def unloadable_report(folder: Path, lab: Lab, spec: Spec, problem: str) -> GradeReport:
    """The report of a submission that can't be graded at all: the pipeline's own failed
    report of the folder (load fails, every test points at load, the full maximum), with
    `problem` as the load test's message."""
    report = grade_submission(folder, lab, spec)
    for test in report.tests:
        if test.kind == "load":
            test.output = problem
    return report


def run_autograder(root: Path, lab_name: str | None = None, spec_file: Path | None = None) -> dict:
    """Grade `root/submission`, write `root/results/results.json`, return what was written.
    `lab_name` and `spec_file` default to the bundle's settings. If the autograder itself is
    broken (bad settings or spec, a bug), results.json says so and the error is re-raised
    for Gradescope's log."""
    target = root / "results" / "results.json"
    try:
        results = _graded(root, lab_name, spec_file)
    except Exception as exc:
        _write(target, {"score": 0.0, "output": f"The autograder failed (tell your instructor): {exc}", "tests": []})
        raise
    _write(target, results)
    return results


def _graded(root: Path, lab_name: str | None, spec_file: Path | None) -> dict:
    source = root / "source"
    settings = _settings(source)
    if lab_name is None and settings.get("folder"):
        lab_name = str(source / settings["folder"])  # a lab folder, bundled
    lab_name = lab_name or settings.get("lab")
    if not lab_name:
        raise SpecError(str(source / SETTINGS_FILE), None, "lab", "missing: which lab this autograder grades")
    if spec_file is None and settings.get("spec"):
        spec_file = source / settings["spec"]
    lab, spec = load_lab(lab_name, spec_file)
    folder = root / "submission"
    try:
        # the student's process must not read the bundle (wheel, spec) nor the results
        report = grade_submission(find_submission(folder), lab, spec, hidden=(source, root / "results"))
    except NoSingleSubmission as problem:
        report = unloadable_report(folder, lab, spec, str(problem))
    return results_json(report)


def _write(target: Path, results: dict) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(results, indent=2, allow_nan=False) + "\n")


def _settings(source: Path) -> dict:
    path = source / SETTINGS_FILE
    if not path.exists():
        return {}
    settings = json.loads(path.read_text())
    if not isinstance(settings, dict):
        raise SpecError(str(path), None, "settings", "must be a JSON object with 'lab'")
    return settings
