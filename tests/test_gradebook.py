"""The instructor's gradebook, piece by piece (fast, no grading): late policies and
submission times, the final-score rules, a schema 3 gradebook migrated with its rows, the
adjustments surviving a regrade in the store, the class insights and their writers, the
roster and the LMS layouts column by column. test_gradebook_cli.py runs it all from
the command line on a real class folder."""

from __future__ import annotations

import csv
import io
import os
import sqlite3
import xml.etree.ElementTree as ElementTree
from contextlib import closing
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from grader.batch.adjustments import Override, Penalty, final_mark
from grader.batch.classpage import class_page
from grader.batch.discovery import Submission, file_hash
from grader.batch.feedback import feedback_markdown
from grader.batch.gradebook import SCHEMA_VERSION, Gradebook, Publication, StoredGrade
from grader.batch.insights import class_insights
from grader.batch.late import (
    LatePolicy,
    PolicyError,
    parse_policy,
    parse_time,
    penalties,
    read_timestamps,
    submission_times,
    time_in_name,
)
from grader.batch.lms import read_roster, write_export
from grader.batch.picture import class_picture
from grader.batch.summary import summarize, summary_text
from grader.lab_setup import UsageError
from grader.results import GradeReport
from grader.results import TestResult as GradedTest  # (a Test* name would be collected)

from .test_html_report import parse

SEED = 4242
UTC = timezone.utc
DUE = datetime(2026, 3, 1, 23, 59, tzinfo=UTC)


# --- late policies ----------------------------------------------------------------------


def test_per_day_penalty_counts_started_days_after_the_grace_period_up_to_the_cap():
    policy = LatePolicy(DUE, grace=timedelta(minutes=15), per_day=10, cap=25)
    assert policy.days_late(DUE + timedelta(minutes=15)) == 0  # inside the grace period
    assert policy.days_late(DUE + timedelta(minutes=16)) == 1
    assert policy.days_late(DUE + timedelta(days=1, minutes=15)) == 1
    assert policy.days_late(DUE + timedelta(days=1, minutes=16)) == 2
    assert [policy.percent(d) for d in (0, 1, 2, 3, 9)] == [0, 10, 20, 25, 25]


def test_a_table_gives_the_percent_for_up_to_n_days_and_the_last_one_beyond():
    policy = parse_policy({"due": "2026-03-01T23:59:00+01:00", "table": "1:10,2:25,7:50"})
    assert policy.due == datetime(2026, 3, 1, 22, 59, tzinfo=UTC)
    assert [policy.percent(d) for d in (0, 1, 2, 3, 7, 8, 30)] == [0, 10, 25, 50, 50, 50, 50]
    assert parse_policy({"due": "2026-03-01", "table": {7: 50, 1: 10}, "cap": "40%"}).percent(5) == 40


def test_times_without_an_offset_are_utc_and_a_bare_date_is_its_last_second():
    assert parse_time("2026-03-01T23:59") == DUE
    assert parse_time("2026-03-01T23:59Z") == DUE
    assert parse_time("2026-03-01") == datetime(2026, 3, 1, 23, 59, 59, tzinfo=UTC)


@pytest.mark.parametrize(
    "fields, field, problem",
    [
        ({"due": "1 March", "per_day": 10}, "due", "is not an ISO 8601 time"),
        ({"due": "2026-03-01", "per_day": 10, "grace": "soon"}, "grace", "is not a duration"),
        ({"due": "2026-03-01", "per_day": 120}, "per_day", "between 0 and 100"),
        ({"due": "2026-03-01"}, "per_day", "missing"),
        ({"due": "2026-03-01", "per_day": 1, "table": "1:5"}, "table", "either per_day or table"),
        ({"due": "2026-03-01", "table": "1-5"}, "table", "DAYS:PERCENT"),
        ({"due": "2026-03-01", "per_day": 5, "dew": 1}, "dew", "unknown field"),
        ({"per_day": 5}, "due", "missing"),
    ],
)
def test_bad_policies_name_the_field_and_the_fix(fields, field, problem):
    with pytest.raises(PolicyError) as caught:
        parse_policy(fields)
    assert caught.value.field == field and problem in caught.value.problem


def submission(folder: Path, student: str, name: str | None = None, text: str = "x = 1\n") -> Submission:
    path = folder / (name or f"{student}.py")
    path.write_text(text)
    return Submission(student, path, file_hash(path), path.name)


