"""A batch run from start to end: find the submissions, decide which ones need grading
(missing, changed, or graded with another spec or seed; or the students asked for), work
out each one's lateness when a late policy is given, grade them in the pool while the
gradebook records each one and its feedback files are written, then export what needs
the whole class (grades.csv, the class pages, and the feedback of students graded before)."""

from __future__ import annotations

import re
import shlex
import shutil
import sqlite3
import threading
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, TextIO

from ..lab_setup import UsageError
from ..labs import Lab
from ..results import GradeReport
from ..sandbox.deadline import backstop
from ..seeding import Seed, draw_seed, student_seed
from ..spec import Spec
from .classlist import ClassList
from .discovery import Submission, clean_name
from .executor import Executor, Job, JobResult
from .exports import publish, write_recorded_feedback
from .gradebook import ExportContext, Gradebook, GradeKey
from .insights import ClassInsights, class_insights
from .late import SOURCE_NAMES, LatePolicy, penalties, submission_times
from .lock import gradebook_lock
from .pool import LocalPool
from .progress import Progress
from .scratch import make_run_folder, sweep_stale
from .summary import ClassSummary, summarize
from .task import GradeTask, GradingFailed

GRADEBOOK_NAME = "gradebook.sqlite"
CLASS_LIST_NAME = "class.sqlite"  # in the run's scratch folder (classlist.py)
# beyond the submission's wall-clock backstop (its limits are CPU time): kernel starts, judging, a busy machine
DEADLINE_MARGIN_SECONDS = 60.0


@dataclass(frozen=True)
class BatchOptions:
    folder: Path
    out: Path
    jobs: int
    id_pattern: re.Pattern | None = None
    seed: int | None = None  # None: the last run's of this spec, else `configured_seed`, else a fresh one
    regrade: bool = False  # grade everything again (not with the last run's seed)
    show_hidden: bool = False  # feedback shows hidden tests' details
    command: tuple[str, ...] = ()  # the command line as typed, for the advice after an interrupt
    students: tuple[str, ...] = ()  # grade only these students again (with the class's seed)
    failed_only: bool = False  # grade again only students below full marks or not graded
    late: LatePolicy | None = None  # the late policy; None: keep the penalties stored
    timestamps: Mapping[str, datetime] | None = None  # student -> submitted at, from the LMS
    configured_seed: int | None = None  # abgrade.yaml's `seed:`


@dataclass
class BatchResult:
    run_id: int
    seed: int
    found: int  # submissions discovered in the folder
    graded_now: int  # graded (or failed to grade) by this run
    summary: ClassSummary
    problems: list[str] = field(default_factory=list)  # students' folder entries left out, and why
    ignored: list[str] = field(default_factory=list)  # entries that are not submissions
    killed_runs: list[int] = field(default_factory=list)  # earlier runs found dead, now marked killed
    insights: ClassInsights | None = None  # what the class misunderstood (insights.py)
    seed_source: str = ""  # where the seed came from (seeding.Seed.source)


def default_out(folder: Path) -> Path:
    """Next to the class folder, not inside it (where it would look like a student's folder)."""
    folder = folder.resolve()
    return folder.parent / f"{folder.name}-abgrade"


def choose_seed(
    book: Gradebook, spec: Spec, requested: int | None, regrade: bool, configured: int | None = None
) -> Seed:
    """One seed for every student of the class: the one asked for, else the last run's
    (a resumed or incremental run continues it; not with `regrade`), else abgrade.yaml's,
    else a fresh one, drawn once and kept in the gradebook from then on. Never the spec's
    own: any student with abgrade can compute that one, and a class's hidden cases must
    not be the ones `abgrade grade` shows. Secret: feedback files never show it."""
    if requested is not None:
        return Seed(requested, "given with --seed", secret=True)
    last = None if regrade else book.last_seed(spec)
    if last is not None:
        return Seed(last, "the gradebook's last run's", secret=True)
    if configured is not None:
        return Seed(configured, "abgrade.yaml's", secret=True)
    return Seed(draw_seed(), "drawn for this class, kept in the gradebook", secret=True)


