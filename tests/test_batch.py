"""`abgrade batch`: a whole class folder graded in parallel into a SQLite gradebook, with
exports. The fast tests cover each piece (discovery, gradebook, pool, progress, feedback,
summary); the slow ones run real batches of fixture submissions, kill them (SIGKILL,
Ctrl-C) in the middle and resume them."""

from __future__ import annotations

import csv
import html
import io
import os
import re
import shlex
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import xml.etree.ElementTree as ElementTree
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from grader.batch.discovery import Skipped, Submission, compile_id_pattern, discover, file_hash
from grader.batch.exports import feedback_names, publish, write_exports, write_grades_csv, write_recorded_feedback
from grader.batch.feedback import feedback_markdown, fenced
from grader.batch.gradebook import SCHEMA_VERSION, ExportContext, Gradebook, GradeKey, StoredGrade
from grader.batch.lock import GradebookBusy, gradebook_lock
from grader.batch.picture import class_picture
from grader.batch.pool import ATTEMPTS, Job, JobResult, run_jobs
from grader.batch.progress import Progress, clock, eta_seconds
from grader.batch.runner import BatchOptions, needs_grading, resume_advice, run_batch
from grader.batch.scratch import make_run_folder, sweep_stale
from grader.batch.summary import BIN_LABELS, score_bin, summarize
from grader.batch.task import GradeTask, GradingFailed
from grader.labs import get_lab
from grader.registry import check_kinds
from grader.results import VISIBILITIES, GradeReport
from grader.results import TestResult as GradedTest  # (a Test* name would be collected)
from grader.sandbox.identity import grader_is_root
from grader.sandbox.notebook import KernelStartError
from grader.spec import load_spec

from .notebook_builder import notebook_from_py

TESTS = Path(__file__).resolve().parent
PROJECT = TESTS.parent
FIXTURES = TESTS / "fixtures"
SEED = 4242
ID_PATTERN = r"_(?P<id>\d+)_"

CHECK_KINDS = check_kinds()  # the shared kinds and every installed lab's own


# --- helpers ------------------------------------------------------------------------


def write_batch_spec(folder: Path) -> Path:
    """The tight-limits tree spec (three fixed cases, 1 s per case) with three hidden random
    cases and a 3 s budget per submission, so that a hang costs seconds, not minutes."""
    spec = yaml.safe_load((FIXTURES / "specs" / "tree_tight_limits.yaml").read_text())
    spec["limits"] = {"case_seconds": 1, "cell_seconds": 2, "submission_seconds": 3, "memory_mb": 512}
    spec["checks"]["random"] = {"points": 1, "visibility": "hidden"}
    spec["random"] = {
        "count": 3,
        "branching": [1, 3],
        "depth": [2, 4],
        "values": "int",
        "value_range": [-9, 9],
        "tie_rate": 0.3,
        "scale": 1000,
    }
    path = folder / "batch_spec.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    return path


