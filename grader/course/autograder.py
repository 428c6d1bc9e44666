"""What the bundle's `run_autograder` does on Gradescope: grade the one `.py` or `.ipynb`
file in `ROOT/submission` and write `ROOT/results/results.json` (ROOT = /autograder, or
ABGRADE_AUTOGRADER_ROOT). A student's mistake (no file, several files, code that doesn't
load) is a graded result with a clear message, never a crash: Gradescope then shows the
student 0 out of the full score and why.

Spec visibilities are Gradescope's own values (visible, hidden, after_due_date,
after_published) and are written as they are. Hidden cases run here, drawn from the seed
that `abgrade gradescope build` put in the bundle's settings: the same for every run of
the bundle, so that a resubmission of the same code gets the same cases and score. The
settings live in ROOT/source, which setup.sh makes root-only and the sandbox hides from the
student's process; results.json never shows the seed, nor what the student's code printed
during hidden cases."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from ..grading import SUPPORTED_SUFFIXES, grade_submission
from ..lab_setup import load_lab
from ..labs import Lab
from ..report.gradescope import results_json
from ..results import GradeReport
from ..seeding import Seed, seed_problem, spec_seed
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


def unloadable_report(folder: Path, lab: Lab, spec: Spec, problem: str, seed: Seed | None = None) -> GradeReport:
    """The report of a submission that can't be graded at all: the pipeline's own failed
    report of the folder (load fails, every test points at load, the full maximum), with
    `problem` as the load test's message."""
    report = grade_submission(folder, lab, spec, seed=seed)
    for test in report.tests:
        if test.kind == "load":
            test.output = problem
    return report


def run_autograder(
    root: Path, lab_name: str | None = None, spec_file: Path | None = None, seed: int | None = None
) -> dict:
    """Grade `root/submission`, write `root/results/results.json`, return what was written.
    `lab_name`, `spec_file` and `seed` default to the bundle's settings. If the autograder
    itself is broken (bad settings or spec, a bug), results.json says so and the error is
    re-raised for Gradescope's log."""
    target = root / "results" / "results.json"
    try:
        results = _graded(root, lab_name, spec_file, seed)
    except Exception as exc:
        failed = f"The autograder failed (tell your instructor): {exc}"
        _write(target, {"score": 0.0, "output": failed, "execution_time": 0.0, "tests": []})
        raise
    _write(target, results)
    return results


def _graded(root: Path, lab_name: str | None, spec_file: Path | None, given: int | None) -> dict:
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
    seed = bundle_seed(source, settings, spec, given)
    folder = root / "submission"
    try:
        # the student's process must not read the bundle (wheel, spec, seed) nor the results
        report = grade_submission(find_submission(folder), lab, spec, seed=seed, hidden=(source, root / "results"))
    except NoSingleSubmission as problem:
        report = unloadable_report(folder, lab, spec, str(problem), seed)
    return results_json(report, for_students=True)


def bundle_seed(source: Path, settings: dict, spec: Spec, given: int | None = None) -> Seed:
    """The seed of every run of this bundle: `given` (`gradescope run --seed`), else the one
    drawn when the bundle was built. A bundle built before bundles carried one falls back to
    the spec's own seed, still the same on every run, but one that anyone with abgrade can
    compute: said in Gradescope's log. Secret either way: results.json never shows it."""
    if given is not None:
        return Seed(given, "given with --seed", secret=True)
    value = settings.get("seed")
    if value is None:
        print(
            f"abgrade: {source / SETTINGS_FILE} holds no seed (a bundle built before abgrade drew one): the random "
            "cases use the spec's own seed, which students with abgrade can compute; rebuild the bundle",
            file=sys.stderr,
        )
        return Seed(spec_seed(spec).value, "the spec's own", secret=True)
    problem = seed_problem(value)
    if problem:
        raise SpecError(str(source / SETTINGS_FILE), None, "seed", problem)
    return Seed(value, "the bundle's", secret=True)


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