def stale(submission: Submission, stored: GradeKey | None, spec: Spec, seed: int, regrade: bool) -> bool:
    """Missing, errored, changed, or graded under another spec or seed; all with `regrade`
    (`stored`: what the stored grade was computed from, Gradebook.stored_key)."""
    return regrade or stored != GradeKey(submission.file_hash, spec.version, spec.digest, seed)


def needs_grading(
    submissions: list[Submission], stored: Mapping[str, GradeKey], spec: Spec, seed: int, regrade: bool
) -> list[Submission]:
    """The stale ones of a class held in memory, in the batch's order: notebooks first
    (they take longest, and starting them early shortens the tail), then by student. A
    batch queues the same in its class list (ClassList.submissions(notebooks_first=True))."""
    todo = [s for s in submissions if stale(s, stored.get(s.student), spec, seed, regrade)]
    return sorted(todo, key=lambda s: (s.path.suffix != ".ipynb", s.student))


def chosen_students(options: BatchOptions, book: Gradebook, lab: str, found: ClassList) -> Callable[[str], bool] | None:
    """Whether `--student` and `--failed-only` ask for a student (None: no such option). A
    student that is not in the class folder is a usage error, before anything is graded."""
    if not options.students and not options.failed_only:
        return None
    unknown = [s for s in options.students if not found.has(s)]
    if unknown:
        shown = found.first_students(11)
        known = ", ".join(shown[:10]) + (", ..." if len(shown) > 10 else "")
        raise UsageError(
            f"--student {unknown[0]!r}: no submission of that student in {options.folder} "
            f"(students: {known or 'none'}); give the id as in grades.csv"
        )
    asked = frozenset(options.students)
    return lambda student: student in asked or (options.failed_only and book.has_failed(lab, student))


def record_lateness(options: BatchOptions, book: Gradebook, lab: str, submissions: Iterable[Submission]) -> list[str]:
    """Each student's lateness under the run's policy, stored; lines for the terminal:
    where the times came from, who has none (not penalised), whom the timestamps file
    misses, and how many were penalised, from which source."""
    policy = options.late
    if policy is None:
        return []
    use_mtime = policy.times_from == "mtime"
    times = submission_times(submissions, options.timestamps, policy.due.tzinfo, use_mtime)
    found = penalties(policy, times)
    book.record_penalties(lab, found)
    counts = Counter(source for _, source in times.times.values())
    named = [f"{SOURCE_NAMES[source]} ({counts[source]})" for source in SOURCE_NAMES if counts[source]]
    lines = [f"  late policy: {policy.describe()}; submission times from {', '.join(named) or 'nowhere'}"]
    if times.not_in_timestamps:
        instead = "file modification times" if use_mtime else "LMS file names where they carry one"
        lines.append(
            f"  the timestamps file has no row for {len(times.not_in_timestamps)} student(s): "
            f"{_students(times.not_in_timestamps)} (their times from {instead})"
        )
    if times.no_time:
        lines.append(
            f"  time unknown: {len(times.no_time)} student(s), not penalised: {_students(times.no_time)} (no named "
            "source has their time: add them to --timestamps FILE, or use the files' modification times with "
            "--times-from mtime if unzipping kept the LMS's)"
        )
    penalised = sorted(s for s, p in found.items() if p.percent > 0)
    by_source = Counter(SOURCE_NAMES[found[s].source] for s in penalised)
    if penalised:
        shown = ", ".join(f"{s} ({found[s].days_late}d, -{found[s].percent:g}%)" for s in penalised[:10])
        lines.append(
            f"  penalised: {len(penalised)} student(s), times from "
            + ", ".join(f"{source} ({n})" for source, n in sorted(by_source.items()))
            + f": {shown}{', ...' if len(penalised) > 10 else ''}"
        )
    else:
        lines.append(f"  penalised: nobody ({len(times.times)} with a known time, none late)")
    if times.unknown:
        lines.append(
            f"  ignored {len(times.unknown)} timestamps row(s) of students without a submission: "
            + _students(times.unknown)
        )
    return lines


def _students(students: list[str], shown: int = 10) -> str:
    return ", ".join(clean_name(s) for s in students[:shown]) + (", ..." if len(students) > shown else "")


