"""The instructor's gradebook from the command line, end to end, on a real class folder
with late and on-time submissions: a batch with a deadline and an LMS timestamps file, an
override, a one-student regrade that keeps the seed, the override and the penalty,
`--failed-only`, the LMS exports with a roster, `gradebook show`, a deadline from
abgrade.yaml, one-line usage errors, and the class page in headless Chromium."""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
import sqlite3
import struct
import subprocess
import sys
import zlib
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path

import pytest

from grader.cli import main

from .test_batch import write_batch_spec
from .test_html_report import chromium, parse, png_size, run_browser

TESTS = Path(__file__).resolve().parent
PROJECT = TESTS.parent
FIXTURES = TESTS / "fixtures" / "tree"
STUDENTS = {  # student id -> fixture
    "10001": "correct_seed_style",
    "10002": "bug_strict_cutoff",
    "10003": "bug_no_pruning",
    "10004": "correct_negamax",
}
DEADLINE = "2026-03-01T23:59:00+01:00"
ON_TIME = 1772390000.0  # 2026-03-01T18:33:20Z: before the deadline
STAMPS = "student,submitted_at\n10002,2026-03-03T09:00:00+01:00\n10003,2026-03-01T20:00:00Z\n99999,2026-03-01T20:00Z\n"
ROSTER = (
    "student,name,sis_user_id,sis_login_id,section,email\n"
    '10001,"Smith, Ann",S1,asmith,A,ann@u.edu\n'
    '10002,"Roe, Bob",S2,broe,B,bob@u.edu\n'
    '10003,"Doe, Cy",S3,cdoe,A,cy@u.edu\n'
)


def abgrade(*args: object, cwd: Path = PROJECT) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "grader", *map(str, args)], cwd=cwd, capture_output=True, text=True, timeout=300
    )


def cli(capsys, *args: object) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def grades_csv(out: Path) -> dict[str, dict[str, str]]:
    with (out / "grades.csv").open(newline="") as handle:
        return {row["student"]: row for row in csv.DictReader(handle)}


def seeds(out: Path) -> list[int]:
    with closing(sqlite3.connect(out / "gradebook.sqlite")) as db:
        return [seed for (seed,) in db.execute("SELECT seed FROM runs ORDER BY id")]


@dataclass
class Class:
    folder: Path
    out: Path
    spec: Path
    stamps: Path
    roster: Path

    def batch(self, *extra: object) -> subprocess.CompletedProcess:
        return abgrade(
            "batch", self.folder, "--lab", "tree", "--spec", self.spec, "--out", self.out, "--jobs", 2, *extra
        )


