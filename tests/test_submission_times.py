"""No guessed submission times (issue 22, point 4), from the command line: a class folder
copied with `cp` (every file's time is now, months after the deadline) graded with a
deadline and no times source penalises nobody and says why, listing each student as
"time unknown" in grades.csv, `gradebook show`, the feedback and the class page;
`--times-from mtime` (or `times_from: mtime` in abgrade.yaml) does use the files' times;
a timestamps file that misses a student names them."""

from __future__ import annotations

import csv
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .test_html_report import parse

TESTS = Path(__file__).resolve().parent
TREE = TESTS / "fixtures" / "tree"
DEADLINE = "2026-03-01T23:59:00+01:00"  # long before the files' times: `cp` gives them today's
POLICY = ("--deadline", DEADLINE, "--late-per-day", 10, "--late-cap", 50)


def abgrade(*args: object, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "grader", *map(str, args)], cwd=cwd, capture_output=True, text=True, timeout=600
    )


def rows(out: Path) -> dict[str, dict[str, str]]:
    with (out / "grades.csv").open(newline="") as handle:
        return {row["student"]: row for row in csv.DictReader(handle)}


@pytest.fixture(scope="module")
def copied(tmp_path_factory) -> Path:
    """A class folder as `cp -r` leaves it (no LMS times in the names, files dated now)."""
    root = tmp_path_factory.mktemp("times")
    original = root / "download"
    original.mkdir()
    shutil.copyfile(TREE / "correct_fail_hard.py", original / "ann.py")
    shutil.copyfile(TREE / "bug_strict_cutoff.py", original / "bob.py")
    subprocess.run(["cp", "-r", str(original), str(root / "class")], check=True)
    return root


def batch(root: Path, out: str, *extra: object) -> subprocess.CompletedProcess:
    return abgrade("batch", root / "class", "--lab", "tree", "--jobs", 2, "--out", root / out, *extra, cwd=root)


@pytest.mark.slow
def test_a_copied_class_with_a_deadline_and_no_times_source_penalises_nobody_and_says_why(copied):
    run = batch(copied, "unknown", *POLICY)
    assert run.returncode == 0, run.stderr
    assert "submission times from nowhere" in run.stderr
    assert "time unknown: 2 student(s), not penalised: ann, bob" in run.stderr
    assert "--times-from mtime" in run.stderr  # says how to use the files' times if they are right
    assert "penalised: nobody (0 with a known time, none late)" in run.stderr
    assert "time unknown (a deadline but no known submission time; not penalised): ann, bob" in run.stdout
    out = copied / "unknown"
    for student, row in rows(out).items():
        assert (row["time_source"], row["days_late"], row["penalty"]) == ("time unknown", "", ""), student
        assert row["final"] == row["score"] and row["submitted_at"] == ""
    show = abgrade("gradebook", "show", "--book", out, cwd=copied).stdout
    assert all("time unknown" in line for line in show.splitlines()[1:]), show
    record = json.loads(abgrade("gradebook", "show", "bob", "--json", "--book", out, cwd=copied).stdout)
    assert record["penalty"]["late"] == "time unknown" and record["penalty"]["days_late"] is None
    assert record["final"] == record["score"]
    assert "submitted time unknown" in abgrade("gradebook", "show", "bob", "--book", out, cwd=copied).stdout
    assert "- Submission time unknown: no late penalty was applied." in (out / "feedback" / "bob.md").read_text()
    page = parse((out / "feedback" / "bob.html").read_text())
    assert "Submission time unknown" in page.one("ul", "adjustments").full_text()
    assert page.one("p", "final").full_text() == page.one("p", "graded").full_text().replace("Graded", "Final")
    unknown = parse((out / "class.html").read_text()).one("p", "time-unknown").full_text()
    assert unknown.endswith("not penalised): ann, bob")


@pytest.mark.slow
def test_times_from_mtime_uses_the_files_times_when_asked(copied):
    run = batch(copied, "mtime", *POLICY, "--times-from", "mtime")
    assert run.returncode == 0, run.stderr
    assert "submission times from file modification times (--times-from mtime) (2)" in run.stderr
    assert "penalised: 2 student(s), times from file modification times (--times-from mtime) (2)" in run.stderr
    for row in rows(copied / "mtime").values():
        assert row["time_source"] == "file time" and int(row["days_late"]) > 5
        assert float(row["penalty"]) == pytest.approx(float(row["max_score"]) * 0.5)  # the cap


@pytest.mark.slow
def test_a_timestamps_file_that_misses_a_student_names_them(copied):
    (copied / "stamps.csv").write_text("student,submitted_at\nann,2026-03-02T05:00:00+01:00\n")
    run = batch(copied, "stamps", *POLICY, "--timestamps", copied / "stamps.csv")
    assert run.returncode == 0, run.stderr
    assert "the timestamps file has no row for 1 student(s): bob" in run.stderr
    assert "time unknown: 1 student(s), not penalised: bob" in run.stderr
    assert "penalised: 1 student(s), times from the timestamps file (1): ann (1d, -10%)" in run.stderr
    table = rows(copied / "stamps")
    assert (table["ann"]["days_late"], table["bob"]["time_source"]) == ("1", "time unknown")


def test_times_from_in_abgrade_yaml_and_a_bad_value_names_the_line(tmp_path):
    (tmp_path / "class").mkdir()
    shutil.copyfile(TREE / "correct_fail_hard.py", tmp_path / "class" / "ann.py")
    config = tmp_path / "abgrade.yaml"
    config.write_text(f"deadlines:\n  tree:\n    due: '{DEADLINE}'\n    per_day: 10\n    times_from: ctime\n")
    bad = abgrade("batch", tmp_path / "class", "--lab", "tree", cwd=tmp_path)
    assert bad.returncode == 2 and len(bad.stderr.splitlines()) == 1, bad.stderr
    assert bad.stderr.startswith(f"abgrade: {config}:5: deadlines.tree.times_from: 'ctime': the one source")