def resume_advice(options: BatchOptions, seed: int) -> str:
    """What grades the rest after an interrupt. Not a `--regrade` command: that would start
    over with a fresh seed; the same command without it keeps this run's seed (the last
    run's) and grades only what is missing."""
    if not options.regrade:
        return "the same command grades the rest"
    if options.command:
        rest = [word for word in options.command if word != "--regrade"]
        if "--seed" not in rest and not any(w.startswith("--seed=") for w in rest):
            rest += ["--seed", str(seed)]
        return f"to grade the rest with the same seed, run: {shlex.join(rest)}"
    return f"to grade the rest with the same seed, run the same command without --regrade (seed {seed})"


def warm_student_seed(seed: Seed) -> threading.Thread:
    """Derive the value the students' random generators are seeded with (a secret seed's
    scrypt: about 0.1 s of one core, seeding.student_seed) on a thread of this process
    while it prepares the run (scrypt runs outside the interpreter lock, on the core the
    batch's own start leaves idle). Joined before the pool starts, so that the grader
    processes forked from this process find it remembered: without it each of them
    derived it on its first grading, before its first student could start (one scrypt
    per grader process; the same value). Only for the local pool: grader processes
    started otherwise (its fork server, when this process has other threads; Dask's
    workers) derive it themselves, as before. A failure here is left to them."""
    thread = threading.Thread(target=_derive_quietly, args=(seed,), name="abgrade-student-seed", daemon=True)
    thread.start()
    return thread


def _derive_quietly(seed: Seed) -> None:
    try:
        student_seed(seed)
    except Exception:  # noqa: BLE001, S110 - the grader process that needs it derives it again and says why
        pass


def recorded_count(book: Gradebook, run_id: int, shown: int) -> int:
    """How many submissions an interrupted run has recorded: counted in the gradebook, not
    from the progress lines (an interrupt between a row's write and its line would say one
    fewer than the gradebook holds); `shown` (the lines) if the gradebook can't say."""
    try:
        return book.recorded_in_run(run_id)
    except sqlite3.Error:
        return shown


def run_batch(
    options: BatchOptions,
    lab: Lab,
    spec: Spec,
    stream: TextIO,
    task: Callable[[Path], Any] | None = None,
    executor: Executor | None = None,
) -> BatchResult:
    """Grade the class folder; `stream` gets the progress, `task` (for tests) replaces the
    real grading, `executor` the local pool of `options.jobs` processes (a Dask cluster).
    On Ctrl-C or any error the run is marked interrupted and the exception goes on: what
    was graded is in the gradebook, and the advice printed says what continues it. Raises
    GradebookBusy when another live run holds the gradebook."""
    folder = options.folder.resolve()  # grader processes get absolute paths, whatever their working folder
    executor = executor or LocalPool(options.jobs)
    with gradebook_lock(options.out):
        sweep_stale()
        scratch = make_run_folder()
        try:
            return _run_locked(options, folder, lab, spec, stream, task, scratch, executor)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)


def _run_locked(
    options: BatchOptions,
    folder: Path,
    lab: Lab,
    spec: Spec,
    stream: TextIO,
    task: Callable[[Path], Any] | None,
    scratch: Path,
    executor: Executor,
) -> BatchResult:
    found = ClassList.find(folder, options.id_pattern, scratch / "class" / CLASS_LIST_NAME)
    try:
        book = Gradebook(options.out / GRADEBOOK_NAME)
        try:
            return _grade_class(options, folder, lab, spec, stream, task, scratch, executor, found, book)
        finally:
            book.close()
    finally:
        found.close()