@pytest.fixture(scope="module")
def graded(tmp_path_factory) -> Class:
    """The class graded once with a deadline: 10002 two days late (timestamps file), 10003
    on time (timestamps), 10001 and 10004 on time by their file times (`--times-from mtime`)."""
    root = tmp_path_factory.mktemp("gradebook")
    folder = root / "class"
    folder.mkdir()
    for student, fixture in STUDENTS.items():
        path = folder / f"{student}.py"
        shutil.copyfile(FIXTURES / f"{fixture}.py", path)
        os.utime(path, (ON_TIME, ON_TIME))
    (root / "stamps.csv").write_text(STAMPS)
    (root / "roster.csv").write_text(ROSTER)
    graded = Class(folder, root / "out", write_batch_spec(root), root / "stamps.csv", root / "roster.csv")
    run = graded.batch(
        "--deadline", DEADLINE, "--late-per-day", 10, "--late-cap", 50, "--timestamps", graded.stamps,
        "--times-from", "mtime",
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert "penalised: 1 student(s), times from the timestamps file (1): 10002 (2d, -20%)" in run.stderr
    assert (
        "the timestamps file has no row for 2 student(s): 10001, 10004 (their times from file modification times)"
        in run.stderr
    )
    assert "submission times from the timestamps file (2), file modification times (--times-from mtime) (2)" in (
        run.stderr
    )
    assert "ignored 1 timestamps row(s) of students without a submission: 99999" in run.stderr
    assert "class misconceptions" in run.stdout and "strict_cutoff" in run.stdout
    return graded


def test_a_batch_with_a_deadline_records_raw_score_penalty_and_final(graded):
    table = grades_csv(graded.out)
    late, on_time, by_file_time = table["10002"], table["10003"], table["10001"]
    most = float(late["max_score"])
    assert (late["submitted_at"], late["days_late"]) == ("2026-03-03T09:00:00+01:00", "2")
    assert float(late["penalty"]) == pytest.approx(most * 0.2)
    assert float(late["final"]) == pytest.approx(float(late["score"]) - most * 0.2)
    assert (on_time["days_late"], on_time["penalty"], on_time["final"]) == ("0", "0", on_time["score"])
    assert (
        by_file_time["submitted_at"] == "2026-03-01T18:33:20+00:00" and by_file_time["final"] == by_file_time["score"]
    )
    feedback = (graded.out / "feedback" / "10002.md").read_text()
    assert "- Late by 2 days" in feedback and "**Final score:" in feedback
    assert "Final score" not in (graded.out / "feedback" / "10001.md").read_text()


def test_class_page_and_summary_name_each_bug_and_its_students(graded):
    text = (graded.out / "summary.txt").read_text()
    assert "class misconceptions (likely bugs, 4 graded students)" in text
    assert "pass rate per check kind" in text and "fixed cases failed by the most students" in text
    dom = parse((graded.out / "class.html").read_text())
    cards = {a.attrs["data-name"]: a for a in dom.all("article", "misconception")}
    assert [li.full_text() for li in cards["strict_cutoff"].all("li")] == ["10002"]
    assert "10003" in [li.full_text() for li in cards["no_pruning"].all("li")]
    assert {tr.attrs["data-kind"] for tr in dom.all("tr", "kind")} >= {"load", "value", "nodes", "pruned"}
    assert dom.all("tr", "case")


@pytest.mark.slow
def test_override_survives_a_one_student_regrade_with_the_same_seed_and_shows_in_exports(graded, capsys):
    """The issue's "done when": regrading never loses an override or a penalty."""
    book = ("--book", graded.out)
    code, out, _ = cli(capsys, "gradebook", "override", "10002", "--points", 20, "--reason", "regrade request", *book)
    assert code == 0 and "override of 10002 (lab tree): set 20" in out
    code, out, _ = cli(capsys, "gradebook", "override", "10003", "--add", -1, "--reason", "style", "--by", "ta", *book)
    assert code == 0 and "add -1" in out

    regrade = graded.batch("--student", "10002", "--student", "10001")  # no deadline: penalties kept
    assert regrade.returncode == 0, regrade.stderr
    assert "2 to grade" in regrade.stderr
    assert len(set(seeds(graded.out))) == 1  # the class's seed, not a fresh one
    table = grades_csv(graded.out)
    assert (table["10002"]["override"], table["10002"]["final"], table["10002"]["days_late"]) == ("set 20", "20", "2")
    assert table["10002"]["override_reason"].startswith("regrade request (")
    expected = float(table["10003"]["score"]) - 1
    assert float(table["10003"]["final"]) == pytest.approx(expected)
    assert "- Adjusted by your instructor: set to 20." in (graded.out / "feedback" / "10002.md").read_text()

    failed = graded.batch("--failed-only")
    below = [s for s, row in table.items() if float(row["score"]) < float(row["max_score"])]
    assert failed.returncode == 0 and f"{len(below)} to grade" in failed.stderr
    assert len(set(seeds(graded.out))) == 1

    canvas = graded.out / "canvas.csv"
    code, _, err = cli(
        capsys,
        "gradebook",
        "export",
        "--format",
        "canvas",
        "--roster",
        graded.roster,
        "-o",
        canvas,
        "--assignment",
        "Lab 1 (4711)",
        *book,
    )
    assert code == 0 and "left out 10004: no Canvas ID" not in err  # a numeric id is the Canvas ID
    rows = list(csv.reader(canvas.open(newline="")))
    assert rows[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "Lab 1 (4711)"]
    assert rows[1] == ["Points Possible", "", "", "", "", table["10001"]["max_score"]]
    by_id = {row[1]: row for row in rows[2:]}
    assert by_id["10002"] == ["Roe, Bob", "10002", "S2", "broe", "B", "20"]
    assert by_id["10003"][:5] == ["Doe, Cy", "10003", "S3", "cdoe", "A"]
    assert float(by_id["10003"][5]) == pytest.approx(expected)
    assert by_id["10004"] == ["10004", "10004", "", "", "", table["10004"]["final"]]

    code, out, _ = cli(capsys, "gradebook", "export", "--format", "gradescope-csv", "--roster", graded.roster, *book)
    assert list(csv.reader(io.StringIO(out)))[:2] == [
        ["Name", "SID", "Email", "Total Score"],
        ["Smith, Ann", "S1", "ann@u.edu", table["10001"]["final"]],
    ]

    code, out, _ = cli(capsys, "gradebook", "show", "10002", "--json", *book)
    record = json.loads(out)
    assert (record["override"]["mode"], record["final"], record["penalty"]["days_late"]) == ("set", 20, 2)
    assert [e["action"] for e in record["history"]] == ["set"]
    code, out, _ = cli(capsys, "gradebook", "show", *book)
    header, *lines = out.splitlines()
    assert header.split() == ["student", "name", "status", "score", "max", "late", "penalty", "override", "final"]
    assert any(line.startswith("10002") and "set 20" in line and "2d" in line for line in lines)

    code, out, _ = cli(capsys, "gradebook", "override", "10002", "--remove", "--reason", "withdrawn", *book)
    assert code == 0 and "removed the override of 10002" in out
    code, out, _ = cli(capsys, "gradebook", "show", "10002", "--json", *book)
    assert [e["action"] for e in json.loads(out)["history"]] == ["set", "remove"]


def test_a_deadline_in_abgrade_yaml_applies_and_bad_values_name_file_and_line(tmp_path):
    folder = tmp_path / "class"
    folder.mkdir()
    shutil.copyfile(FIXTURES / "correct_seed_style.py", folder / "ann.py")
    os.utime(folder / "ann.py", (ON_TIME + 86400 * 3, ON_TIME + 86400 * 3))  # three days late
    config = tmp_path / "abgrade.yaml"
    policy = f"deadlines:\n  tree:\n    due: '{DEADLINE}'\n    table: {{1: 10, 2: 25}}\n    cap: 20\n"
    config.write_text(policy)
    spec = write_batch_spec(tmp_path)
    run = abgrade("batch", folder, "--lab", "tree", "--spec", spec, "--jobs", 1, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    row = grades_csv(tmp_path / "class-abgrade")["ann"]  # no times source named: the file's time is not one
    assert (row["time_source"], row["days_late"], row["penalty"], row["final"]) == (
        "time unknown",
        "",
        "",
        row["score"],
    )
    config.write_text(policy + "    times_from: mtime\n")
    run = abgrade("batch", folder, "--lab", "tree", "--spec", spec, "--jobs", 1, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    row = grades_csv(tmp_path / "class-abgrade")["ann"]
    assert row["days_late"] == "3" and float(row["penalty"]) == pytest.approx(float(row["max_score"]) * 0.2)
    assert row["time_source"] == "file time"

    config.write_text("deadlines:\n  tree:\n    due: 2026-03-01T23:59:00+01:00\n    grace: soon\n    per_day: 5\n")
    bad = abgrade("batch", folder, "--lab", "tree", "--config", config)
    assert bad.returncode == 2 and bad.stderr.startswith(f"abgrade: {config}:4: deadlines.tree.grace: 'soon' is not")
    assert len(bad.stderr.splitlines()) == 1


@pytest.mark.parametrize(
    "args, message",
    [
        (["--deadline", "1 March"], "abgrade: --deadline: '1 March' is not an ISO 8601 time"),
        (["--deadline", DEADLINE], "abgrade: --late-per-day: missing"),
        (["--late-per-day", "10"], "abgrade: --grace, --late-per-day, --late-table and --late-cap need --deadline"),
        (["--deadline", DEADLINE, "--late-table", "1-10"], "abgrade: --late-table: '1-10': write DAYS:PERCENT"),
        (["--student", "nobody"], "abgrade: --student 'nobody': no submission of that student"),
        (["--regrade", "--failed-only"], "abgrade: --regrade grades everyone with a fresh seed"),
        (["--timestamps", "stamps.csv"], "abgrade: --timestamps needs a late policy"),
        (["--times-from", "mtime"], "abgrade: --times-from needs a late policy"),
    ],
)
def test_batch_usage_errors_are_one_line_with_exit_code_2(tmp_path, args, message):
    folder = tmp_path / "class"
    folder.mkdir()
    (folder / "ann.py").write_text("def alphabeta(): pass\n")
    (tmp_path / "stamps.csv").write_text(STAMPS)
    run = abgrade("batch", folder, "--lab", "tree", "--out", tmp_path / "out", *args, cwd=tmp_path)
    assert run.returncode == 2 and run.stderr.startswith(message), run.stderr
    assert len(run.stderr.splitlines()) == 1 and "Traceback" not in run.stderr


def test_gradebook_usage_errors_are_one_line_with_exit_code_2(graded, tmp_path, capsys):
    book = ("--book", graded.out)
    (tmp_path / "roster.csv").write_text("student,emial\n10001,a@b\n")
    for args, message in [
        (["override", "nobody", "--points", 1, "--reason", "x", *book], "abgrade: no student 'nobody' in lab tree"),
        (["override", "10001", "--points", -1, "--reason", "x", *book], "abgrade: --points -1: a score can't be"),
        (["override", "10001", "--points", 1, "--reason", " ", *book], "abgrade: --reason: say why"),
        (["override", "10004", "--remove", "--reason", "x", *book], "abgrade: student '10004' has no override"),
        (
            ["export", "--format", "canvas", "--roster", tmp_path / "roster.csv", *book],
            f"abgrade: {tmp_path / 'roster.csv'}:1: unknown roster column 'emial'",
        ),
        (["export", "--format", "moodle", *book], "abgrade: --format moodle needs --roster"),
        (["show", "--book", tmp_path], f"abgrade: {tmp_path}: no gradebook there"),
        (["show", *book, "--lab", "negamax"], "abgrade: --lab negamax:"),
    ]:
        code, _, err = cli(capsys, "gradebook", *args)
        assert code == 2 and err.startswith(message) and len(err.splitlines()) == 1, (args, err)


# --- the class page in a real browser -----------------------------------------------------


def png_is_not_blank(path: Path) -> bool:
    """The screenshot draws something: its pixels take many values (a blank page: a few)."""
    data = path.read_bytes()
    chunks, offset = [], 8
    while offset < len(data):
        length, kind = struct.unpack(">I4s", data[offset : offset + 8])
        if kind == b"IDAT":
            chunks.append(data[offset + 8 : offset + 8 + length])
        offset += 12 + length
    return len(set(zlib.decompress(b"".join(chunks)))) > 64


@pytest.mark.slow
def test_class_page_renders_in_headless_chromium(graded, tmp_path):
    binary = chromium()
    if binary is None:
        pytest.skip("headless Chromium not found (Debian: apt-get install chromium); the browser test needs it")
    page = graded.out / "class.html"
    dumped = run_browser(binary, tmp_path / "profile", "--dump-dom", page.as_uri())
    assert dumped.returncode == 0, dumped.stderr[-2000:]
    dom = parse(dumped.stdout)
    text = dom.full_text()
    for expected in ("Class misconceptions: lab tree", "strict_cutoff", "Pass rate per check kind", "10002"):
        assert expected in text
    assert len(dom.all("article", "misconception")) == len(parse(page.read_text()).all("article", "misconception")) > 0
    screenshot = tmp_path / "class.png"
    shot = run_browser(
        binary, tmp_path / "profile", f"--screenshot={screenshot}", "--window-size=1200,1400", page.as_uri()
    )
    assert shot.returncode == 0 and screenshot.exists(), shot.stderr[-2000:]
    assert png_size(screenshot) == (1200, 1400)
    assert png_is_not_blank(screenshot)
    blank = tmp_path / "blank.html"
    blank.write_text("<!DOCTYPE html><html><body></body></html>")
    run_browser(
        binary,
        tmp_path / "profile",
        f"--screenshot={tmp_path / 'blank.png'}",
        "--window-size=1200,1400",
        blank.as_uri(),
    )
    assert not png_is_not_blank(tmp_path / "blank.png")  # the check tells a blank page apart
