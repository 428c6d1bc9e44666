"""From a Canvas-style class download and Canvas's own gradebook export to grades in Canvas:
`abgrade batch` (download names recognised without --id-pattern), `gradebook export`, then
`gradebook publish --dry-run` and `gradebook publish` against a local Canvas (tests/fake_canvas.py:
a real HTTP server on 127.0.0.1, spoken to by canvasapi in a real `abgrade` process). A rerun
sends nothing; feedback comments go once; the token is never printed; students Canvas
doesn't know are named and the exit code is 1."""

from __future__ import annotations

import csv
import io
import os
import shutil
import sqlite3
import subprocess
import sys
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path

import pytest

from grader.batch.canvas_publish import (
    CanvasUser,
    Change,
    PublishPlan,
    match_user,
    parse_target,
    plan_lines,
    plan_publication,
)
from grader.batch.lms import RosterEntry
from grader.lab_setup import UsageError

from .fake_canvas import TOKEN, Course, FakeCanvas
from .test_batch import write_batch_spec

pytest.importorskip("canvasapi")

TESTS = Path(__file__).resolve().parent
PROJECT = TESTS.parent
FIXTURES = TESTS / "fixtures" / "tree"
DOWNLOAD = {  # Canvas's "Download Submissions" names -> fixture
    "smithann_10001_65001_lab1.py": "correct_seed_style",
    "roebob_10002_65002_lab1.py": "correct_negamax",  # an older submission: the next one is graded
    "roebob_late_10002_65010_lab1-1.py": "bug_strict_cutoff",
    "doecy_10003_65003_lab1.py": "bug_no_pruning",
}
CANVAS_EXPORT = (  # Canvas's gradebook export, as Canvas writes it
    "Student,ID,SIS User ID,SIS Login ID,Section,Lab 1 (4711),Current Score,Final Score\n"
    "    Points Possible,,,,,75,(read only),(read only)\n"
    ",,,,,Manual Posting,,\n"
    '"Smith, Ann",10001,S1,asmith,Section A,,,\n'
    '"Roe, Bob",10002,=S2,broe,Section B,,,\n'  # an SIS id that looks like a formula: never altered
    '"Doe, Cy",10003,S3,cdoe,Section A,,,\n'
    '"Student, Test",10099,,,Section A,,,\n'
)
STUDENTS = [
    {"id": 10001, "name": "Ann Smith", "sis_user_id": "S1", "login_id": "asmith"},
    {"id": 10002, "name": "Bob Roe", "sis_user_id": "=S2", "login_id": "broe"},
    {"id": 10003, "name": "Cy Doe", "sis_user_id": "S3", "login_id": "cdoe"},
    {"id": 10099, "name": "Test Student", "sis_user_id": "", "login_id": ""},
]


def abgrade(*args: object, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "grader", *map(str, args)],
        cwd=PROJECT,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, **(env or {})},
    )


@dataclass
class Graded:
    root: Path
    out: Path
    roster: Path
    batch: subprocess.CompletedProcess

    def finals(self) -> dict[str, float]:
        with closing(sqlite3.connect(self.out / "gradebook.sqlite")) as db:
            rows = db.execute("SELECT student, score FROM submissions WHERE status = 'graded'").fetchall()
        return {student: score for student, score in rows}

    def publish(self, canvas: FakeCanvas, *extra: object, token: str = TOKEN) -> subprocess.CompletedProcess:
        return abgrade(
            "gradebook", "publish", "--book", self.out, "--canvas", canvas.url, "--course", canvas.course.id,
            "--assignment", canvas.course.assignment, "--roster", self.roster, *extra,
            env={"CANVAS_TOKEN": token},
        )  # fmt: skip


@pytest.fixture(scope="module")
def graded(tmp_path_factory) -> Graded:
    root = tmp_path_factory.mktemp("canvas")
    folder = root / "lab1"
    folder.mkdir()
    for name, fixture in DOWNLOAD.items():
        shutil.copyfile(FIXTURES / f"{fixture}.py", folder / name)
    (folder / "README.txt").write_text("not a submission\n")
    (root / "gradebook-export.csv").write_text(CANVAS_EXPORT)
    out = root / "lab1-abgrade"
    run = abgrade("batch", folder, "--lab", "tree", "--spec", write_batch_spec(root), "--out", out, "--jobs", 2)
    return Graded(root, out, root / "gradebook-export.csv", run)