def test_submission_times_come_from_timestamps_then_blackboard_names_then_file_times_if_asked(tmp_path):
    ann = submission(tmp_path, "ann")
    bob = submission(tmp_path, "bob", "Lab1_bob_attempt_2026-03-02-08-30-00_tree.py")
    cy = submission(tmp_path, "cy")
    os.utime(cy.path, (DUE.timestamp() + 90, DUE.timestamp() + 90))
    stamps = tmp_path / "stamps.csv"
    stamps.write_text("student,submitted_at,extra\nann,2026-03-04T10:00:00+00:00,x\nzed,2026-03-01T00:00Z,y\n")
    named = {
        "ann": (datetime(2026, 3, 4, 10, tzinfo=UTC), "timestamps"),
        "bob": (datetime(2026, 3, 2, 8, 30, tzinfo=UTC), "file name"),
    }
    # no source named for cy: time unknown, never the file's time (a `cp` would make it today)
    times = submission_times([ann, bob, cy], read_timestamps(stamps), UTC)
    assert (times.times, times.no_time, times.not_in_timestamps, times.unknown) == (
        named,
        ["cy"],
        ["bob", "cy"],
        ["zed"],
    )
    found = penalties(LatePolicy(DUE, per_day=10), times)
    assert {s: (p.days_late, p.percent, p.source, p.time_unknown) for s, p in found.items()} == {
        "ann": (3, 30, "timestamps", False),
        "bob": (1, 10, "file name", False),
        "cy": (0, 0, "unknown", True),
    }
    assert final_mark(10, 10, found["cy"], None).final == 10
    # --times-from mtime: the file's time where nothing better has one
    times = submission_times([ann, bob, cy], read_timestamps(stamps), UTC, use_mtime=True)
    assert times.times == {**named, "cy": (DUE + timedelta(seconds=90), "file time")} and times.no_time == []
    found = penalties(LatePolicy(DUE, per_day=10), times)
    assert (found["cy"].days_late, found["cy"].percent, found["cy"].source) == (1, 10, "file time")
    # Canvas and Moodle names carry no time; an impossible date is no time either
    assert time_in_name("smith_john_10001_65001_lab.py", UTC) is None
    assert time_in_name("Ann Smith_123_assignsubmission_file_", UTC) is None
    assert time_in_name("L_u_attempt_2026-02-30-10-00-00_x.py", UTC) is None


@pytest.mark.parametrize(
    "text, where",
    [
        ("name,when\nann,2026-03-01\n", ":1: the timestamps file needs the columns student,submitted_at"),
        ("student,submitted_at\nann,yesterday\n", ":2: submitted_at: 'yesterday' is not an ISO 8601 time"),
        ("student,submitted_at\nann,2026-03-01\nann,2026-03-02\n", ":3: student 'ann' is listed twice"),
        ("student,submitted_at\n,2026-03-01\n", ":2: student: empty"),
    ],
)
def test_bad_timestamps_files_name_the_file_and_line(tmp_path, text, where):
    stamps = tmp_path / "stamps.csv"
    stamps.write_text(text)
    with pytest.raises(UsageError) as caught:
        read_timestamps(stamps)
    assert str(caught.value).startswith(f"{stamps}{where}"), str(caught.value)


# --- final scores -----------------------------------------------------------------------

LATE = Penalty("2026-03-03T12:00:00+00:00", "timestamps", 2, 20.0, "due ...")


def override(mode: str, points: float) -> Override:
    return Override(mode, points, "why", "prof", "2026-03-05T00:00:00+00:00")


def test_the_penalty_is_a_share_of_the_maximum_and_an_override_sets_or_adds():
    assert final_mark(18, 20, None, None).final == 18
    late = final_mark(18, 20, LATE, None)
    assert (late.raw, late.penalty_points, late.final) == (18, 4, 14)
    assert final_mark(2, 20, LATE, None).final == 0  # never below 0
    assert final_mark(18, 20, LATE, override("set", 19)).final == 19  # set: whatever the grade and the penalty
    assert final_mark(18, 20, LATE, override("add", 1.5)).final == 15.5  # add: on top of the penalised score
    assert final_mark(1, 20, LATE, override("add", -5)).final == 0
    assert final_mark(None, None, LATE, override("add", 2)).final is None  # nothing graded to add to
    assert final_mark(None, None, None, override("set", 7)).final == 7


