"""What a grader process does with one submission: grade it with the run's spec and seed.
A separate module so that it is all a grader process imports (and preloads).

Only a machine problem (a Jupyter kernel or a student process that can't start) leaves
here as an exception, for the pool to retry: it is not the student's fault, and another
attempt may work. Any other exception while grading one file is that file's result
(`GradingFailed`, with the reason): retrying it would fail again. Either way, every
temporary folder the attempt made is removed (they all live in one folder per job)."""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from ..grading import grade_submission
from ..labs import Lab, get_lab
from ..results import GradeReport
from ..sandbox import worker_zygote
from ..seeding import Seed
from ..spec import Spec
from .discovery import clean_name

# The sandbox's exceptions for "the machine could not start the student's process"; by
# name, so that this module needs neither Jupyter nor the sandbox's internals.
MACHINE_PROBLEMS = frozenset({"KernelStartError", "WorkerStartError"})


def machine_problem(exc: BaseException) -> bool:
    return any(cls.__name__ in MACHINE_PROBLEMS for cls in type(exc).__mro__)


@dataclass(frozen=True)
class GradingFailed:
    """Grading this submission raised, and not because of the machine."""

    reason: str


@dataclass
class GradeTask:
    """Picklable: sent once to each grader process. Raises the machine problems, returns
    everything else (a GradeReport, or GradingFailed)."""

    lab_name: str
    spec: Spec
    seed: Seed  # the class's (secret: the feedback never shows its number)
    hidden: tuple[Path, ...] = field(default=(), kw_only=True)  # the class and output folders: no student looks in
    temp_root: Path | None = field(default=None, kw_only=True)  # the run's temporary folder (see scratch.py)
    # the lab itself, when its name alone can't bring it back in another process or on a
    # Dask worker (a lab folder's lab pickles as its files)
    lab: Lab | None = field(default=None, kw_only=True, repr=False, compare=False)
    _lab: Lab | None = field(default=None, init=False, repr=False, compare=False)

    def __call__(self, path: Path) -> GradeReport | GradingFailed:
        job_folder = Path(tempfile.mkdtemp(prefix="j-", dir=self.temp_root))
        previous, tempfile.tempdir = tempfile.tempdir, str(job_folder)
        try:
            return self.grade(path)
        except Exception as exc:  # noqa: BLE001 - one file's failure must not stop the class
            if machine_problem(exc):
                raise
            return GradingFailed(clean_name(f"grading this file failed: {type(exc).__name__}: {exc}"[:2000]))
        finally:
            tempfile.tempdir = previous
            shutil.rmtree(job_folder, ignore_errors=True)

    def grade(self, path: Path) -> GradeReport:
        if self._lab is None:
            self._lab = self.lab if self.lab is not None else get_lab(self.lab_name)
            worker_zygote.use()  # this process grades many: `.py` workers are forks of one zygote
        return grade_submission(path, self._lab, self.spec, seed=self.seed, hidden=self.hidden)
