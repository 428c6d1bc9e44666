"""A batch holds nothing per student past its gradebook write (issue 26, goal 3): the
class folder is read into an SQLite class list and handed out a page at a time, so the
submissions alive in the batch process at any moment are those being graded, whatever
the size of the class. Real pool, real gradebook; the grading itself is a stand-in that
returns a small report (what is measured is the batch process, not the sandbox)."""

from __future__ import annotations

import csv
import gc
import io
import json
import os
import re
import sqlite3
import tempfile
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path

import pytest

from grader.batch.classlist import ClassList
from grader.batch.discovery import Submission, compile_id_pattern, discover
from grader.batch.executor import Job, JobQueue
from grader.batch.gradebook import ExportContext, Gradebook
from grader.batch.runner import BatchOptions, run_batch
from grader.labs import get_lab
from grader.results import GradeReport
from grader.results import TestResult as GradedTest  # (a Test* name would be collected)
from grader.sandbox.isolation import detect_isolation

SEED = 4242
PROJECT = Path(__file__).resolve().parent.parent
WORKERS = 2


@dataclass
class CannedTask:
    """Grades every file the same: one passed test. Picklable, for the pool's workers."""

    def __call__(self, path: Path) -> GradeReport:
        return GradeReport("tree", path.name, [GradedTest("load", "load", 1, True)])


class LiveCounter(io.StringIO):
    """The batch's progress stream: a line per finished submission, written after its
    gradebook write. Every `EVERY`th line (and the first) counts the submissions and jobs
    alive in this process: a full collection and a walk of every object, which in a
    pytest worker that has run other files costs a good part of a second, so not on every
    line; a class kept in memory grows with every line, so any sample shows it."""

    EVERY = 8

    def __init__(self) -> None:
        super().__init__()
        self.lines = 0
        self.alive: list[int] = []

    def write(self, text: str) -> int:
        if text.startswith("["):
            if self.lines % self.EVERY == 0:
                gc.collect()
                self.alive.append(sum(isinstance(o, (Submission, Job)) for o in gc.get_objects()))
            self.lines += 1
        return super().write(text)