# --- the gradebook: migration and adjustments that survive regrades -----------------------

SCHEMA_3 = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE runs (id INTEGER PRIMARY KEY AUTOINCREMENT, lab TEXT NOT NULL, spec_version TEXT NOT NULL,
    spec_digest TEXT NOT NULL, seed INTEGER NOT NULL, jobs INTEGER NOT NULL, folder TEXT NOT NULL,
    started TEXT NOT NULL, ended TEXT, status TEXT NOT NULL DEFAULT 'running'
    CHECK (status IN ('running', 'complete', 'interrupted', 'killed')), pid INTEGER);
CREATE TABLE submissions (lab TEXT NOT NULL, student TEXT NOT NULL, file TEXT NOT NULL,
    file_hash TEXT NOT NULL, spec_version TEXT NOT NULL, spec_digest TEXT NOT NULL, seed INTEGER NOT NULL,
    run_id INTEGER NOT NULL REFERENCES runs(id), status TEXT NOT NULL CHECK (status IN ('graded', 'error')),
    score REAL, max_score REAL, error TEXT, seconds REAL NOT NULL, graded_at TEXT NOT NULL,
    machine INTEGER NOT NULL DEFAULT 1, notes TEXT NOT NULL DEFAULT '{}', PRIMARY KEY (lab, student));
CREATE TABLE tests (lab TEXT NOT NULL, student TEXT NOT NULL, position INTEGER NOT NULL, name TEXT NOT NULL,
    kind TEXT NOT NULL, case_name TEXT, score REAL NOT NULL, max_score REAL NOT NULL, passed INTEGER NOT NULL,
    visibility TEXT NOT NULL, output TEXT NOT NULL, diagnoses TEXT NOT NULL, details TEXT,
    not_run INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (lab, student, position),
    FOREIGN KEY (lab, student) REFERENCES submissions(lab, student));
INSERT INTO meta VALUES ('schema_version', '3');
INSERT INTO runs VALUES (1, 'tree', '1', 'abc', 4242, 2, '/class', '2026-03-02T00:00:00+00:00',
    '2026-03-02T00:01:00+00:00', 'complete', 99);
INSERT INTO submissions VALUES ('tree', 'ann', 'ann.py', 'h1', '1', 'abc', 4242, 1, 'graded', 2, 3, NULL, 0.5,
    '2026-03-02T00:00:30+00:00', 1, '{"notes": ["n"], "load_notes": []}');
INSERT INTO submissions VALUES ('tree', 'bob', 'bob.py', 'h2', '1', 'abc', 4242, 1, 'error', NULL, NULL,
    'the grader process died', 0.5, '2026-03-02T00:00:31+00:00', 1, '{}');
INSERT INTO tests VALUES ('tree', 'ann', 0, 'load', 'load', NULL, 1, 1, 1, 'visible', '', '[]', NULL, 0);
INSERT INTO tests VALUES ('tree', 'ann', 1, 'seed: pruned', 'pruned', 'seed', 0, 2, 0, 'visible', 'You read c4.',
    '["strict_cutoff"]', NULL, 0);
"""


def test_a_schema_3_gradebook_opens_migrated_with_its_rows(tmp_path):
    path = tmp_path / "gradebook.sqlite"
    with closing(sqlite3.connect(path)) as db:  # what schema 3 wrote, by hand
        db.executescript(SCHEMA_3)
    book = Gradebook(path)
    assert book.db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == (SCHEMA_VERSION,)
    assert book.publications("tree") == []  # schema 6's table, made on the way
    ann, bob = book.grades("tree")
    assert (ann.student, ann.name, ann.report.score, ann.report.max_score, ann.report.notes) == ("ann", "", 1, 3, ["n"])
    assert ann.report.tests[1].diagnoses == ["strict_cutoff"]
    assert (bob.status, bob.error, bob.mark.final) == ("error", "the grader process died", None)
    book.set_override("tree", "bob", override("set", 1))
    assert book.grades("tree", ["bob"])[0].mark.final == 1
    assert book.db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    assert book.db.execute("PRAGMA foreign_key_check").fetchall() == []
    book.close()
    assert Gradebook(path).grades("tree")[0].report.score == 1  # opening again changes nothing


# What schema 4 added to schema 3 (the name, the adjustments' tables), with a penalty and an
# override, by hand as schema 4 wrote them.
SCHEMA_4 = (
    SCHEMA_3.replace("INSERT INTO meta VALUES ('schema_version', '3');", "")
    + """
