"""Rosters and downloads as Canvas, Moodle and Blackboard give them (issue 25, points 2 and
3): each LMS's own class list read into one roster and matched to graded students, the
download names of each LMS recognised without --id-pattern, and the Moodle and Blackboard
exports following their documented import rules."""

from __future__ import annotations

import csv
import io
import shutil
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from grader.batch.discovery import discover
from grader.batch.download_names import detect_layout
from grader.batch.lms import write_export
from grader.batch.rosters import grade_column, name_key, read_any_roster, resolve
from grader.cli import main
from grader.lab_setup import UsageError
from grader.results import TestResult as GradedTest

from .test_gradebook import SCHEMA_3, stored

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "tree"

CANVAS = (
    "Student,ID,SIS User ID,SIS Login ID,Integration ID,Section,Lab 1 (4711),Lab 2 (4712)\n"
    "    Points Possible,,,,,,75,10\n"
    ",,,,,,Muted,\n"
    '"Smith, Ann",10001,S1,asmith,,A,,\n'
    '"Roe, Bob",10002,@S2,broe,,B,,\n'
)
MOODLE = (  # Participants > "Download table data as" CSV, with a byte-order mark
    "\ufeffFirst name,Last name,ID number,Email address,Roles,Groups,Last access to course\n"
    "Ann,Smith,9001,ann@u.edu,Student,No groups,1 day\n"
    "Bob,Roe,9002,+bob@u.edu,Student,No groups,Never\n"
)
BLACKBOARD = (  # Grade Center > Work Offline > Download: tab-delimited, UTF-16, as Blackboard writes .xls
    "Last Name\tFirst Name\tUsername\tStudent ID\tLast Access\tAvailability\tLab 1 [Total Pts: 75 Score] |12345\n"
    "Smith\tAnn\tasmith\t9001\t2026-03-01\tYes\t\n"
    "Roe\tBob\tbroe\t9002\t2026-03-01\tYes\t\n"
)


def write(folder: Path, name: str, text: str, encoding: str = "utf-8") -> Path:
    path = folder / name
    path.write_bytes(text.encode(encoding))
    return path


def test_canvas_gradebook_export_is_a_roster(tmp_path):
    roster = read_any_roster(write(tmp_path, "canvas.csv", CANVAS))
    assert roster.kind == "canvas" and [e.student for e in roster.entries] == ["10001", "10002"]
    assert roster.grade_columns == ("Lab 1 (4711)", "Lab 2 (4712)")
    assert roster.find("10002").fields == {
        "name": "Roe, Bob", "canvas_id": "10002", "sis_user_id": "@S2", "sis_login_id": "broe", "section": "B",
    }  # fmt: skip
    assert roster.find("asmith").student == "10001"  # by the SIS login as well
    assert grade_column(roster, "Lab 1") == "Lab 1 (4711)" and grade_column(roster, "Lab 9") == "Lab 9"


def test_moodle_participants_match_a_moodle_download_by_name(tmp_path):
    roster = read_any_roster(write(tmp_path, "moodle.csv", MOODLE))
    assert roster.kind == "moodle"
    # Moodle's download carries its own participant id (found in no roster) and the full name
    matched = resolve(roster, [("1234567", "Ann Smith"), ("7654321", "bob roe"), ("55", "Nobody Here")])
    assert {k: v.get("idnumber") for k, v in matched.items()} == {"1234567": "9001", "7654321": "9002"}
    assert name_key("Smith, Ann") == name_key("smithann") == name_key("Ann SMITH")


def test_blackboard_grade_center_download_in_utf16_with_tabs(tmp_path):
    roster = read_any_roster(write(tmp_path, "bb.xls", BLACKBOARD, "utf-16"))
    assert roster.kind == "blackboard" and [e.student for e in roster.entries] == ["asmith", "broe"]
    assert roster.grade_columns == ("Lab 1 [Total Pts: 75 Score] |12345",)
    assert grade_column(roster, "Lab 1") == "Lab 1 [Total Pts: 75 Score] |12345"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("Name,Mail\nann,a@b\n", ":1: not a roster abgrade knows"),
        (CANVAS + '"Roe, Bob",10002,S2,broe,,B,,\n', ":6: '10002' is listed twice (first at line 5)"),
        ("student,emial\nann,a@b\n", ":1: unknown roster column 'emial'"),
    ],
)
def test_a_roster_abgrade_cannot_read_names_the_file_and_line(tmp_path, text, message):
    path = write(tmp_path, "r.csv", text)
    with pytest.raises(UsageError) as caught:
        read_any_roster(path)
    assert str(caught.value).startswith(f"{path}{message}"), str(caught.value)


# --- download names --------------------------------------------------------------------------