def most_alive(tmp_path: Path, tree_spec, students: int) -> int:
    folder = tmp_path / f"class-{students}"
    folder.mkdir()
    for number in range(students):
        (folder / f"s{number:04d}.py").write_text(f"x = {number}\n")
    stream = LiveCounter()
    options = BatchOptions(folder, tmp_path / f"out-{students}", WORKERS, seed=SEED)
    result = run_batch(options, get_lab("tree"), tree_spec, stream, CannedTask())
    assert result.graded_now == students and stream.lines == students
    assert len(stream.alive) == -(-students // LiveCounter.EVERY)
    with (options.out / "grades.csv").open(newline="") as handle:
        assert len(list(csv.DictReader(handle))) == students
    return max(stream.alive)


def test_a_batch_keeps_no_submission_alive_past_its_write(tmp_path, tree_spec):
    """At most the jobs being graded (a few per worker) are alive when a grade has been
    written: the same at 40 and at 160 students, never a class's worth."""
    small, large = most_alive(tmp_path, tree_spec, 40), most_alive(tmp_path, tree_spec, 160)
    assert large <= 4 * (WORKERS + 1), large
    assert large <= small + WORKERS, (small, large)


def tricky_class(folder: Path) -> None:
    """Files, folders, LMS resubmissions, a name the pattern misses, junk and a symlink."""
    folder.mkdir()
    for name in ("smith_ann_12_100_lab.py", "smith_ann_late_12_105_lab.py", "doe_bo_7_90_lab.py", "x_3_1_a.py"):
        (folder / name).write_text("x = 1\n")
    (folder / "x_3_2_b.ipynb").write_text("{}")
    (folder / "lee_cy_9_lab").mkdir()
    (folder / "lee_cy_9_lab" / "lab.ipynb").write_text("{}")
    (folder / "lee_cy_9_lab" / "helper.py").write_text("")
    (folder / "twice_5_1_a.py").write_text("")
    (folder / "twice_5_b.py").write_text("")
    (folder / "README.txt").write_text("")
    (folder / "nobody.py").write_text("")
    (folder / ".DS_Store").write_text("")
    os.symlink("/etc/passwd", folder / "evil_8_1_a.py")


@pytest.mark.parametrize("pattern", [None, r"_(?P<id>\d+)_"])
def test_the_class_list_finds_what_discover_finds_in_the_same_order(tmp_path, pattern):
    tricky_class(tmp_path / "class")
    compiled = compile_id_pattern(pattern)
    expected = discover(tmp_path / "class", compiled)
    found = ClassList.find(tmp_path / "class", compiled, tmp_path / "scratch" / "class.sqlite")
    try:
        assert list(found.submissions()) == expected.submissions
        assert found.skipped() == expected.skipped and found.ignored() == expected.ignored
        assert found.count() == len(expected.submissions)
        notebooks_first = sorted(expected.submissions, key=lambda s: (s.path.suffix != ".ipynb", s.student))
        assert found.enqueue(found.submissions(notebooks_first=True)) == len(notebooks_first)
        assert list(found.queued()) == notebooks_first
    finally:
        found.close()
    assert (tmp_path / "scratch" / "class.sqlite").stat().st_mode & 0o077 == 0  # it names every student's file
    assert (tmp_path / "scratch").stat().st_mode & 0o077 == 0


def test_the_class_list_reads_a_large_class_back_a_page_at_a_time(tmp_path):
    folder = tmp_path / "class"
    folder.mkdir()
    students = [f"s{n:04d}" for n in range(600)]  # more than two pages
    for student in students:
        (folder / f"{student}.py").write_text("")
    found = ClassList.find(folder, None, tmp_path / "scratch" / "class.sqlite")
    try:
        assert [s.student for s in found.submissions()] == students
        assert found.enqueue(s for s in found.submissions() if re.search(r"[02468]$", s.student)) == 300
        assert [s.student for s in found.queued()] == students[::2]
    finally:
        found.close()


def test_exports_of_an_earlier_abgrade_keep_their_students_in_a_table(tmp_path):
    """A schema 6 gradebook's `exports` JSON held every student and name; opening it moves
    them to `export_students` (schema 7), so a publish reads them a row at a time."""
    path = tmp_path / "gradebook.sqlite"
    Gradebook(path).close()
    old = {"students": ["ann", "bob"], "names": {"ann": "Ann A"}, "skipped": [], "show_hidden": True}
    with closing(sqlite3.connect(path)) as db, db:
        db.execute("INSERT INTO exports VALUES ('tree', ?, 'then')", (json.dumps(old),))
        db.execute("UPDATE meta SET value = '6' WHERE key = 'schema_version'")
    book = Gradebook(path)
    try:
        assert book.db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == ("7",)
        assert book.export_context("tree") == ExportContext((), True)
        rows = book.db.execute("SELECT student, name FROM export_students WHERE lab = 'tree' ORDER BY student")
        assert rows.fetchall() == [("ann", "Ann A"), ("bob", "")]
    finally:
        book.close()


@pytest.mark.skipif(detect_isolation().level != "namespaces", reason="this machine does not allow namespaces (unshare)")
def test_no_student_reads_the_class_list(tmp_path, tree_spec):
    """The class list names every student's file: a student's process can't read it (it
    is hidden like the class folder, and mode 0600 in a 0700 folder)."""
    folder = tmp_path / "class"
    folder.mkdir()
    solution = (PROJECT / "reference" / "solutions" / "tree.py").read_text()
    probe = (  # a file it can read fails its load: the score says whether it could
        "import glob, pathlib\n"
        f"for target in glob.glob({tempfile.gettempdir()!r} + '/abgrade-batch-*/class/*'):\n"
        "    try:\n        pathlib.Path(target).read_bytes()\n    except OSError:\n        continue\n"
        "    raise SystemExit('READ ' + target)\n"
    )
    (folder / "mallory.py").write_text(probe + solution)
    options = BatchOptions(folder, tmp_path / "out", 1, seed=SEED)
    run_batch(options, get_lab("tree"), tree_spec, io.StringIO())
    book = Gradebook(options.out / "gradebook.sqlite")
    try:
        [grade] = book.grades("tree")
    finally:
        book.close()
    assert grade.report is not None, grade.error
    assert grade.report.score == grade.report.max_score, [t.output for t in grade.report.tests if not t.passed]


def test_the_job_queue_looks_ahead_no_further_than_it_is_asked():
    """A grader process that asks for its next job ahead gets one only while at least as
    many wait as there are workers; the queue reads that many from the class, not all of it,
    and a job given back is next in line."""
    read: list[str] = []

    def jobs():
        for name in ("a", "b", "c", "d"):
            read.append(name)
            yield Job(name, Path(name))

    queue = JobQueue(jobs())
    assert queue and read == ["a"]
    assert queue.take_if_waiting(0.0, 2).key == "a" and read == ["a", "b"]
    assert queue.take(0.0).key == "b"
    taken = queue.take_if_waiting(0.0, 2)
    assert taken is not None and taken.key == "c" and read == ["a", "b", "c", "d"]
    assert queue.take_if_waiting(0.0, 2) is None  # one waits, for two workers: none ahead
    queue.give_back(taken)
    assert [queue.take(0.0).key, queue.take(0.0).key] == ["c", "d"] and not queue