ALTER TABLE submissions ADD COLUMN name TEXT NOT NULL DEFAULT '';
CREATE TABLE penalties (lab TEXT NOT NULL, student TEXT NOT NULL, submitted_at TEXT NOT NULL, source TEXT NOT NULL,
    days_late INTEGER NOT NULL, percent REAL NOT NULL, policy TEXT NOT NULL, computed_at TEXT NOT NULL,
    PRIMARY KEY (lab, student));
CREATE TABLE overrides (lab TEXT NOT NULL, student TEXT NOT NULL, mode TEXT NOT NULL CHECK (mode IN ('set', 'add')),
    points REAL NOT NULL, reason TEXT NOT NULL, by TEXT NOT NULL, at TEXT NOT NULL, PRIMARY KEY (lab, student));
CREATE TABLE override_log (id INTEGER PRIMARY KEY AUTOINCREMENT, lab TEXT NOT NULL, student TEXT NOT NULL,
    action TEXT NOT NULL CHECK (action IN ('set', 'add', 'remove')), points REAL, reason TEXT NOT NULL,
    by TEXT NOT NULL, at TEXT NOT NULL);
INSERT INTO meta VALUES ('schema_version', '4');
INSERT INTO penalties VALUES ('tree', 'ann', '2026-03-03T12:00:00+00:00', 'file time', 1, 10, 'due ...',
    '2026-03-04T00:00:00+00:00');