DOWNLOADS = {
    "Canvas": ["smithann_10001_65001_lab1.py", "roebob_late_10002_65002_lab1.py", "roebob_10002_65000_lab1.py"],
    "Moodle": [
        "Ann Smith_1234567_assignsubmission_file_lab1.py",
        "Bob Roe_7654321_assignsubmission_file_lab1.py",
        "Bob Roe_7654321_assignsubmission_onlinetext_onlinetext.html",
    ],
    "Blackboard": [
        "Lab 1_asmith_attempt_2026-03-01-10-00-00_lab1.py",
        "Lab 1_asmith_attempt_2026-03-01-10-00-00.txt",
        "Lab 1_broe_attempt_2026-03-01-09-00-00_lab1.py",
        "Lab 1_broe_attempt_2026-03-02-08-00-00_lab1.py",
    ],
}
EXPECTED = {
    "Canvas": {"10001": ("smithann", "smithann_10001_65001_lab1.py"), "10002": ("roebob", "roebob_late_10002_65002_lab1.py")},
    "Moodle": {
        "1234567": ("Ann Smith", "Ann Smith_1234567_assignsubmission_file_lab1.py"),
        "7654321": ("Bob Roe", "Bob Roe_7654321_assignsubmission_file_lab1.py"),
    },
    "Blackboard": {
        "asmith": ("", "Lab 1_asmith_attempt_2026-03-01-10-00-00_lab1.py"),
        "broe": ("", "Lab 1_broe_attempt_2026-03-02-08-00-00_lab1.py"),  # the latest attempt
    },
}  # fmt: skip


@pytest.mark.parametrize("lms", list(DOWNLOADS))
def test_each_lms_download_is_recognised_without_an_id_pattern(tmp_path, lms):
    for name in DOWNLOADS[lms]:
        shutil.copyfile(FIXTURES / "correct_seed_style.py", tmp_path / name)
    (tmp_path / "README.txt").write_text("x")
    layout = detect_layout(tmp_path)
    assert layout is not None and layout.lms == lms
    found = discover(tmp_path, layout.compiled())
    assert {s.student: (s.name, s.shown) for s in found.submissions} == EXPECTED[lms]
    assert found.skipped == []


def test_plain_names_are_no_lms_download(tmp_path):
    for name in ("ann.py", "bob.ipynb", "cy"):
        (tmp_path / name).mkdir() if name == "cy" else (tmp_path / name).write_text("")
    assert detect_layout(tmp_path) is None


# --- Moodle and Blackboard imports -----------------------------------------------------------

GRADES = [stored("1234567", [GradedTest("load", "load", 75, True)], name="Ann Smith"),
          stored("7654321", [GradedTest("load", "load", 75, False)], name="Bob Roe")]  # fmt: skip


def table(fmt: str, roster, assignment: str, **options) -> tuple[list[list[str]], str, object]:
    handle = io.StringIO()
    result = write_export(fmt, GRADES, roster, handle, assignment, **options)
    return list(csv.reader(io.StringIO(handle.getvalue()))), handle.getvalue(), result


def test_moodle_import_has_the_identifier_and_the_grade_only(tmp_path):
    roster = read_any_roster(write(tmp_path, "moodle.csv", MOODLE))
    matched = resolve(roster, [(g.student, g.name) for g in GRADES])
    rows, _, result = table("moodle", matched, "Lab 1", moodle_id="idnumber")
    assert rows == [["ID number", "Lab 1"], ["9001", "75"], ["9002", "0"]]  # no added columns
    rows, _, _ = table("moodle", matched, "Lab 1")
    assert rows == [["Email address", "Lab 1"], ["ann@u.edu", "75"], ["+bob@u.edu", "0"]]  # e-mail never altered
    assert result.unmatched == []


def test_blackboard_upload_matches_on_username_and_the_column_id(tmp_path):
    roster = read_any_roster(write(tmp_path, "bb.csv", BLACKBOARD.replace("\t", ",")))
    assert roster.kind == "blackboard"
    graded = [stored("asmith", [GradedTest("load", "load", 75, True)]), stored("broe", [GradedTest("load", "load", 75, False)])]  # fmt: skip
    handle = io.StringIO()
    column = grade_column(roster, "Lab 1")
    write_export("blackboard", graded, resolve(roster, [(g.student, "") for g in graded]), handle, column)
    assert handle.getvalue().splitlines() == [
        '"Username","Lab 1 [Total Pts: 75 Score] |12345"',
        '"asmith","75"',
        '"broe","0"',
    ]  # every cell quoted, as Blackboard's comma-delimited upload asks


def test_blackboard_without_a_column_id_is_a_usage_error(tmp_path, capsys):
    with closing(sqlite3.connect(tmp_path / "gradebook.sqlite")) as db:
        db.executescript(SCHEMA_3)  # ann graded 1 of 3, bob not graded
    args = ["gradebook", "export", "--format", "blackboard", "--book", str(tmp_path)]
    assert main([*args, "--assignment", "Lab 1"]) == 2
    err = capsys.readouterr().err
    assert (
        err.startswith("abgrade: --assignment 'Lab 1': Blackboard matches a grade column by its ID")
        and len(err.splitlines()) == 1
    )
    assert main([*args, "--assignment", "Lab 1 |12345"]) == 0
    assert capsys.readouterr().out.splitlines() == ['"Username","Lab 1 |12345"', '"ann","1"']
