"""A batch run from start to end: find the submissions, decide which ones need grading
(missing, changed, or graded with another spec or seed), grade them in the pool while the
gradebook records each one, then export everything the gradebook holds for the class."""
from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from ..grading import new_seed
from ..labs import Lab
from ..spec import Spec
from .discovery import Submission, discover
from .exports import write_exports
from .gradebook import GradeKey, Gradebook
from .pool import Job, JobResult, run_jobs
from .progress import Progress
from .summary import ClassSummary, summarize
from .task import GradeTask

GRADEBOOK_NAME = "gradebook.sqlite"
DEADLINE_MARGIN_SECONDS = 60.0  # beyond the spec's per-submission limit: kernel starts, judging, a busy machine


@dataclass(frozen=True)
class BatchOptions:
    folder: Path
    out: Path
    jobs: int
    id_pattern: re.Pattern | None = None
    seed: int | None = None       # None: the seed of the last run of this spec, or a fresh one
    regrade: bool = False         # grade everything again (with a fresh seed unless `seed` is given)
    show_hidden: bool = False     # feedback shows hidden tests' details


@dataclass
class BatchResult:
    run_id: int
    seed: int
    found: int                    # submissions discovered in the folder
    graded_now: int               # graded (or failed to grade) by this run
    summary: ClassSummary
    problems: list[str] = field(default_factory=list)  # folder entries left out, and why


def default_out(folder: Path) -> Path:
    """Next to the class folder, not inside it (where it would look like a student's folder)."""
    folder = folder.resolve()
    return folder.parent / f"{folder.name}-abgrade"


def choose_seed(book: Gradebook, spec: Spec, requested: int | None, regrade: bool) -> int:
    """One seed for every student of the class: the one asked for, else the last run's
    (a resumed or incremental run continues it), else a fresh one."""
    if requested is not None:
        return requested
    last = None if regrade else book.last_seed(spec)
    return new_seed() if last is None else last


def needs_grading(submissions: list[Submission], stored: dict[str, GradeKey], spec: Spec, seed: int,
                  regrade: bool) -> list[Submission]:
    """Missing, errored, changed, or graded under another spec or seed; all with `regrade`.
    Notebooks first: they take longest, and starting them early shortens the tail."""
    todo = [s for s in submissions
            if regrade or stored.get(s.student) != GradeKey(s.file_hash, spec.version, spec.digest, seed)]
    return sorted(todo, key=lambda s: (s.path.suffix != ".ipynb", s.student))


def run_batch(options: BatchOptions, lab: Lab, spec: Spec, stream: TextIO,
              task: Callable[[Path], Any] | None = None) -> BatchResult:
    """Grade the class folder; `stream` gets the progress, `task` (for tests) replaces the
    real grading. On Ctrl-C or any error the run is marked interrupted and the exception
    goes on: what was graded is in the gradebook, and the same command continues."""
    folder = options.folder.resolve()  # grader processes get absolute paths, whatever their working folder
    discovery = discover(folder, options.id_pattern)
    book = Gradebook(options.out / GRADEBOOK_NAME)
    try:
        seed = choose_seed(book, spec, options.seed, options.regrade)
        lab.plans(spec, seed)  # a broken spec raises SpecError here, before any worker starts
        todo = needs_grading(discovery.submissions, book.valid_keys(spec.lab), spec, seed, options.regrade)
        print(f"abgrade batch: {len(discovery.submissions)} submissions in {options.folder}, {len(todo)} to grade "
              f"with {options.jobs} worker(s), seed {seed}", file=stream)
        for problem in discovery.problems:
            print(f"  skipped {problem}", file=stream)
        run_id = book.start_run(spec, seed, options.jobs, folder)
        by_student = {s.student: s for s in todo}
        progress = Progress(len(todo), stream, live=stream.isatty())

        def record(result: JobResult) -> None:
            submission = by_student[result.job.key]
            if result.failure is None:
                book.record_report(run_id, spec, seed, submission, result.value, result.seconds)
                progress.finished(submission.student, f"{result.value.score:g}/{result.value.max_score:g}")
            else:
                book.record_error(run_id, spec, seed, submission, result.failure, result.seconds)
                progress.finished(submission.student, f"not graded: {result.failure}")

        try:
            task = task or GradeTask(lab.name, spec, seed, hidden=(folder, options.out.resolve()))
            run_jobs([Job(s.student, s.path) for s in todo], task, options.jobs,
                     spec.limits.submission_seconds + DEADLINE_MARGIN_SECONDS, record, progress.tick)
        except BaseException:
            progress.close()
            book.end_run(run_id, "interrupted")
            print(f"abgrade batch: interrupted after {progress.done} of {len(todo)}; every finished submission "
                  "is in the gradebook, and the same command grades the rest", file=stream)
            raise
        progress.close()
        book.end_run(run_id, "complete")
        grades = book.grades(spec.lab, [s.student for s in discovery.submissions])
        summary = summarize(spec.lab, grades)
        write_exports(grades, summary, lab.bug_hints, options.out, options.show_hidden)
        return BatchResult(run_id, seed, len(discovery.submissions), len(todo), summary, discovery.problems)
    finally:
        book.close()