INSERT INTO overrides VALUES ('tree', 'ann', 'add', 0.5, 'why', 'prof', '2026-03-05T00:00:00+00:00');
INSERT INTO override_log VALUES (1, 'tree', 'ann', 'add', 0.5, 'why', 'prof', '2026-03-05T00:00:00+00:00');
"""
)


def test_a_schema_4_gradebook_opens_migrated_with_its_adjustments_and_no_export_record(tmp_path):
    path = tmp_path / "gradebook.sqlite"
    with closing(sqlite3.connect(path)) as db:
        db.executescript(SCHEMA_4)
    book = Gradebook(path)
    assert book.db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == (SCHEMA_VERSION,)
    ann, _ = book.grades("tree")
    assert (ann.penalty.source, ann.penalty.days_late, ann.override.describe()) == ("file time", 1, "add 0.5")
    assert ann.mark.final == 1 - 0.3 + 0.5  # 10% of 3 off, then half a point added
    assert book.export_context("tree") is None  # exports of a schema 4 batch: no record of what they held
    assert [e.action for e in book.override_history("tree", "ann")] == ["add"]
    assert book.db.execute("PRAGMA integrity_check").fetchone() == ("ok",)


def test_a_schema_5_gradebook_gains_the_publications_table_and_keeps_its_rows(tmp_path):
    path = tmp_path / "gradebook.sqlite"
    with closing(sqlite3.connect(path)) as db:
        db.executescript(SCHEMA_4)
    Gradebook(path).close()
    with closing(sqlite3.connect(path)) as db:  # back to what schema 5 wrote: no publications table
        db.executescript("DROP TABLE publications; UPDATE meta SET value = '5' WHERE key = 'schema_version';")
    book = Gradebook(path)
    assert book.db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == (SCHEMA_VERSION,)
    assert [g.student for g in book.grades("tree")] == ["ann", "bob"]
    assert book.grades("tree")[0].override.describe() == "add 0.5"
    entry = Publication("ann", "canvas X course 1 assignment 2", "101", None, 1.0, None, "ta", "2026-03-03T00:00:00Z")
    book.record_publication("tree", [entry])
    assert book.publications("tree", "canvas X course 1 assignment 2") == [entry]
    assert book.publications("tree", "elsewhere") == []
    book.close()


def test_a_regrade_replaces_the_grade_and_keeps_the_penalty_and_the_override(tmp_path, tree_spec):
    book = Gradebook(tmp_path / "gradebook.sqlite")
    run = book.start_run(tree_spec, SEED, 1, tmp_path)
    ann = submission(tmp_path, "ann")
    failing = GradeReport("tree", "ann.py", [GradedTest("load", "load", 1, True), GradedTest("v", "value", 9, False)])
    book.record_report(run, tree_spec, SEED, ann, failing, 1.0)
    book.record_penalties("tree", {"ann": LATE})
    book.set_override("tree", "ann", override("add", 2))
    assert book.failed_students("tree") == ["ann"]
    passing = GradeReport("tree", "ann.py", [GradedTest("load", "load", 1, True), GradedTest("v", "value", 9, True)])
    book.record_report(book.start_run(tree_spec, SEED, 1, tmp_path), tree_spec, SEED, ann, passing, 1.0)
    [grade] = book.grades("tree")
    assert (grade.report.score, grade.penalty, grade.override.points) == (10, LATE, 2)
    assert grade.mark.final == 10 - 2 + 2  # 20% of 10 off, 2 added
    assert book.failed_students("tree") == []
    assert book.remove_override("tree", "ann", "settled", "prof") and not book.remove_override("tree", "ann", "x", "y")
    assert [(e.action, e.points, e.reason) for e in book.override_history("tree", "ann")] == [
        ("add", 2, "why"),
        ("remove", None, "settled"),
    ]
    book.close()


# --- the class's misconceptions -----------------------------------------------------------

HINTS = {"strict_cutoff": "cut as soon as alpha >= beta", "no_pruning": "stop looping once alpha >= beta"}


def stored(student: str, tests: list[GradedTest], **extra) -> StoredGrade:
    report = GradeReport("tree", f"{student}.py", tests)
    return StoredGrade(student, f"{student}.py", "graded", 1, SEED, 0.5, "now", report, **extra)


def strict(case: str) -> GradedTest:
    return GradedTest(f"{case}: pruned", "pruned", 2, False, case=case, diagnoses=["strict_cutoff"])


CLASS = [
    stored("ann", [GradedTest("load", "load", 1, True), strict("seed"), strict("ties")]),
    stored(
        "bob",
        [GradedTest("load", "load", 1, True), strict("ties"), GradedTest("seed: value", "value", 2, True, case="seed")],
    ),
    stored(
        "cy\x1b[31m",
        [
            GradedTest("load", "load", 1, True),
            GradedTest("ties: pruned", "pruned", 2, False, case="ties", diagnoses=["no_pruning"]),
            GradedTest("random 1: random", "random", 1, False, case="random 1", visibility="hidden"),
        ],
    ),
    stored(
        "dee",
        [
            GradedTest("load", "load", 1, False),
            GradedTest("seed: pruned", "pruned", 2, False, case="seed", not_run=True),
        ],
    ),
    StoredGrade("eve", "eve.py", "error", 1, SEED, 1.0, "now", None, "the grader process died"),
]


def test_insights_count_students_per_bug_rate_each_kind_and_rank_fixed_cases():
    insights = class_insights(CLASS, HINTS)
    assert insights.graded == 4
    assert [(m.name, m.students, m.hint) for m in insights.misconceptions] == [
        ("strict_cutoff", ("ann", "bob"), HINTS["strict_cutoff"]),  # ann counts once for two tests
        ("no_pruning", ("cy\x1b[31m",), HINTS["no_pruning"]),
    ]
    rates = {k.kind: (k.passed, k.run, k.students_full, k.students) for k in insights.kinds}
    assert rates == {"load": (3, 4, 3, 4), "value": (1, 1, 1, 1), "pruned": (0, 4, 0, 3), "random": (0, 1, 0, 1)}
    assert [k.kind for k in insights.kinds] == ["load", "value", "pruned", "random"]  # report order
    # random cases are no lesson's example; dee's tests never ran
    assert [(c.case, c.students, c.graded) for c in insights.cases] == [
        ("ties", ("ann", "bob", "cy\x1b[31m"), 3),
        ("seed", ("ann",), 2),
    ]


def test_summary_text_and_svg_show_the_misconceptions_with_students_and_rates():
    insights = class_insights(CLASS, HINTS)
    text = summary_text(summarize("tree", CLASS), HINTS, insights)
    assert "\x1b" not in text and "cy␛[31m" in text
    assert "strict_cutoff                      2 students  cut as soon as alpha >= beta" in text
    assert "      ann, bob" in text
    assert "    pruned                            0% (0/4)                     0/3" in text
    assert "    ties                         3 of 3    ann, bob, cy␛[31m" in text
    svg = ElementTree.fromstring(class_picture(summarize("tree", CLASS), HINTS, insights))
    texts = [t.text for t in svg.iter("{http://www.w3.org/2000/svg}text")]
    assert "Pass rate per check kind (% of tests run)" in texts and "75% (3/4)" in texts
    assert "Fixed cases failed by the most students" in texts and "3 of 3" in texts


def test_the_class_page_lists_each_bug_with_hint_and_students_and_escapes_them():
    page = class_page(summarize("tree", CLASS), class_insights(CLASS, HINTS))
    assert "<script" not in page and "http" not in page.replace("http://www.w3.org", "") and "\x1b" not in page
    dom = parse(page)
    cards = {a.attrs["data-name"]: a for a in dom.all("article", "misconception")}
    assert list(cards) == ["strict_cutoff", "no_pruning"]
    assert cards["strict_cutoff"].one("p", "count").full_text() == "2 of 4 students"
    assert cards["strict_cutoff"].one("p", "hint").full_text() == HINTS["strict_cutoff"]
    assert [li.full_text() for li in cards["no_pruning"].all("li")] == ["cy␛[31m"]
    kinds = {tr.attrs["data-kind"]: tr.full_text() for tr in dom.all("tr", "kind")}
    assert "75% (3/4 tests)" in kinds["load"] and "0 of 3" in kinds["pruned"]
    assert [tr.attrs["data-case"] for tr in dom.all("tr", "case")] == ["ties", "seed"]
    hostile = stored("<b>x</b>", [GradedTest("<i>c</i>: value", "value", 1, False, case="<i>c</i>", diagnoses=["<s>"])])
    assert "<b>" not in class_page(summarize("tree", [hostile]), class_insights([hostile], {"<s>": "<u>"}))


def test_feedback_shows_the_graded_score_the_penalty_the_override_and_the_final_score():
    grade = stored("ann", [GradedTest("load", "load", 10, True)], penalty=LATE, override=override("add", 1))
    text = feedback_markdown(grade, "tree")
    assert "**Graded score: 10 / 10**" in text
    assert "- Late by 2 days (submitted 2026\\-03\\-03T12:00:00\\+00:00): 20% of the maximum, 2 points off." in text
    assert "- Adjusted by your instructor: +1 points." in text and "why" not in text  # the reason stays private
    assert "**Final score: 9 / 10**" in text
    on_time = stored("bob", [GradedTest("load", "load", 10, True)], penalty=Penalty("t", "file time", 0, 0, "p"))
    assert "Final score" not in feedback_markdown(on_time, "tree")


# --- roster and LMS layouts -----------------------------------------------------------------

ROSTER = (
    "Student,Name,Canvas_ID,SIS User ID,SIS_Login_ID,Section,Email,Username,IDNumber\n"
    'ann,"Smith, Ann",101,S1,asmith,A1,ann@u.edu,asmith,9001\n'
    "bob,Bob Roe,,S2,,B2,bob@u.edu,broe,9002\n"
)
GRADES = [
    stored("ann", [GradedTest("load", "load", 10, True)], penalty=LATE),
    stored("bob", [GradedTest("load", "load", 10, False)], override=override("set", 7)),
    stored("10003", [GradedTest("load", "load", 10, True)], name="roe rick"),
    StoredGrade("dee", "dee.py", "error", 1, SEED, 1.0, "now", None, "died"),
    stored("=cmd", [GradedTest("load", "load", 10, True)]),
]


def exported(fmt: str, roster: dict, **options) -> tuple[list[list[str]], object]:
    handle = io.StringIO()
    result = write_export(fmt, GRADES, roster, handle, options.pop("assignment", "Lab 1 (555)"), **options)
    return list(csv.reader(io.StringIO(handle.getvalue()))), result


def test_canvas_layout_column_by_column(tmp_path):
    (tmp_path / "roster.csv").write_text(ROSTER)
    table, result = exported("canvas", read_roster(tmp_path / "roster.csv"))
    assert table[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "Lab 1 (555)"]
    assert table[1] == ["Points Possible", "", "", "", "", "10"]
    assert table[2:] == [
        ["Smith, Ann", "101", "S1", "asmith", "A1", "8"],  # 20% of 10 off
        ["Bob Roe", "", "S2", "", "B2", "7"],  # the override
        ["roe rick", "10003", "", "", "", "10"],  # a Canvas download's numeric id is the Canvas ID
    ]
    assert result.left_out == [
        "dee: no final score (not graded, no override)",
        "=cmd: no Canvas ID, SIS User ID or SIS Login ID (add to roster)",
    ]


def test_moodle_and_gradescope_layouts_column_by_column(tmp_path):
    (tmp_path / "roster.csv").write_text(ROSTER)
    roster = read_roster(tmp_path / "roster.csv")
    table, _ = exported("moodle", roster)
    assert table == [["Email address", "Lab 1 (555)"], ["ann@u.edu", "8"], ["bob@u.edu", "7"]]
    table, _ = exported("moodle", roster, moodle_id="idnumber", assignment="=lab")
    assert table == [["ID number", "'=lab"], ["9001", "8"], ["9002", "7"]]
    table, result = exported("gradescope-csv", roster)
    assert table == [
        ["Name", "SID", "Email", "Total Score"],
        ["Smith, Ann", "S1", "ann@u.edu", "8"],
        ["Bob Roe", "S2", "bob@u.edu", "7"],
        ["roe rick", "10003", "", "10"],
    ]  # an id cell is never altered: the formula-like abgrade id is left out, not given a `'`
    assert result.unmatched == ["=cmd"]
    assert "=cmd: no sis_user_id in the roster, and the id starts like a formula" in result.left_out
    table, _ = exported("csv", {})
    assert table[0][:12] == [
        "student", "name", "file", "status", "score", "max_score", "submitted_at", "time_source", "days_late",
        "penalty", "override", "final",
    ]  # fmt: skip
    rows = {row[0]: row[:12] for row in table[1:]}
    assert rows["'=cmd"] == ["'=cmd", "", "'=cmd.py", "graded", "10", "10", "", "", "", "", "", "10"]
    assert rows["ann"][4:12] == ["10", "10", "2026-03-03T12:00:00+00:00", "timestamps file", "2", "2", "", "8"]
    assert rows["bob"][4:12] == ["0", "10", "", "", "", "", "set 7", "7"]


@pytest.mark.parametrize(
    "text, where",
    [
        ("id,name\n1,a\n", ":1: the roster needs a column `student`"),
        ("student,emial\nann,a@b\n", ":1: unknown roster column 'emial'"),
        ("student,email\nann,a@b\nann,c@d\n", ":3: student 'ann' is listed twice"),
    ],
)
def test_bad_rosters_name_the_file_line_and_fix(tmp_path, text, where):
    (tmp_path / "roster.csv").write_text(text)
    with pytest.raises(UsageError) as caught:
        read_roster(tmp_path / "roster.csv")
    assert str(caught.value).startswith(f"{tmp_path / 'roster.csv'}{where}"), str(caught.value)


def traced_openings(monkeypatch) -> list[str]:
    """The SQL statements of every connection opened from now on (sqlite3's trace callback)."""
    statements: list[str] = []
    connect = sqlite3.connect

    def traced(*args, **kwargs):
        connection = connect(*args, **kwargs)
        connection.set_trace_callback(statements.append)
        return connection

    monkeypatch.setattr(sqlite3, "connect", traced)
    return statements


def test_a_new_gradebooks_tables_are_made_in_one_transaction(tmp_path, monkeypatch):
    """One commit (one sync of the disk) for all of a new gradebook's tables and its schema
    version, not one per table; opened again, the same statements change nothing."""
    statements = traced_openings(monkeypatch)
    Gradebook(tmp_path / "gradebook.sqlite").close()
    made = [i for i, s in enumerate(statements) if s.lstrip().upper().startswith("CREATE")]
    begins = [i for i, s in enumerate(statements) if s.strip().upper().startswith("BEGIN")]
    commits = [i for i, s in enumerate(statements) if s.strip().upper().startswith("COMMIT")]
    assert len(made) >= 10
    assert any(b < made[0] for b in begins)
    last_begin = max(b for b in begins if b < made[0])
    assert [c for c in commits if c > last_begin][0] > made[-1]  # no commit between the first table and the last
    with closing(sqlite3.connect(tmp_path / "gradebook.sqlite")) as db:
        assert db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == (SCHEMA_VERSION,)
    again = Gradebook(tmp_path / "gradebook.sqlite")
    assert again.db.total_changes == 0
    again.close()