def fresh_canvas(**scores: float) -> FakeCanvas:
    course = Course(42, 7, 75.0, [dict(s) for s in STUDENTS], scores={int(k[1:]): v for k, v in scores.items()})
    return FakeCanvas(course)


def test_the_canvas_download_is_recognised_and_each_student_graded_once(graded):
    assert graded.batch.returncode == 0, graded.batch.stderr
    assert "Canvas download names recognised: the student id is the Canvas user ID" in graded.batch.stderr
    assert "roebob_10002_65002_lab1.py: an older submission of student '10002'" in graded.batch.stderr
    assert set(graded.finals()) == {"10001", "10002", "10003"}


def test_the_canvas_export_uses_canvass_own_roster_and_never_alters_an_id(graded):
    target = graded.root / "import.csv"
    run = abgrade("gradebook", "export", "--book", graded.out, "--format", "canvas", "--roster", graded.roster,
                  "--assignment", "Lab 1", "-o", target)  # fmt: skip
    assert run.returncode == 0, run.stderr
    table = list(csv.reader(io.StringIO(target.read_text())))
    assert table[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "Lab 1 (4711)"]  # Canvas's header
    finals = graded.finals()
    assert table[2:] == [
        ["Smith, Ann", "10001", "S1", "asmith", "Section A", f"{finals['10001']:g}"],
        ["Roe, Bob", "10002", "=S2", "broe", "Section B", f"{finals['10002']:g}"],
        ["Doe, Cy", "10003", "S3", "cdoe", "Section A", f"{finals['10003']:g}"],
    ]
    assert "1 roster student(s) have no grade in the gradebook" in run.stderr and "Student, Test" in run.stderr


def test_an_export_that_misses_graded_students_names_them_and_exits_1(graded, tmp_path):
    folder = tmp_path / "plain"
    folder.mkdir()
    shutil.copyfile(FIXTURES / "correct_seed_style.py", folder / "ann.py")
    out = tmp_path / "out"
    assert abgrade("batch", folder, "--lab", "tree", "--spec", write_batch_spec(tmp_path), "--out", out).returncode == 0
    run = abgrade("gradebook", "export", "--book", out, "--format", "canvas", "-o", tmp_path / "x.csv")
    assert run.returncode == 1
    assert "abgrade: 1 of 1 graded student(s) have no row in the canvas export: ann" in run.stderr
    assert "Traceback" not in run.stderr


def test_dry_run_then_publish_then_a_rerun_that_sends_nothing(graded):
    finals = graded.finals()
    with fresh_canvas(u10003=finals["10003"], u10001=1.0) as canvas:
        dry = graded.publish(canvas, "--dry-run")
        assert dry.returncode == 0, dry.stderr
        assert canvas.writes() == []  # a dry run only reads
        assert "would change 2 grade(s)" in dry.stdout
        assert f"10001 (Smith, Ann) -> Canvas user 10001 (Ann Smith): 1 -> {finals['10001']:g}" in dry.stdout
        assert f"10002 (Roe, Bob) -> Canvas user 10002 (Bob Roe): no grade -> {finals['10002']:g}" in dry.stdout
        assert "unchanged (Canvas already has the final score): 1" in dry.stdout
        assert "dry run: nothing was sent" in dry.stdout

        sent = graded.publish(canvas)
        assert sent.returncode == 0, sent.stderr
        puts = [r for r in canvas.writes() if r.method == "PUT"]
        assert sorted(r.path.rsplit("/", 1)[1] for r in puts) == ["10001", "10002"]
        assert all(r.authorized for r in canvas.requests)
        assert canvas.course.scores == {10001: finals["10001"], 10002: finals["10002"], 10003: finals["10003"]}
        for run in (dry, sent):
            assert TOKEN not in run.stdout + run.stderr and "Traceback" not in run.stderr

        before = len(canvas.writes())
        again = graded.publish(canvas)
        assert again.returncode == 0 and "will change 0 grade(s)" in again.stdout
        assert len(canvas.writes()) == before  # idempotent: nothing new sent

    with closing(sqlite3.connect(graded.out / "gradebook.sqlite")) as db:
        rows = db.execute("SELECT student, lms_user, old_grade, new_grade FROM publications ORDER BY id").fetchall()
    assert rows[-2:] == [("10001", "10001", "1", finals["10001"]), ("10002", "10002", None, finals["10002"])]