def _as_a_terminal_starts_it() -> None:
    """Ctrl-C must reach the batch as it does from a terminal, even when this test run was
    started in the background (`pytest &`): a shell then starts it with SIGINT and SIGQUIT
    ignored, every process it starts inherits that, and Python leaves an ignored SIGINT
    alone (the batch ran on, deaf to the tests' Ctrl-C)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGQUIT, signal.SIG_DFL)


def abgrade_batch(
    folder: Path, out: Path, *extra: object, spec: Path | None = None, lab: str = "tree", popen: bool = False
):
    args = [
        sys.executable,
        "-m",
        "grader",
        "batch",
        str(folder),
        "--lab",
        lab,
        "--out",
        str(out),
        *(["--spec", str(spec)] if spec else []),
        *map(str, extra),
    ]
    if popen:
        return subprocess.Popen(
            args,
            cwd=PROJECT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
            preexec_fn=_as_a_terminal_starts_it,
        )
    return subprocess.run(args, cwd=PROJECT, capture_output=True, text=True, timeout=300)


def rows(out: Path, query: str, *params: object) -> list[tuple]:
    with closing(sqlite3.connect(out / "gradebook.sqlite", timeout=30)) as db:
        return db.execute(query, params).fetchall()


def scores(out: Path) -> dict[str, tuple[str, float | None]]:
    return {s: (status, score) for s, status, score in rows(out, "SELECT student, status, score FROM submissions")}


def wait_for_rows(out: Path, count: int, process: subprocess.Popen, timeout: float = 120) -> None:
    """Poll the gradebook (WAL: readers don't block the batch) until it holds `count` rows."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert process.poll() is None, process.communicate()
        if (out / "gradebook.sqlite").exists():
            try:
                found = rows(out, "SELECT count(*) FROM submissions")[0][0]
            except sqlite3.OperationalError:  # tables not created yet
                found = 0
            if found >= count:
                return
        time.sleep(0.1)
    raise AssertionError(f"the gradebook never reached {count} rows")


def assert_consistent(out: Path, tests_per_student: dict[str, int]) -> None:
    """Integrity holds, and every stored submission has all of its tests (no half rows)."""
    assert rows(out, "PRAGMA integrity_check") == [("ok",)]
    assert rows(out, "PRAGMA foreign_key_check") == []
    counts = dict(rows(out, "SELECT student, count(*) FROM tests GROUP BY student"))
    for student, status in rows(out, "SELECT student, status FROM submissions"):
        assert status == "graded"
        assert counts.get(student) == tests_per_student[student], student


def report_of(tests: list[GradedTest]) -> GradeReport:
    return GradeReport(lab="tree", submission="x.py", tests=tests)


def stored(student: str, tests: list[GradedTest]) -> StoredGrade:
    return StoredGrade(student, f"{student}.py", "graded", 1, SEED, 0.5, "now", report_of(tests))


# --- discovery ----------------------------------------------------------------------


def test_discovery_takes_files_and_folders_and_reports_the_rest(tmp_path):
    (tmp_path / "ann.py").write_text("x = 1\n")
    (tmp_path / "bob").mkdir()
    (tmp_path / "bob" / "lab.ipynb").write_text("{}")
    (tmp_path / "bob" / "helpers.py").write_text("")  # a notebook wins over helpers
    (tmp_path / "bob" / ".ipynb_checkpoints").mkdir()
    (tmp_path / "bob" / ".ipynb_checkpoints" / "lab-checkpoint.ipynb").write_text("{}")
    (tmp_path / "cy").mkdir()
    (tmp_path / "cy" / "nested").mkdir()
    (tmp_path / "cy" / "nested" / "lab.py").write_text("")  # one .py anywhere inside
    (tmp_path / "dee").mkdir()
    (tmp_path / "dee" / "a.ipynb").write_text("{}")
    (tmp_path / "dee" / "b.ipynb").write_text("{}")
    (tmp_path / "empty").mkdir()
    (tmp_path / "notes.txt").write_text("")
    (tmp_path / ".DS_Store").write_text("")

    found = discover(tmp_path)

    assert [(s.student, s.shown) for s in found.submissions] == [
        ("ann", "ann.py"),
        ("bob", "bob/lab.ipynb"),
        ("cy", "cy/nested/lab.py"),
    ]
    assert found.submissions[0].file_hash == file_hash(tmp_path / "ann.py")
    assert [(s.student, s.reason) for s in found.skipped] == [
        ("dee", "folder with 2 .ipynb files (a.ipynb, b.ipynb); leave exactly one"),
        ("empty", "folder without a .py or .ipynb file"),
    ]
    assert found.ignored == [
        ".DS_Store: not a submission",
        "notes.txt: not a submission (expected .py or .ipynb, or a folder per student)",
    ]


def test_id_pattern_reads_lms_names_and_refuses_to_guess_between_two_files(tmp_path):
    for name in ("smith_john_12345_lab.ipynb", "doe_jane_23456_lab.py", "doe_jane_23456_lab-1.py", "notes_lab.py"):
        (tmp_path / name).write_text("")
    (tmp_path / "roe_rick_34567_assignsubmission_file_").mkdir()
    (tmp_path / "roe_rick_34567_assignsubmission_file_" / "tree.py").write_text("")

    found = discover(tmp_path, compile_id_pattern(ID_PATTERN))

    assert {s.student: (s.shown, s.name) for s in found.submissions} == {
        "12345": ("smith_john_12345_lab.ipynb", "smith john"),
        "34567": ("roe_rick_34567_assignsubmission_file_/tree.py", "roe rick"),
    }
    assert any(p.startswith("notes_lab.py: name does not match --id-pattern") for p in found.problems)
    assert any("'23456' has 2 submissions" in p for p in found.problems)
    assert [s.student for s in found.skipped] == ["23456", "notes_lab"]  # each student keeps a row


def test_lms_resubmissions_resolve_to_the_highest_submission_number(tmp_path):
    """Canvas: `<name>[_late]_<student id>_<submission id>_<file>`; a resubmission gets a
    higher submission id (and often `-1` in the file name)."""
    for name in (
        "smith_john_10001_65001_lab-1.py",
        "smith_john_10001_65002_lab-1.py",
        "smith_john_late_10001_65003_lab-1.py",
        "smith_john_10001_65004_report.pdf",
        "doe_jane_10002_65010_lab.py",
        "README.txt",
    ):
        (tmp_path / name).write_text("")
    found = discover(tmp_path, compile_id_pattern(ID_PATTERN))
    assert [(s.student, s.name, s.shown) for s in found.submissions] == [
        ("10001", "smith john", "smith_john_late_10001_65003_lab-1.py"),
        ("10002", "doe jane", "doe_jane_10002_65010_lab.py"),
    ]
    assert found.skipped == []
    assert sorted(found.ignored) == [
        "README.txt: not a submission (expected .py or .ipynb, or a folder per student)",
        "smith_john_10001_65001_lab-1.py: an older submission of student '10001' "
        "(the latest is smith_john_late_10001_65003_lab-1.py)",
        "smith_john_10001_65002_lab-1.py: an older submission of student '10001' "
        "(the latest is smith_john_late_10001_65003_lab-1.py)",
        "smith_john_10001_65004_report.pdf: not a submission (expected .py or .ipynb) "
        "(another file of student '10001')",
    ]


def test_symlinks_are_refused_and_never_read(tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("SECRET-TOKEN-123\n")
    folder = tmp_path / "class"
    folder.mkdir()
    (folder / "eve.py").symlink_to(secret)
    (folder / "mal").mkdir()
    (folder / "mal" / "lab.py").symlink_to(secret)
    (folder / "linkdir").symlink_to(tmp_path)
    found = discover(folder)
    assert found.submissions == []
    assert [(s.student, s.reason) for s in found.skipped] == [
        ("eve", "symlink: refused"),
        ("linkdir", "symlink: refused"),
        ("mal", "symlink: refused (lab.py)"),
    ]


def test_control_characters_in_file_names_are_made_visible(tmp_path):
    (tmp_path / "ann\n[2 of 2] bob: 63 of 63.py").write_text("")
    (tmp_path / b"b\xffd.py".decode("utf-8", "surrogateescape")).write_text("")
    found = discover(tmp_path)
    assert [s.student for s in found.submissions] == ["ann\\x0a[2 of 2] bob: 63 of 63", "b\ufffdd"]


@pytest.mark.parametrize("pattern", [r"(\d+)", r"(?P<id>\d+", r"(?P<student>\d+)"])
def test_id_pattern_must_compile_and_name_a_group_id(pattern):
    with pytest.raises(ValueError, match="--id-pattern"):
        compile_id_pattern(pattern)


# --- progress -----------------------------------------------------------------------


def test_eta_follows_the_throughput_of_all_workers():
    assert eta_seconds(0, 30, 5.0) is None
    assert eta_seconds(10, 30, 20.0) == pytest.approx(40.0)
    assert eta_seconds(30, 30, 60.0) == 0


def test_eta_counts_the_jobs_still_running():
    # 28 finished in 18 s (0.6 s each); the last one has run 20 s of its 180 s deadline
    assert eta_seconds(28, 29, 38.0, running=[20.0], mean=0.6, limit=180) == pytest.approx(20.0)
    assert eta_seconds(28, 29, 38.0, running=[170.0], mean=0.6, limit=180) == pytest.approx(10.0)
    assert eta_seconds(28, 29, 18.3, running=[0.2], mean=0.6, limit=180) == pytest.approx(0.4)
    log = io.StringIO()
    progress = Progress(2, log, live=False, limit=180)
    progress.tick([30.0, 40.0])
    progress.finished("ann", "1/2", seconds=30.0)
    assert "ETA 0:40" in log.getvalue()  # bob's job still runs: not 0:00
    assert (clock(None), clock(65), clock(3725)) == ("?", "1:05", "1:02:05")


def test_progress_redraws_one_line_on_a_terminal_and_writes_lines_elsewhere():
    terminal, log = io.StringIO(), io.StringIO()
    for stream, live in ((terminal, True), (log, False)):
        progress = Progress(2, stream, live)
        progress.tick([0.5, 0.5])
        progress.finished("ann", "17/21")
        progress.close()
    assert terminal.getvalue().count("\r") == 2 and "1/2 [" in terminal.getvalue()
    assert terminal.getvalue().endswith("\n") and "ETA" in terminal.getvalue()
    assert log.getvalue().startswith("[1/2] ann: 17/21  (0:00 elapsed, ETA ")


# --- gradebook ----------------------------------------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=6,
)
graded_tests = st.builds(
    GradedTest,
    name=st.text(max_size=20),
    kind=st.sampled_from(CHECK_KINDS),
    max_score=st.floats(min_value=0, max_value=100, allow_nan=False),
    passed=st.booleans(),
    output=st.text(max_size=50),
    visibility=st.sampled_from(VISIBILITIES),
    case=st.none() | st.text(max_size=10),
    diagnoses=st.lists(st.text(max_size=10), max_size=3),
    details=st.none() | st.dictionaries(st.text(max_size=5), json_values, max_size=3),
)


def submission(tmp_path: Path, student: str = "ann", text: str = "x = 1\n") -> Submission:
    path = tmp_path / f"{student}.py"
    path.write_text(text)
    return Submission(student, path, file_hash(path), path.name)


@settings(max_examples=40, deadline=None)
@given(tests=st.lists(graded_tests, max_size=6))
def test_gradebook_gives_back_exactly_the_tests_it_stored(tmp_path_factory, tree_spec, tests):
    folder = tmp_path_factory.mktemp("book")
    book = Gradebook(folder / "gradebook.sqlite")
    run = book.start_run(tree_spec, SEED, 2, folder)
    book.record_report(run, tree_spec, SEED, submission(folder), report_of(tests), 1.5)
    [grade] = book.grades("tree", ["ann"])
    book.close()
    assert grade.status == "graded" and grade.report.tests == tests
    assert grade.report.score == pytest.approx(sum(t.score for t in tests))


def test_gradebook_is_wal_and_a_failed_write_leaves_the_old_grade_whole(tmp_path, tree_spec):
    book = Gradebook(tmp_path / "gradebook.sqlite")
    assert book.db.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    run = book.start_run(tree_spec, SEED, 1, tmp_path)
    ann = submission(tmp_path)
    good = [GradedTest("seed: value", "value", 2, True), GradedTest("seed: nodes", "nodes", 1, False)]
    book.record_report(run, tree_spec, SEED, ann, report_of(good), 1.0)
    unstorable = [GradedTest("seed: value", "value", 2, True, details={"nodes": {"a0"}})]  # a set: not JSON
    with pytest.raises(TypeError):
        book.record_report(run, tree_spec, SEED, ann, report_of(good + unstorable), 1.0)
    [grade] = book.grades("tree", ["ann"])
    assert grade.report.tests == good


def test_only_missing_changed_errored_or_stale_submissions_need_grading(tmp_path, tree_spec):
    book = Gradebook(tmp_path / "gradebook.sqlite")
    run = book.start_run(tree_spec, SEED, 1, tmp_path)
    ann, bob, cy, dee = (submission(tmp_path, name) for name in ("ann", "bob", "cy", "dee"))
    for graded in (ann, bob):
        book.record_report(run, tree_spec, SEED, graded, report_of([]), 1.0)
    book.record_error(run, tree_spec, SEED, cy, "KernelStartError: no kernel", 1.0)
    keys = book.valid_keys("tree")
    assert keys == {s.student: GradeKey(s.file_hash, tree_spec.version, tree_spec.digest, SEED) for s in (ann, bob)}
    assert book.last_seed(tree_spec) == SEED

    bob_edited = submission(tmp_path, "bob", "x = 2\n")
    ipynb = Submission("zed", tmp_path / "zed.ipynb", "h", "zed.ipynb")
    current = [ann, bob_edited, cy, dee, ipynb]
    assert [s.student for s in needs_grading(current, keys, tree_spec, SEED, False)] == ["zed", "bob", "cy", "dee"]
    assert len(needs_grading(current, keys, tree_spec, SEED + 1, False)) == 5  # another seed: other hidden cases
    assert len(needs_grading([ann], keys, tree_spec, SEED, True)) == 1  # --regrade


# --- feedback, summary, exports -------------------------------------------------------

FAILED_VISIBLE = GradedTest("seed: pruned", "pruned", 2, False, "You read c4.", diagnoses=["strict_cutoff"])
FAILED_HIDDEN = GradedTest("random 1: random", "random", 1, False, "The tree: SECRET", "hidden", "random 1")
NOT_RUN = [GradedTest(f"{case}: value", "value", 2, False, "not run: no load") for case in ("a", "b", "c")]


def test_feedback_withholds_hidden_details_unless_asked():
    grade = stored("ann", [GradedTest("load", "load", 1, True), FAILED_VISIBLE, FAILED_HIDDEN])
    text = feedback_markdown(grade, "tree")
    assert "**Score: 1 / 4**" in text
    assert "| pruned | 0 | 2 | FAIL |" in text and "| load | 1 | 1 | ok |" in text
    assert "You read c4." in text
    assert "random 1: random (0 / 1)" in text and "SECRET" not in text
    assert "SECRET" in feedback_markdown(grade, "tree", show_hidden=True)


def test_feedback_shares_one_block_among_tests_with_the_same_output():
    text = feedback_markdown(stored("ann", NOT_RUN), "tree")
    assert text.count("not run: no load") == 1
    assert "The same for: b: value (0 / 2), c: value (0 / 2)." in text


def test_fence_survives_backticks_in_the_output():
    block = fenced("a ``` b ```` c")
    assert block.startswith("`````text\n") and block.endswith("\n`````")


def test_feedback_of_an_ungraded_submission_blames_the_machine():
    grade = StoredGrade("ann", "ann.ipynb", "error", 1, SEED, 9.0, "now", None, "KernelStartError: x")
    assert "problem on the grading machine, not in your code" in feedback_markdown(grade, "tree")


def test_summary_bins_scores_and_counts_students_per_failing_check_and_diagnosis():
    assert [score_bin(s, 20) for s in (0, 1.9, 2, 14, 19.99, 20)] == [0, 0, 1, 7, 9, 10]
    assert BIN_LABELS[score_bin(5, 0)] == "100%"
    grades = [
        stored("ann", [FAILED_VISIBLE, GradedTest("load", "load", 2, True)]),
        stored("bob", [FAILED_VISIBLE, FAILED_HIDDEN]),
        stored("cy", [GradedTest("load", "load", 2, True)]),
        StoredGrade("dee", "dee.py", "error", 1, SEED, 1.0, "now", None, "the grader process died"),
    ]
    summary = summarize("tree", grades)
    assert summary.scores == [(2, 4), (0, 3), (2, 2)]
    assert dict(summary.histogram)["50-59%"] == 1 and dict(summary.histogram)["100%"] == 1
    assert summary.failing_checks == [("seed: pruned", 2), ("random 1: random", 1)]
    assert summary.diagnoses == [("strict_cutoff", 2)]
    assert summary.errors == [("dee", "the grader process died")]


def test_exports_write_csv_feedback_and_a_well_formed_svg(tmp_path):
    grades = [
        stored("ann/<1>", [FAILED_VISIBLE, GradedTest("load", "load", 1, True)]),
        StoredGrade("bob", "bob.py", "error", 1, SEED, 1.0, "now", None, "the grader process died"),
    ]
    summary = summarize("tree", grades)
    write_exports(grades, summary, {"strict_cutoff": "cut at >="}, tmp_path, show_hidden=False)

    ann = feedback_names(["ann/<1>"])["ann/<1>"]
    with (tmp_path / "grades.csv").open() as handle:
        table = list(csv.DictReader(handle))
    assert table[0] == {
        "student": "ann/<1>",
        "name": "",
        "file": "ann/<1>.py",
        "status": "graded",
        "score": "1",
        "max_score": "3",
        "submitted_at": "",
        "time_source": "",
        "days_late": "",
        "penalty": "",
        "override": "",
        "final": "1",
        "load": "1",
        "load_max": "1",
        "pruned": "0",
        "pruned_max": "2",
        "feedback": f"feedback/{ann}",
        "reason": "",
        "override_reason": "",
    }
    assert (table[1]["status"], table[1]["score"], table[1]["reason"]) == ("error", "", "the grader process died")
    # an HTML report for each graded student; the ungraded one gets the Markdown note only
    assert sorted(p.name for p in (tmp_path / "feedback").iterdir()) == [ann[:-3] + ".html", ann, "bob.md"]
    assert "seed: pruned" in (tmp_path / "feedback" / ann).with_suffix(".html").read_text()
    svg = ElementTree.fromstring((tmp_path / "summary.svg").read_text())
    texts = [t.text for t in svg.iter("{http://www.w3.org/2000/svg}text")]
    assert "seed: pruned" in texts and "100%" in texts
    assert "strict_cutoff" in (tmp_path / "summary.txt").read_text()


def test_feedback_written_as_a_grade_is_recorded_is_the_end_s_and_the_end_skips_it(tmp_path, tree_spec):
    """A batch writes each student's feedback as their grade is recorded; its end's publish
    leaves the students of that run alone (`written_by`) and writes the others (an earlier
    run's), byte for byte what it would have written itself."""
    out = tmp_path / "out"
    book = Gradebook(tmp_path / "gradebook.sqlite")
    earlier = book.start_run(tree_spec, SEED, 1, tmp_path)
    book.record_report(earlier, tree_spec, SEED, submission(tmp_path, "ann"), report_of([FAILED_VISIBLE]), 1.0)
    run = book.start_run(tree_spec, SEED, 1, tmp_path)
    book.record_report(run, tree_spec, SEED, submission(tmp_path, "bob"), report_of([FAILED_HIDDEN]), 1.0)
    book.record_error(run, tree_spec, SEED, submission(tmp_path, "cy"), "KernelStartError: no kernel", 1.0)
    for student in ("bob", "cy"):
        write_recorded_feedback(book, "tree", student, out, False, {})
    streamed = {p.name: p.read_bytes() for p in (out / "feedback").iterdir()}
    assert sorted(streamed) == ["bob.html", "bob.md", "cy.md"]
    book.save_export_context("tree", ExportContext(), [("ann", ""), ("bob", ""), ("cy", "")])
    for path in (out / "feedback").iterdir():
        path.unlink()
    publish(book, "tree", out, {}, written_by=run)
    assert sorted(p.name for p in (out / "feedback").iterdir()) == ["ann.html", "ann.md"]
    publish(book, "tree", out, {})
    assert {name: (out / "feedback" / name).read_bytes() for name in streamed} == streamed
    book.close()


def test_feedback_names_are_safe_distinct_short_and_stable():
    long_id = "x" * 251
    ids = ["a b", "a_b", "../x", "", "Ann", "ann", ".", "10001", long_id, "x" * 252]
    names = feedback_names(ids)
    assert len(set(names.values())) == len(ids)
    assert (names["a_b"], names["ann"], names["10001"]) == ("a_b.md", "ann.md", "10001.md")  # plain ids stay
    assert re.fullmatch(r"a_b~[0-9a-f]{12}\.md", names["a b"])
    assert re.fullmatch(r"_x~[0-9a-f]{12}\.md", names["../x"])
    assert re.fullmatch(r"ann~[0-9a-f]{12}\.md", names["Ann"])  # no clash with ann.md on macOS
    assert all(len(n.encode()) <= 80 and "/" not in n and not n.startswith(".") for n in names.values())
    assert feedback_names(list(reversed(ids))) == names  # stable: only the id decides


def test_grades_csv_has_a_row_per_student_and_neutralises_formulas(tmp_path):
    formula_test = GradedTest("seed: value", "value", 2, False)
    grades = [
        stored('=HYPERLINK("http://x")', [formula_test, GradedTest("load", "load", 1, True)]),
        StoredGrade("@SUM(A1)", "@SUM(A1).ipynb", "error", 1, SEED, 1.0, "now", None, "-1+1 kernel", True),
        StoredGrade("bob", "bob.py", "error", 1, SEED, 1.0, "now", None, "grading this file failed: X", False),
    ]
    skipped = [Skipped("10003", "roe_10003_65001_lab.py, roe_10003_lab.py", "+two submissions", "\troe rick")]
    write_grades_csv(grades, tmp_path / "grades.csv", {"bob": "smith bob"}, skipped)
    with (tmp_path / "grades.csv").open(newline="") as handle:
        table = list(csv.reader(handle))
    header = table[0]
    assert header == [
        "student",
        "name",
        "file",
        "status",
        "score",
        "max_score",
        "submitted_at",
        "time_source",
        "days_late",
        "penalty",
        "override",
        "final",
        "load",
        "load_max",
        "value",
        "value_max",
        "feedback",
        "reason",
        "override_reason",
    ]
    by_student = {row[0]: dict(zip(header, row)) for row in table[1:]}
    assert set(by_student) == {'\'=HYPERLINK("http://x")', "'@SUM(A1)", "bob", "10003"}
    graded = by_student['\'=HYPERLINK("http://x")']
    assert (graded["status"], graded["score"], graded["max_score"], graded["value"]) == ("graded", "1", "3", "0")
    assert graded["file"] == '\'=HYPERLINK("http://x").py'
    machine = by_student["'@SUM(A1)"]
    assert (machine["status"], machine["score"], machine["reason"]) == ("error", "", "'-1+1 kernel")
    assert (by_student["bob"]["name"], by_student["bob"]["feedback"]) == ("smith bob", "feedback/bob.md")
    assert by_student["10003"] == {
        **by_student["10003"],
        "status": "skipped",
        "name": "'\troe rick",
        "reason": "'+two submissions",
        "feedback": "",
        "score": "",
    }


def test_feedback_markdown_escapes_every_student_string():
    evil = "<img src=x onerror=alert(1)> *bold* [link](http://e.vil) # h\n# forged"
    grade = StoredGrade(
        evil, f"{evil}.py", "graded", 1, SEED, 0.5, "now", report_of([GradedTest("load", "load", 1, True)])
    )
    text = feedback_markdown(grade, "tree")
    heading = text.splitlines()[0]
    assert heading.startswith("# abgrade feedback: &lt;img src=x onerror=alert\\(1\\)&gt; \\*bold\\* ")
    assert "<img" not in text and "[link](" not in text and "\n# forged" not in text
    assert [line for line in text.splitlines() if line.startswith("#")] == [heading]


def test_feedback_of_a_submission_the_grader_failed_on_gives_the_reason():
    grade = StoredGrade(
        "ann",
        "ann.ipynb",
        "error",
        1,
        SEED,
        9.0,
        "now",
        None,
        "grading this file failed: RecursionError: too deep",
        machine=False,
    )
    text = feedback_markdown(grade, "tree")
    assert "grading machine" not in text and "RecursionError: too deep" in text


def test_gradebook_of_schema_1_is_migrated_and_keeps_its_grades(tmp_path, tree_spec):
    path = tmp_path / "gradebook.sqlite"
    book = Gradebook(path)
    run = book.start_run(tree_spec, SEED, 1, tmp_path)
    book.record_report(
        run, tree_spec, SEED, submission(tmp_path), report_of([GradedTest("load", "load", 1, True)]), 1.0
    )
    book.close()
    with closing(sqlite3.connect(path)) as db:  # make it what schema 1 wrote
        db.executescript("""
            PRAGMA foreign_keys=OFF;
            CREATE TABLE runs_1 (id INTEGER PRIMARY KEY AUTOINCREMENT, lab TEXT NOT NULL,
                spec_version TEXT NOT NULL, spec_digest TEXT NOT NULL, seed INTEGER NOT NULL, jobs INTEGER NOT NULL,
                folder TEXT NOT NULL, started TEXT NOT NULL, ended TEXT, status TEXT NOT NULL DEFAULT 'running'
                CHECK (status IN ('running', 'complete', 'interrupted')));
            INSERT INTO runs_1 SELECT id, lab, spec_version, spec_digest, seed, jobs, folder, started, ended, status
                FROM runs;
            DROP TABLE runs; ALTER TABLE runs_1 RENAME TO runs;
            ALTER TABLE submissions DROP COLUMN machine;
            ALTER TABLE submissions DROP COLUMN notes;
            ALTER TABLE tests DROP COLUMN not_run;
            ALTER TABLE submissions DROP COLUMN name;
            DROP TABLE penalties; DROP TABLE overrides; DROP TABLE override_log; DROP TABLE exports;
            UPDATE meta SET value = '1';""")
    book = Gradebook(path)
    assert book.mark_killed() == [run]
    assert book.db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == (SCHEMA_VERSION,)
    assert book.db.execute("SELECT status FROM runs").fetchall() == [("killed",)]
    [grade] = book.grades("tree", ["ann"])
    assert grade.report.score == 1 and book.db.execute("PRAGMA foreign_key_check").fetchall() == []
    book.close()


def test_resume_advice_after_an_interrupted_regrade_keeps_the_seed(tmp_path):
    plain = BatchOptions(tmp_path, tmp_path / "out", 2, command=("abgrade", "batch", "subs", "--lab", "tree"))
    assert resume_advice(plain, 77) == "the same command grades the rest"
    regrade = BatchOptions(
        tmp_path,
        tmp_path / "out",
        2,
        regrade=True,
        command=("abgrade", "batch", "my subs", "--lab", "tree", "--regrade"),
    )
    assert resume_advice(regrade, 77) == (
        "to grade the rest with the same seed, run: abgrade batch 'my subs' --lab tree --seed 77"
    )


@dataclass
class FailingTask(GradeTask):
    """Grading that leaves a temporary folder behind, then raises `error`."""

    error: Exception | None = None
    made: list[Path] | None = None

    def grade(self, path: Path) -> GradeReport:
        self.made.append(Path(tempfile.mkdtemp(prefix="abgrade-")))  # like a session's work folder
        raise self.error


def test_only_machine_problems_leave_the_task_and_no_attempt_leaks_a_folder(tmp_path, tree_spec):
    made: list[Path] = []
    before = tempfile.tempdir
    crash = FailingTask("tree", tree_spec, SEED, temp_root=tmp_path, error=RecursionError("too deep"), made=made)
    assert crash(tmp_path / "a.ipynb") == GradingFailed("grading this file failed: RecursionError: too deep")
    kernel = FailingTask("tree", tree_spec, SEED, temp_root=tmp_path, error=KernelStartError("busy"), made=made)
    with pytest.raises(KernelStartError):
        kernel(tmp_path / "a.ipynb")
    assert len(made) == 2 and all(folder.parent.parent == tmp_path and not folder.exists() for folder in made)
    assert list(tmp_path.iterdir()) == [] and tempfile.tempdir == before


def test_stale_run_folders_of_dead_runs_are_swept(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    mine = make_run_folder()
    dead = subprocess.Popen(["true"])
    dead.wait()
    stale = tmp_path / f"abgrade-batch-{dead.pid}-x"
    (stale / "j-1" / "abgrade-k-1").mkdir(parents=True)
    (stale / "owner").write_text(f"{dead.pid} 12345\n")
    reused = tmp_path / f"abgrade-batch-{os.getpid()}-y"  # our pid, but another process's start time
    reused.mkdir()
    (reused / "owner").write_text(f"{os.getpid()} 1\n")
    foreign = tmp_path / "abgrade-batch-unknown"
    foreign.mkdir()
    assert sorted(sweep_stale()) == sorted([stale, reused])
    assert mine.exists() and foreign.exists() and not stale.exists()


def test_a_second_run_refuses_while_the_lock_is_held(tmp_path):
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_LOCK, str(tmp_path / "out")], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout.readline() == "locked\n"
        with pytest.raises(GradebookBusy) as refused, gradebook_lock(tmp_path / "out", wait=0.3):
            pass
        assert str(refused.value) == (
            f"{tmp_path / 'out' / 'gradebook.lock'}: another abgrade batch (pid "
            f"{holder.pid}) is grading into this folder; wait until it ends (or stop "
            "it), then run again"
        )
    finally:
        holder.kill()
        holder.wait()
    with gradebook_lock(tmp_path / "out", wait=5):  # the kernel released it with its holder
        assert (tmp_path / "out" / "gradebook.lock").read_text() == f"{os.getpid()}\n"


HOLD_LOCK = """
import sys, time
from pathlib import Path
from grader.batch.lock import gradebook_lock
with gradebook_lock(Path(sys.argv[1])):
    print("locked", flush=True)
    time.sleep(60)
"""


def test_picture_escapes_names_and_draws_one_bar_per_failing_check():
    summary = summarize("tree", [stored("ann", [GradedTest("<&> case: value", "value", 1, False)])])
    svg = ElementTree.fromstring(class_picture(summary))
    bars = [r for r in svg.iter("{http://www.w3.org/2000/svg}rect") if r.get("fill") == "#c0504d"]
    assert len(bars) == 1


# --- the pool -------------------------------------------------------------------------


@dataclass
class ScriptedTask:
    """A stand-in for grading whose behaviour is the job's file name: `die` kills its
    worker (`die-once` only on the first attempt), `raise-once` raises like a kernel that
    can't start, `hang` never returns; anything else returns the name."""

    marks: Path

    def __call__(self, path: Path) -> str:
        first = not (self.marks / path.name).exists()
        (self.marks / path.name).touch()
        if path.name == "die" or (path.name == "die-once" and first):
            os.kill(os.getpid(), signal.SIGKILL)
        if path.name == "raise-once" and first:
            raise KernelStartError("could not start a Jupyter kernel: busy")
        if path.name == "hang":
            time.sleep(600)
        return path.name.upper()


@pytest.mark.timing
def test_pool_survives_workers_that_die_raise_or_hang(tmp_path):
    """The deadline counts from the job's dispatch, a new worker's start included: 30 s
    holds for a job that returns at once on a busy machine (5 s did not, with every core
    busy and a fork server importing the grader), and the hanging one costs that much."""
    names = ["ok-1", "die-once", "raise-once", "die", "hang", "ok-2"]
    results: dict[str, JobResult] = {}
    run_jobs(
        [Job(n, tmp_path / n) for n in names],
        ScriptedTask(tmp_path),
        workers=2,
        deadline=30.0,
        on_result=lambda r: results.setdefault(r.job.key, r),
    )
    assert set(results) == set(names)
    for name in ("ok-1", "ok-2", "die-once", "raise-once"):
        assert (results[name].value, results[name].failure) == (name.upper(), None), results[name]
    assert results["die-once"].job.attempts == 2 and results["raise-once"].job.attempts == 2
    assert results["die"].value is None and "killed by SIGKILL" in results["die"].failure
    assert results["die"].job.attempts == ATTEMPTS
    assert "longer than 30 s" in results["hang"].failure and results["hang"].job.attempts == 1


def test_pool_starts_workers_from_a_fork_server_when_this_process_has_threads(tmp_path):
    stop = threading.Event()
    helper = threading.Thread(target=stop.wait)
    helper.start()
    try:
        results: list[JobResult] = []
        run_jobs([Job(n, tmp_path / n) for n in ("a", "b")], ScriptedTask(tmp_path), 2, 30.0, results.append)
    finally:
        stop.set()
        helper.join()
    assert sorted(r.value for r in results) == ["A", "B"]


# --- real batches (slow) ---------------------------------------------------------------

NOTEBOOK_TWINS = {"12345": "correct_seed_style", "12346": "bug_strict_cutoff", "23456": "hostile_error_after_def"}
TIMING_DEPENDENT = {"hostile_tie_loop"}  # how many of its tied cases hang before the budget runs out varies
SANDBOX_HOSTILE = (
    "kills_parent",
    "sleeping_children",
    "endless_thread",
    "os_exit_at_import",
    "sys_exit_in_call",
    "ignores_sigterm",
    "memory_hog",
)  # from tests/fixtures/hostile
BROKEN = {
    "hostile_import_loop",
    "hostile_exit_at_import",
    "os_exit_at_import",
    "sys_exit_in_call",
    "ignores_sigterm",
    "memory_hog",
}


@dataclass
class ClassFolder:
    folder: Path
    spec: Path
    fixture_of: dict[str, str]  # student id -> fixture name


@pytest.fixture(scope="module")
def tree_class(tmp_path_factory) -> ClassFolder:
    """40-odd tree submissions: every fixture of tests/fixtures/tree and the process-level
    hostile ones of tests/fixtures/hostile as `.py` (LMS-style names `<fixture>_<id>_lab.py`),
    and three notebooks: an LMS download, a second file, and a folder per student with a
    helper `.py` beside the notebook."""
    root = tmp_path_factory.mktemp("class")
    folder = root / "submissions"
    folder.mkdir()
    fixture_of: dict[str, str] = {}
    fixtures = sorted(p for p in (FIXTURES / "tree").glob("*.py") if p.stem not in TIMING_DEPENDENT)
    fixtures += [FIXTURES / "hostile" / f"{name}.py" for name in SANDBOX_HOSTILE]
    for number, py in enumerate(fixtures, start=10001):
        shutil.copyfile(py, folder / f"{py.stem}_{number}_lab.py")
        fixture_of[str(number)] = py.stem
    notebook_from_py(FIXTURES / "tree" / "correct_seed_style.py", folder / "smith_john_12345_lab.ipynb")
    notebook_from_py(FIXTURES / "tree" / "bug_strict_cutoff.py", folder / "roe_rick_12346_lab.ipynb")
    student = folder / "doe_jane_23456_assignsubmission_file_"
    student.mkdir()
    notebook_from_py(FIXTURES / "tree" / "hostile_error_after_def.py", student / "lab.ipynb")
    (student / "helpers.py").write_text("HELP = 1\n")
    fixture_of.update(NOTEBOOK_TWINS)
    assert len(fixture_of) >= 30
    return ClassFolder(folder, write_batch_spec(root), fixture_of)


@pytest.fixture(scope="module")
def uninterrupted(tree_class, tmp_path_factory) -> tuple[Path, subprocess.CompletedProcess]:
    out = tmp_path_factory.mktemp("uninterrupted")
    run = abgrade_batch(
        tree_class.folder, out, "--jobs", 2, "--seed", SEED, "--id-pattern", ID_PATTERN, spec=tree_class.spec
    )
    return out, run


def stored_test_counts(out: Path) -> dict[str, int]:
    return dict(rows(out, "SELECT student, count(*) FROM tests GROUP BY student"))


@pytest.mark.slow
def test_class_batch_grades_every_student_once_in_two_workers(tree_class, uninterrupted):
    out, run = uninterrupted
    assert run.returncode == 0, run.stderr
    graded = scores(out)
    assert set(graded) == set(tree_class.fixture_of)
    assert all(status == "graded" for status, _ in graded.values())
    maximum = rows(out, "SELECT max(max_score) FROM submissions")[0][0]
    for student, fixture in tree_class.fixture_of.items():
        if fixture.startswith("correct_"):
            assert graded[student][1] == maximum, fixture
        if fixture.startswith(("bug_", "load_")) or fixture in BROKEN:
            assert graded[student][1] < maximum, fixture
    twins = {fixture: student for student, fixture in tree_class.fixture_of.items() if student not in NOTEBOOK_TWINS}
    for student, fixture in NOTEBOOK_TWINS.items():  # a notebook grades like its .py twin
        assert graded[student] == graded[twins[fixture]], fixture
    assert rows(out, "SELECT file FROM submissions WHERE student = '23456'") == [
        ("doe_jane_23456_assignsubmission_file_/lab.ipynb",)
    ]
    assert rows(out, "SELECT jobs, seed, status FROM runs") == [(2, SEED, "complete")]
    assert_consistent(out, stored_test_counts(out))

    progress = [line for line in run.stderr.splitlines() if line.startswith("[")]
    assert len(progress) == len(graded) and all("ETA" in line for line in progress)
    assert f"Class summary, lab tree: {len(graded)} graded, 0 not graded" in run.stdout
    assert "most frequent failing checks" in run.stdout


@pytest.mark.slow
def test_class_batch_exports(tree_class, uninterrupted):
    out, _ = uninterrupted
    with (out / "grades.csv").open() as handle:
        table = {row["student"]: row for row in csv.DictReader(handle)}
    assert {s: float(r["score"]) for s, r in table.items()} == {s: v for s, (_, v) in scores(out).items()}
    assert {"value", "value_max", "random", "random_max", "limits"} <= set(next(iter(table.values())))
    assert len(list((out / "feedback").glob("*.md"))) == len(table)
    strict = (out / "feedback" / "12346.md").read_text()
    assert "Likely cause: You cut off only when alpha > beta" in strict
    secrets = rows(out, "SELECT output FROM tests WHERE student = '12346' AND visibility = 'hidden' AND passed = 0")
    assert secrets and all(output not in strict for (output,) in secrets)
    ElementTree.fromstring((out / "summary.svg").read_text())


@pytest.mark.slow
def test_class_summary_names_each_newer_bug_with_its_hint_and_student(tree_class, uninterrupted):
    """The class's misconceptions (the printed summary): the tree lab's four newer classic
    bugs, each with its one-line hint and the student whose file has it."""
    from reference.tree_bugs import DIAGNOSIS_HINTS

    _, run = uninterrupted
    lines = run.stdout.splitlines()
    student_of = {fixture: student for student, fixture in tree_class.fixture_of.items()}
    for bug in ("window_swapped", "window_not_passed", "late_cutoff", "bound_updates_swapped"):
        (at,) = [i for i, line in enumerate(lines) if line.split()[:1] == [bug]]
        assert lines[at].endswith(f"1 student  {DIAGNOSIS_HINTS[bug]}"), lines[at]
        assert lines[at + 1].strip() == student_of[f"bug_{bug}"], lines[at + 1]


@pytest.mark.slow
@pytest.mark.timing
def test_sigkill_in_the_middle_then_resume_grades_only_the_missing(tree_class, uninterrupted, tmp_path):
    reference, _ = uninterrupted
    out = tmp_path / "out"
    args = ("--jobs", 2, "--seed", SEED, "--id-pattern", ID_PATTERN)
    batch = abgrade_batch(tree_class.folder, out, *args, spec=tree_class.spec, popen=True)
    wait_for_rows(out, 8, batch)
    os.killpg(batch.pid, signal.SIGKILL)
    batch.communicate(timeout=30)
    kept = scores(out)
    assert 8 <= len(kept) < len(tree_class.fixture_of)
    assert_consistent(out, stored_test_counts(reference))
    assert rows(out, "SELECT status FROM runs") == [("running",)]  # it never got to say more

    resumed = abgrade_batch(tree_class.folder, out, *args, spec=tree_class.spec)
    assert resumed.returncode == 0, resumed.stderr
    assert f"{len(tree_class.fixture_of) - len(kept)} to grade" in resumed.stderr
    run_ids = dict(rows(out, "SELECT student, run_id FROM submissions"))
    assert {s for s, run_id in run_ids.items() if run_id == 1} == set(kept)
    assert sum(run_id == 2 for run_id in run_ids.values()) == len(tree_class.fixture_of) - len(kept)
    everyone = len(tree_class.fixture_of)
    assert rows(out, "SELECT count(*), count(DISTINCT student) FROM submissions") == [(everyone, everyone)]
    assert scores(out) == scores(reference)


@pytest.mark.slow
@pytest.mark.timing
def test_ctrl_c_leaves_a_consistent_gradebook(tree_class, uninterrupted, tmp_path):
    reference, _ = uninterrupted
    signals: list[str] = []  # the batch's signal masks, for the message if Ctrl-C went unheard
    for attempt in range(3):
        out = tmp_path / f"out{attempt}"
        args = ("--jobs", 1, "--seed", SEED, "--id-pattern", ID_PATTERN)
        batch = abgrade_batch(tree_class.folder, out, *args, spec=tree_class.spec, popen=True)
        wait_for_rows(out, 4, batch)
        if batch.poll() is None:  # a starved test process may find the batch already done: try again
            state = Path(f"/proc/{batch.pid}/status").read_text()
            signals = [line for line in state.splitlines() if line.startswith(("SigBlk", "SigIgn", "SigCgt"))]
            os.killpg(batch.pid, signal.SIGINT)  # what a terminal sends the whole foreground group
        _, stderr = batch.communicate(timeout=60)
        if "interrupted after" in stderr or batch.returncode != 0:
            break
    assert batch.returncode == 130, (signals, stderr)
    assert "interrupted after" in stderr and "Traceback" not in stderr
    assert rows(out, "SELECT status FROM runs") == [("interrupted",)]
    assert_consistent(out, stored_test_counts(reference))
    assert all(scores(reference)[s] == v for s, v in scores(out).items())


@pytest.fixture
def small_class(tmp_path) -> Path:
    folder = tmp_path / "small"
    folder.mkdir()
    for name in ("correct_seed_style", "bug_strict_cutoff", "bug_no_pruning", "correct_negamax"):
        shutil.copyfile(FIXTURES / "tree" / f"{name}.py", folder / f"{name}.py")
    return folder


@pytest.mark.slow
def test_rerun_grades_only_the_edited_submission_and_regrade_forces_all(small_class, tmp_path):
    out, spec = tmp_path / "out", write_batch_spec(tmp_path)
    first = abgrade_batch(small_class, out, "--jobs", 2, spec=spec)
    assert first.returncode == 0 and "4 to grade" in first.stderr
    seed = rows(out, "SELECT seed FROM runs")[0][0]

    assert "0 to grade" in abgrade_batch(small_class, out, spec=spec).stderr
    with (small_class / "bug_no_pruning.py").open("a") as handle:
        handle.write("\n# fixed it? not really\n")
    edited = abgrade_batch(small_class, out, spec=spec)
    assert "1 to grade" in edited.stderr
    assert rows(out, "SELECT student FROM submissions WHERE run_id = 3") == [("bug_no_pruning",)]
    assert {s for (s,) in rows(out, "SELECT DISTINCT seed FROM runs")} == {seed}  # reruns keep the class's seed

    forced = abgrade_batch(small_class, out, "--regrade", spec=spec)
    assert "4 to grade" in forced.stderr
    assert rows(out, "SELECT count(*) FROM submissions WHERE run_id = 4") == [(4,)]
    assert rows(out, "SELECT seed FROM runs WHERE id = 4") != [(seed,)]  # a fresh seed for a regrade

    (tmp_path / "other").mkdir()
    other_spec = write_batch_spec(tmp_path / "other")
    other_spec.write_text(other_spec.read_text() + "# reworded\n")
    assert "4 to grade" in abgrade_batch(small_class, out, spec=other_spec).stderr  # the spec changed


@pytest.mark.slow
@pytest.mark.timing
def test_batch_killed_alone_leaves_no_grader_or_student_process(small_class, tmp_path):
    shutil.copyfile(FIXTURES / "tree" / "hostile_import_loop.py", small_class / "a_loop.py")
    shutil.copyfile(FIXTURES / "tree" / "hostile_import_loop.py", small_class / "b_loop.py")
    out = tmp_path / "out"
    spec = write_batch_spec(tmp_path)
    long = yaml.safe_load(spec.read_text())  # the loops' own limits must not end them first
    long["limits"].update(case_seconds=60, submission_seconds=120)
    spec.write_text(yaml.safe_dump(long, sort_keys=False))
    batch = abgrade_batch(small_class, out, "--jobs", 2, spec=spec, popen=True)
    deadline = time.monotonic() + 120  # two graders and two confined students starting on a busy machine
    # both looping students running, and (as root) already switched to their own uids: a
    # change of uid clears the parent-death signal, and a student once outlived the batch
    while len(students(batch.pid)) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(students(batch.pid)) >= 2, descendants(batch.pid)
    family = {pid: started(pid) for pid in descendants(batch.pid)}
    os.kill(batch.pid, signal.SIGKILL)  # only the batch itself: the rest must follow
    batch.communicate(timeout=30)
    deadline = time.monotonic() + 60  # the wait ends as soon as none is left
    while [p for p, t in family.items() if alive(p, t)] and time.monotonic() < deadline:
        time.sleep(0.1)
    left = [p for p, t in family.items() if alive(p, t)]
    commands = [Path(f"/proc/{p}/cmdline").read_bytes()[:200] for p in left]
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    assert left == [], commands


def students(pid: int) -> list[int]:
    """The descendants running the looping fixture, once confined (another uid, when root)."""
    found = []
    for child in descendants(pid):
        try:
            status = Path(f"/proc/{child}/status").read_text()
            command = Path(f"/proc/{child}/cmdline").read_bytes()
        except OSError:
            continue
        uid = int(status.split("\nUid:", 1)[1].split()[0])
        args = command.split(b"\0")
        student = b"-I" in args and b"-S" in args and b"-c" in args  # the worker's interpreter
        if student and (uid != os.getuid() or not grader_is_root()):
            found.append(child)
    return found


def descendants(pid: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            parent = int(stat.read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(parent, []).append(int(stat.parent.name))
    found, todo = [], [pid]
    while todo:
        kids = children.get(todo.pop(), [])
        found += kids
        todo += kids
    return found


def started(pid: int) -> str | None:
    """The process's start time (clock ticks since boot): with it, a pid that the kernel
    has since given to another process (pids wrap at 32768 here) is not taken for it."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None


def alive(pid: int, start: str | None = None) -> bool:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return False
    if start is not None and fields[19] != start:
        return False  # the same number, another process
    return fields[0] not in ("Z", "X")


@dataclass
class KernelWontStart(GradeTask):
    """Real grading behind a machine that can't start a kernel: on the first attempt at
    each file, or always."""

    marks: Path | None = None
    always: bool = False

    def __call__(self, path: Path) -> GradeReport:
        mark = self.marks / path.name
        if self.always or not mark.exists():
            mark.touch()
            raise KernelStartError("could not start a Jupyter kernel: test")
        return super().__call__(path)


@pytest.mark.slow
def test_kernel_start_failures_are_retried_and_never_the_students_fault(tmp_path, tree_spec, grade):
    folder = tmp_path / "class"
    folder.mkdir()
    for name in ("correct_seed_style", "bug_strict_cutoff"):
        shutil.copyfile(FIXTURES / "tree" / f"{name}.py", folder / f"{name}.py")
    lab, options = get_lab("tree"), BatchOptions(folder, tmp_path / "out", jobs=2, seed=SEED)
    marks = tmp_path / "marks"
    marks.mkdir()

    stuck = run_batch(options, lab, tree_spec, io.StringIO(), KernelWontStart("tree", tree_spec, SEED, marks, True))
    assert sorted(s for s, _ in stuck.summary.errors) == ["bug_strict_cutoff", "correct_seed_style"]
    assert stuck.summary.scores == []
    assert "KernelStartError" in stuck.summary.errors[0][1]
    feedback = (tmp_path / "out" / "feedback" / "correct_seed_style.md").read_text()
    assert "not in your code" in feedback

    shutil.rmtree(marks)
    marks.mkdir()
    flaky = run_batch(options, lab, tree_spec, io.StringIO(), KernelWontStart("tree", tree_spec, SEED, marks))
    assert flaky.graded_now == 2 and flaky.summary.errors == []
    expected = [(grade(name, seed=SEED).score, 75) for name in ("bug_strict_cutoff", "correct_seed_style")]
    assert flaky.summary.scores == expected  # as if the machine had never failed


@pytest.mark.slow
def test_a_strict_courses_batch_and_its_override_speak_the_courses_words(tmp_path):
    """The class summary (printed and summary.txt), the class page, the student's HTML
    feedback and what `gradebook override` rewrites use the hints of the spec's course:
    no_pruning's "alpha > beta" under `cutoff: strict`, never the lab's default ">="."""
    from reference.tree_bugs import hints_for

    spec = yaml.safe_load((PROJECT / "specs" / "examples" / "tree-strict.yaml").read_text())
    spec["random"].update(count=1, shrink={"calls": 1, "seconds": 1})
    spec_file = tmp_path / "strict.yaml"
    spec_file.write_text(yaml.safe_dump(spec, sort_keys=False))
    folder = tmp_path / "class"
    folder.mkdir()
    shutil.copyfile(FIXTURES / "tree" / "bug_no_pruning.py", folder / "ann.py")
    out = tmp_path / "out"
    run = abgrade_batch(folder, out, "--jobs", 1, "--seed", SEED, spec=spec_file)
    assert run.returncode == 0, run.stderr
    strict, inclusive = hints_for(">")["no_pruning"], hints_for(">=")["no_pruning"]
    assert strict != inclusive

    def pages() -> dict[str, str]:
        names = ("summary.txt", "summary.svg", "class.html", "feedback/ann.html")
        return {name: html.unescape((out / name).read_text()) for name in names}

    for name, text in {"stdout": run.stdout, **pages()}.items():
        assert strict in text and inclusive not in text, name
    override = [sys.executable, "-m", "grader", "gradebook", "override", "ann", "--add", "1", "--reason", "style"]
    done = subprocess.run([*override, "--book", str(out)], cwd=PROJECT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    for name, text in pages().items():
        assert strict in text and inclusive not in text, name


def test_negamax_batch(tmp_path):
    folder = tmp_path / "negamax"
    folder.mkdir()
    for name in ("course", "fail_hard", "textbook_fail_soft", "window_not_swapped", "utility_sign_flipped"):
        shutil.copyfile(FIXTURES / "negamax" / f"{name}.py", folder / f"{name}.py")
    run = abgrade_batch(folder, tmp_path / "out", "--jobs", 2, "--seed", SEED, lab="negamax")
    assert run.returncode == 0, run.stderr
    graded = {s: score for s, (_, score) in scores(tmp_path / "out").items()}
    maximum = rows(tmp_path / "out", "SELECT max(max_score) FROM submissions")[0][0]
    assert {s for s, v in graded.items() if v == maximum} == {"course", "fail_hard", "textbook_fail_soft"}
    assert len(graded) == 5


def test_cli_refuses_bad_arguments_with_exit_code_2(tmp_path):
    (tmp_path / "a.py").write_text("")
    for args in ([tmp_path / "missing"], [tmp_path, "--id-pattern", r"(\d+)"], [tmp_path, "--jobs", 0]):
        run = subprocess.run(
            [sys.executable, "-m", "grader", "batch", *map(str, args), "--lab", "tree"],
            cwd=PROJECT,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert run.returncode == 2 and run.stderr.startswith("abgrade: "), run.stderr


# --- real class folders: names, hygiene, locks, failures (slow) -------------------------


def read_csv(path: Path) -> dict[str, dict[str, str]]:
    with path.open(newline="") as handle:
        return {row["student"]: row for row in csv.DictReader(handle)}


@pytest.mark.slow
def test_odd_ids_get_their_own_feedback_and_junk_and_symlinks_are_handled(tmp_path):
    folder, out, spec = tmp_path / "class", tmp_path / "out", write_batch_spec(tmp_path)
    folder.mkdir()
    long_id = "x" * 251
    for student, fixture in (("a b", "correct_seed_style"), ("a_b", "bug_no_pruning"), (long_id, "bug_strict_cutoff")):
        shutil.copyfile(FIXTURES / "tree" / f"{fixture}.py", folder / f"{student}.py")
    (folder / "README.txt").write_text("hand-in instructions\n")
    (folder / ".DS_Store").write_bytes(b"\0\1")
    (folder / "__pycache__").mkdir()
    (folder / "__pycache__" / "a_b.cpython-311.pyc").write_bytes(b"\0")

    first = abgrade_batch(folder, out, "--jobs", 2, spec=spec)
    assert first.returncode == 0, first.stderr  # junk is listed, not counted against the run
    for junk in ("README.txt", ".DS_Store", "__pycache__"):
        assert f"  ignored {junk}: not a submission" in first.stderr
    table = read_csv(out / "grades.csv")
    assert set(table) == {"a b", "a_b", long_id} and {r["status"] for r in table.values()} == {"graded"}
    graded = scores(out)
    for student, row in table.items():
        feedback = (out / row["feedback"]).read_text()
        assert f"**Score: {graded[student][1]:g} / " in feedback  # this student's own result
        assert (out / row["feedback"]).with_suffix(".html").exists()
    assert table["a_b"]["feedback"] == "feedback/a_b.md"
    assert re.fullmatch(r"feedback/a_b~[0-9a-f]{12}\.md", table["a b"]["feedback"])
    assert graded["a b"][1] > graded["a_b"][1]
    assert "# abgrade feedback: a b" in (out / table["a b"]["feedback"]).read_text()

    secret = tmp_path / "secret.txt"
    secret.write_text("TOPSECRET-42 = 1\n")
    (folder / "eve.py").symlink_to(secret)
    second = abgrade_batch(folder, out, spec=spec)
    assert second.returncode == 1
    assert "  skipped eve.py: symlink: refused" in second.stderr
    row = read_csv(out / "grades.csv")["eve"]
    assert (row["status"], row["reason"], row["score"]) == ("skipped", "symlink: refused", "")
    outputs = (
        second.stdout
        + second.stderr
        + "".join(p.read_bytes().decode("utf-8", "replace") for p in out.rglob("*") if p.is_file())
    )
    assert "TOPSECRET" not in outputs


@pytest.mark.slow
@pytest.mark.timing
def test_one_batch_at_a_time_and_a_killed_run_is_marked_and_swept(small_class, tmp_path):
    for name in ("a_loop", "b_loop"):  # each spends its whole (3 s) budget
        shutil.copyfile(FIXTURES / "tree" / "hostile_import_loop.py", small_class / f"{name}.py")
    out, spec = tmp_path / "out", write_batch_spec(tmp_path)
    first = abgrade_batch(small_class, out, "--jobs", 1, spec=spec, popen=True)
    deadline = time.monotonic() + 60
    while not list(Path(tempfile.gettempdir()).glob(f"abgrade-batch-{first.pid}-*")):
        assert time.monotonic() < deadline and first.poll() is None
        time.sleep(0.05)

    second = abgrade_batch(small_class, out, spec=spec)
    assert second.returncode == 2
    assert second.stderr == (
        f"abgrade: {out / 'gradebook.lock'}: another abgrade batch (pid {first.pid}) is "
        "grading into this folder; wait until it ends (or stop it), then run again\n"
    )

    os.killpg(first.pid, signal.SIGKILL)
    first.communicate(timeout=30)
    assert list(Path(tempfile.gettempdir()).glob(f"abgrade-batch-{first.pid}-*"))  # left behind by the kill
    third = abgrade_batch(small_class, out, spec=spec)
    assert third.returncode == 0, third.stderr
    assert "  run 1 was killed before it ended (marked killed)" in third.stderr
    assert rows(out, "SELECT id, status FROM runs") == [(1, "killed"), (2, "complete")]
    assert not list(Path(tempfile.gettempdir()).glob(f"abgrade-batch-{first.pid}-*"))
    assert len(rows(out, "SELECT DISTINCT seed FROM submissions")) == 1
    assert rows(out, "SELECT count(*) FROM submissions WHERE status = 'graded'") == [(6,)]


@dataclass
class CrashesOn(GradeTask):
    """Real grading, except that grading the file named `crash` raises inside the grader."""

    crash: str = ""

    def grade(self, path: Path) -> GradeReport:
        if path.name == self.crash:
            raise RecursionError("maximum recursion depth exceeded while decoding a JSON array")
        return super().grade(path)


@pytest.mark.slow
@pytest.mark.timing
def test_a_failure_on_one_file_is_that_files_result_not_a_machine_problem(tmp_path, tree_spec, monkeypatch):
    private_tmp = tmp_path / "tmp"  # the machine's /tmp is shared with other graders' runs
    private_tmp.mkdir()
    monkeypatch.setenv("TMPDIR", str(private_tmp))
    monkeypatch.setattr(tempfile, "tempdir", None)
    folder = tmp_path / "class"
    folder.mkdir()
    shutil.copyfile(FIXTURES / "tree" / "correct_seed_style.py", folder / "ann.py")
    shutil.copyfile(FIXTURES / "tree" / "hostile_import_loop.py", folder / "loop.py")
    (folder / "deep.ipynb").write_text("[" * 200_000 + "]" * 200_000)  # a notebook of deeply nested JSON
    (folder / "crash.py").write_text("def alphabeta(): pass\n")
    spec = load_spec(write_batch_spec(tmp_path))
    options = BatchOptions(folder, tmp_path / "out", jobs=2, seed=SEED)
    result = run_batch(options, get_lab("tree"), spec, io.StringIO(), CrashesOn("tree", spec, SEED, crash="crash.py"))
    # the loop costs its own load limit only (CPU time: no duration to assert on a busy machine)
    stopped = "the import ran past the time limit of 3 s of CPU time for loading and was interrupted"
    assert stopped in (options.out / "feedback" / "loop.md").read_text()
    assert result.summary.errors == []  # nothing here is the machine's fault
    assert (
        "crash",
        "grading this file failed: RecursionError: maximum recursion depth exceeded while decoding a JSON array",
    ) in result.summary.failed
    # the deep notebook is a load failure once the notebook reader says so; until then, this file's own error
    assert {s for s, _ in result.summary.failed} <= {"crash", "deep"}
    assert {s for (s,) in rows(options.out, "SELECT student FROM submissions WHERE status = 'graded'")} == {
        "ann",
        "loop",
        "deep",
    } - {s for s, _ in result.summary.failed}
    assert "grading machine" not in (options.out / "feedback" / "crash.md").read_text()
    assert read_csv(options.out / "grades.csv")["crash"]["status"] == "error"
    assert list(private_tmp.iterdir()) == []  # no attempt leaked a folder

    again = run_batch(options, get_lab("tree"), spec, io.StringIO(), CrashesOn("tree", spec, SEED, crash="crash.py"))
    assert again.graded_now == 0  # not retried until the file changes


@pytest.mark.slow
def test_the_advice_after_ctrl_c_of_a_regrade_grades_the_rest_with_the_same_seed(tree_class, tmp_path):
    out = tmp_path / "out"
    args = ("--jobs", 2, "--id-pattern", ID_PATTERN, "--regrade")
    batch = abgrade_batch(tree_class.folder, out, *args, spec=tree_class.spec, popen=True)
    wait_for_rows(out, 4, batch)
    os.killpg(batch.pid, signal.SIGINT)
    _, stderr = batch.communicate(timeout=60)
    assert batch.returncode == 130, stderr
    [seed] = [s for (s,) in rows(out, "SELECT seed FROM runs")]
    advice = next(line for line in stderr.splitlines() if line.startswith("abgrade batch: interrupted after"))
    command = shlex.split(advice.split("to grade the rest with the same seed, run: ", 1)[1])
    assert command[:2] == ["abgrade", "batch"] and "--regrade" not in command and command[-2:] == ["--seed", str(seed)]
    kept = len(scores(out))

    rest = subprocess.run(
        [sys.executable, "-m", "grader", *command[1:]], cwd=PROJECT, capture_output=True, text=True, timeout=300
    )
    assert rest.returncode == 0, rest.stderr
    assert f"{len(tree_class.fixture_of) - kept} to grade" in rest.stderr
    assert rows(out, "SELECT DISTINCT seed FROM submissions") == [(seed,)]


@pytest.mark.slow
def test_feedback_names_failing_notebook_cells_even_at_full_marks(tmp_path: Path) -> None:
    """A notebook whose import cell fails but whose search is right: full marks, and the
    feedback (kept in the gradebook, so a resumed run exports it too) says which cell failed."""
    folder, out = tmp_path / "class", tmp_path / "out"
    folder.mkdir()
    notebook_from_py(
        FIXTURES / "tree" / "correct_seed_style.py", folder / "ada.ipynb", before=["import a_module_nobody_has"]
    )
    done = abgrade_batch(folder, out, spec=FIXTURES / "specs" / "tree_minimal.yaml")
    assert done.returncode == 0, done.stdout + done.stderr
    feedback = (out / "feedback" / "ada.md").read_text()
    assert "Every test passed." in feedback
    assert "## While loading your submission" in feedback and "ModuleNotFoundError" in feedback
    again = abgrade_batch(folder, out, spec=FIXTURES / "specs" / "tree_minimal.yaml")  # nothing regraded
    assert again.returncode == 0 and (out / "feedback" / "ada.md").read_text() == feedback


def test_picture_shows_the_diagnoses_with_their_hints_and_skips_tests_that_never_ran():
    """summary.svg draws the likely causes (README: "most frequent failing checks and
    diagnoses"), and a student whose code never loaded adds to `load` only."""
    buggy = GradedTest("seed: pruned", "pruned", 1, False, diagnoses=["strict_cutoff"])
    broken = [GradedTest("load", "load", 1, False), GradedTest("seed: value", "value", 1, False, not_run=True)]
    summary = summarize("tree", [stored("ann", [buggy]), stored("bob", [buggy]), stored("cy", broken)])
    assert summary.failing_checks == [("seed: pruned", 2), ("load", 1)]
    svg = ElementTree.fromstring(class_picture(summary, {"strict_cutoff": "cuts off only when alpha > beta"}))
    causes = [r for r in svg.iter("{http://www.w3.org/2000/svg}rect") if r.get("fill") == "#8064a2"]
    assert len(causes) == 1
    assert causes[0].find("{http://www.w3.org/2000/svg}title").text == (
        "strict_cutoff: 2 students. cuts off only when alpha > beta"
    )
    texts = [t.text for t in svg.iter("{http://www.w3.org/2000/svg}text")]
    assert "Likely causes: classic bugs diagnosed (students)" in texts and "strict_cutoff" in texts


class InProcess:
    """An executor that runs each job in this process, one after the other (the runner's
    bookkeeping alone, without a pool)."""

    workers = 1
    where = "this process"

    def run(self, jobs, task, deadline, on_result, on_tick) -> None:
        for job in jobs:
            on_result(JobResult(job, value=task(job.path), seconds=0.01))


class OnePassedTest:
    def __call__(self, path: Path) -> GradeReport:
        return GradeReport("tree", path.name, [GradedTest("load", "load", 1, True)])


def test_ctrl_c_between_a_grades_row_and_its_progress_line_counts_the_row(tmp_path, tree_spec, monkeypatch):
    """Ctrl-C that lands after the sixth row is written but before its progress line (here:
    while its feedback files are written) says 6 were recorded, as the gradebook holds."""
    import grader.batch.runner as runner

    folder = tmp_path / "class"
    folder.mkdir()
    for number in range(10):
        (folder / f"s{number}.py").write_text("x = 1\n")
    written = runner.write_recorded_feedback
    calls = []

    def interrupted_at_the_sixth(*args, **kwargs):
        calls.append(args)
        if len(calls) == 6:
            raise KeyboardInterrupt
        written(*args, **kwargs)

    monkeypatch.setattr(runner, "write_recorded_feedback", interrupted_at_the_sixth)
    stream = io.StringIO()
    options = BatchOptions(folder, tmp_path / "out", jobs=1, seed=SEED)
    with pytest.raises(KeyboardInterrupt):
        run_batch(options, get_lab("tree"), tree_spec, stream, OnePassedTest(), InProcess())
    assert len(rows(options.out, "SELECT student FROM submissions")) == 6
    assert stream.getvalue().count("\n[") + stream.getvalue().startswith("[") == 5  # five progress lines
    assert "abgrade batch: interrupted after 6 of 10;" in stream.getvalue()
    sixth = options.out / "feedback" / f"{calls[5][2]}.md"
    assert not sixth.exists()  # the interrupt cut its feedback short: the next run's end writes it

    monkeypatch.setattr(runner, "write_recorded_feedback", written)
    again = run_batch(options, get_lab("tree"), tree_spec, io.StringIO(), OnePassedTest(), InProcess())
    assert again.graded_now == 4 and sixth.exists()


class SaysIfTheStudentSeedIsRemembered:
    """Passes its one test when this grader process had the students' seed value derived
    already as it took its first submission (seeding's memo, inherited from the batch process)."""

    def __call__(self, path: Path) -> GradeReport:
        from grader.seeding import _student_seed

        remembered = _student_seed.cache_info().currsize > 0
        return GradeReport("tree", path.name, [GradedTest("remembered", "load", 1, remembered)])


def test_the_grader_processes_of_a_batch_inherit_the_students_seed_value(tmp_path, tree_spec):
    """A secret seed's scrypt (about 0.1 s of a core) is done once, in the batch process
    before its pool forks, not once more in every grader process on its first grading."""
    folder = tmp_path / "class"
    folder.mkdir()
    (folder / "ann.py").write_text("x = 1\n")
    options = BatchOptions(folder, tmp_path / "out", jobs=1, seed=SEED)
    for thread in threading.enumerate():  # a batch before this one (its seed's thread joined on every path)
        if thread.name == "abgrade-student-seed":
            thread.join()
    forked = threading.active_count() == 1  # the pool forks from a process with one thread, else uses a fork server
    run_batch(options, get_lab("tree"), tree_spec, io.StringIO(), SaysIfTheStudentSeedIsRemembered())
    assert scores(options.out) == {"ann": ("graded", 1.0 if forked else 0.0)}
