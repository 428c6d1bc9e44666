"""What a grader process does with one submission: grade it with the run's spec and seed.
A separate module so that it is all a grader process imports (and preloads)."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..grading import grade_submission
from ..labs import Lab, get_lab
from ..results import GradeReport
from ..spec import Spec


@dataclass
class GradeTask:
    """Picklable: sent once to each grader process. Raises KernelStartError when the
    machine can't start a Jupyter kernel; the pool retries, it is not the student's fault."""

    lab_name: str
    spec: Spec
    seed: int
    hidden: tuple[Path, ...] = field(default=(), kw_only=True)  # the class and output folders: no student looks in
    _lab: Lab | None = field(default=None, init=False, repr=False, compare=False)

    def __call__(self, path: Path) -> GradeReport:
        if self._lab is None:
            self._lab = get_lab(self.lab_name)
        return grade_submission(path, self._lab, self.spec, seed=self.seed, hidden=self.hidden)