def test_feedback_comments_carry_the_html_and_are_posted_once(graded):
    with fresh_canvas() as canvas:
        first = graded.publish(canvas, "--comments")
        assert first.returncode == 0, first.stderr
        assert "post 3 feedback comment(s)" in first.stdout
        assert set(canvas.course.comments) == {10001, 10002, 10003}
        comment = canvas.course.comments[10002][0]
        assert comment["text"].startswith("#") and len(comment["files"]) == 1
        upload = canvas.course.files[comment["files"][0]]["form"]
        assert any(v[0].startswith("<file 10002.html ") for v in upload.values())
        again = graded.publish(canvas, "--comments")
        assert again.returncode == 0 and "feedback comment" not in again.stdout
        assert all(len(c) == 1 for c in canvas.course.comments.values())


def test_students_canvas_does_not_know_are_named_and_exit_1(graded):
    with fresh_canvas() as canvas:
        canvas.course.students = [s for s in canvas.course.students if s["id"] != 10003]
        run = graded.publish(canvas)
    assert run.returncode == 1
    assert "1 graded student(s) have no Canvas student to go to" in run.stderr and "10003:" in run.stderr
    assert 10001 in canvas.course.scores and 10003 not in canvas.course.scores


@pytest.mark.parametrize(
    ("token", "message"),
    [("", "abgrade: set CANVAS_TOKEN to a Canvas access token"), ("wrong", "refused the token in CANVAS_TOKEN")],
)
def test_a_missing_or_wrong_token_is_one_line_exit_2(graded, token, message):
    with fresh_canvas() as canvas:
        run = graded.publish(canvas, token=token)
    assert run.returncode == 2 and message in run.stderr, run.stderr
    assert len(run.stderr.strip().splitlines()) == 1 and "Traceback" not in run.stderr
    assert canvas.writes() == []


def test_the_token_never_crosses_the_network_in_clear():
    assert parse_target("http://127.0.0.1:8000/api/v1/", "1", "2").url == "http://127.0.0.1:8000"
    with pytest.raises(UsageError, match="use https"):
        parse_target("http://canvas.example.edu", "1", "2")
    with pytest.raises(UsageError, match="--course 'abc': the Canvas id"):
        parse_target("https://canvas.example.edu", "abc", "2")


def test_matching_prefers_the_rosters_ids_and_refuses_ambiguity():
    users = [CanvasUser(1, "A", "S1", "a"), CanvasUser(2, "B", "S2", "b"), CanvasUser(3, "C", "X", "x")]
    assert match_user("anything", RosterEntry("anything", {"sis_user_id": "S2"}), users)[0] == users[1]
    assert match_user("b", None, users)[0] == users[1]  # an abgrade id that is a login
    assert match_user("3", None, users)[0] == users[2]
    twins = [*users, CanvasUser(4, "D", "S2", "d")]
    user, why = match_user("z", RosterEntry("z", {"sis_user_id": "S2"}), twins)
    assert user is None and "2 Canvas students have sis_user_id 'S2'" in why
    assert plan_publication([], {}, users, {}).changes == []


def test_names_from_canvas_and_file_names_are_shown_escaped():
    hostile = CanvasUser(1, "evil\x1b]0;pwned\x07\x1b[2J")
    plan = PublishPlan(changes=[Change("10001\x1b[31m", "a\x1b[2Jb", hostile, None, 3.0)], not_graded=["x\x1b[1m"])
    text = "\n".join(plan_lines(plan, dry_run=True))
    assert "\x1b" not in text and "\x07" not in text
    assert "evil␛]0;pwned␇␛[2J" in text