def _grade_class(
    options: BatchOptions,
    folder: Path,
    lab: Lab,
    spec: Spec,
    stream: TextIO,
    task: Callable[[Path], Any] | None,
    scratch: Path,
    executor: Executor,
    found: ClassList,
    book: Gradebook,
) -> BatchResult:
    """The run itself, the class list and the gradebook open. Nothing per student stays in
    this process: the queue is read from the class list a page at a time, and a submission
    is held from the moment its job is handed out until its grade is written."""
    killed = book.mark_killed()
    chosen_seed = choose_seed(book, spec, options.seed, options.regrade, options.configured_seed)
    seed = chosen_seed.value
    warming = warm_student_seed(chosen_seed) if isinstance(executor, LocalPool) else None
    try:
        lab.plans(spec, seed)  # a broken spec raises SpecError here, before any worker starts
        hints = lab.hints(spec)  # the classic bugs in the words of the spec's course (its conventions)
        chosen = chosen_students(options, book, spec.lab, found)
    except BaseException:
        if warming is not None:  # nothing of this run outlives its error
            warming.join()
        raise
    everyone = found.submissions(notebooks_first=True)
    if chosen is None:
        queued = found.enqueue(
            s for s in everyone if stale(s, book.stored_key(spec.lab, s.student), spec, seed, options.regrade)
        )
    else:  # the students asked for, graded again even when unchanged, with the class's seed
        queued = found.enqueue(s for s in everyone if chosen(s.student))
    lateness = record_lateness(options, book, spec.lab, found.submissions())
    total = found.count()
    skipped, problems, ignored = found.skipped(), found.problems, found.ignored()
    print(
        f"abgrade batch: {total} submissions in {options.folder}, {queued} to grade "
        f"with {executor.where}, seed {seed} ({chosen_seed.source})",
        file=stream,
    )
    for line in lateness:
        print(line, file=stream)
    for run_id in killed:
        print(f"  run {run_id} was killed before it ended (marked killed); its finished grades are kept", file=stream)
    for problem in problems:
        print(f"  skipped {problem}", file=stream)
    for entry in ignored:
        print(f"  ignored {entry}", file=stream)
    run_id = book.start_run(spec, seed, executor.workers, folder)
    in_flight: dict[str, Submission] = {}  # handed out, not yet written: a few per worker
    deadline = backstop(spec.limits.submission_seconds) + DEADLINE_MARGIN_SECONDS
    progress = Progress(queued, stream, live=stream.isatty(), limit=deadline)

    def jobs() -> Iterator[Job]:
        for submission in found.queued():
            in_flight[submission.student] = submission
            yield Job(submission.student, submission.path)

    def record(result: JobResult) -> None:
        submission = in_flight.pop(result.job.key)
        if isinstance(result.value, GradeReport):
            book.record_report(run_id, spec, seed, submission, result.value, result.seconds)
            outcome = f"{result.value.score:g}/{result.value.max_score:g}"
        else:
            failed = result.value.reason if isinstance(result.value, GradingFailed) else result.failure
            reason = clean_name(failed or "no result")
            book.record_error(run_id, spec, seed, submission, reason, result.seconds, machine=result.machine)
            outcome = f"not graded: {reason}"
        # this process is idle while the pool runs: each student's feedback is written now,
        # not in the end's pass over the class (publish skips this run's students)
        write_recorded_feedback(book, spec.lab, submission.student, options.out, options.show_hidden, hints)
        progress.finished(submission.student, outcome, result.seconds)

    try:
        hidden = (folder, options.out.resolve(), found.folder)  # the class list names every student's file
        task = task or GradeTask(lab.name, spec, chosen_seed, hidden=hidden, temp_root=scratch, lab=lab)
        if warming is not None:  # before the pool: its grader processes are forked with the value remembered
            warming.join()
        executor.run(jobs(), task, deadline, record, progress.tick)
    except BaseException:
        progress.close()
        book.end_run(run_id, "interrupted")
        print(
            f"abgrade batch: interrupted after {recorded_count(book, run_id, progress.done)} of {queued}; every "
            f"finished submission is in the gradebook; {resume_advice(options, seed)}",
            file=stream,
        )
        raise
    progress.close()
    book.end_run(run_id, "complete")
    book.save_export_context(
        spec.lab, ExportContext(tuple(skipped), options.show_hidden, tuple(hints.items())), found.names()
    )
    published = publish(book, spec.lab, options.out, hints, written_by=run_id)  # one student at a time
    summary = published.summary if published else summarize(spec.lab, [])
    insights = published.insights if published else class_insights([], hints)
    return BatchResult(run_id, seed, total, queued, summary, problems, ignored, killed, insights, chosen_seed.source)
