"""The student-side run shared by `abgrade check` and the pytest plugin: visible cases
only, from the expectations stored in the spec, so a student's CI needs no reference
solution and never runs or shows a hidden or after_published test."""

from __future__ import annotations

from ..grading import grade_submission
from ..lab_setup import load_lab
from ..results import GradeReport
from ..seeding import chosen_seed
from .config import LabEntry


def check_lab(entry: LabEntry, seed: int | None = None, configured: int | None = None) -> GradeReport:
    """Grade `entry` on its visible cases; the report holds visible tests only. Random cases
    (when a spec makes them visible) come from `seed` (--seed), else `configured`
    (abgrade.yaml's), else the spec's own seed: never a fresh draw."""
    lab, spec = load_lab(entry.source, entry.spec)
    return grade_submission(entry.submission, lab, spec, seed=chosen_seed(seed, configured, spec), visible_only=True)
