"""One final score, everywhere (issue 22, point 3). A student graded, one day late at 10%
a day, then given +3 points by `gradebook override` (a notebook with a cell that raises):
every output (the override's and
the batch's terminal, grades.csv, the feedback in Markdown and HTML, class.html,
summary.txt and summary.svg, `gradebook show` as a table, for one student and as JSON,
and every LMS export) shows one set of numbers (graded, penalty, override, final), at
once after the override (no batch in between) and after the next batch."""

from __future__ import annotations

import csv
import html
import io
import json
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from xml.etree import ElementTree

import pytest

from .notebook_builder import notebook_from_py
from .test_html_report import parse

TESTS = Path(__file__).resolve().parent
TREE = TESTS / "fixtures" / "tree"
DEADLINE = "2026-03-01T23:59:00+01:00"
STAMPS = "student,submitted_at\nann,2026-03-02T05:00:00+01:00\nbob,2026-03-01T20:00:00+01:00\n"  # ann: 1 day late
ROSTER = "student,name,canvas_id,email\nann,Ann Smith,501,ann@u.edu\nbob,Bob Roe,502,bob@u.edu\n"
CELL_ERROR = "print(helper_not_defined_yet)"  # ann's first cell raises NameError; the cells after it run


@dataclass(frozen=True)
class Numbers:
    """What every output must agree on, as the outputs write them."""

    graded: str
    max_score: str
    penalty: str  # points off
    override: str  # "add 3"
    final: str


def abgrade(*args: object, cwd: Path) -> subprocess.CompletedProcess:
    done = subprocess.run(
        [sys.executable, "-m", "grader", *map(str, args)], cwd=cwd, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done


@dataclass
class Class:
    root: Path
    out: Path
    expected: Numbers
    override_said: str
    batch_said: str = ""

    def book(self, *args: object) -> str:
        return abgrade("gradebook", *args, "--book", self.out, cwd=self.root).stdout

    def batch(self) -> str:
        done = abgrade(
            "batch", self.root / "class", "--lab", "tree", "--jobs", 2, "--deadline", DEADLINE,
            "--late-per-day", 10, "--timestamps", self.root / "stamps.csv", cwd=self.root,
        )  # fmt: skip
        return done.stdout + done.stderr


@pytest.fixture(scope="module")
def graded(tmp_path_factory) -> Class:
    root = tmp_path_factory.mktemp("final")
    (root / "class").mkdir()
    notebook_from_py(TREE / "bug_strict_cutoff.py", root / "class" / "ann.ipynb", before=[CELL_ERROR])
    shutil.copyfile(TREE / "correct_fail_hard.py", root / "class" / "bob.py")
    (root / "stamps.csv").write_text(STAMPS)
    (root / "roster.csv").write_text(ROSTER)
    graded = Class(root, root / "class-abgrade", Numbers("", "", "", "", ""), "")
    graded.batch()
    said = abgrade(
        "gradebook", "override", "ann", "--add", 3, "--reason", "regrade request", "--book", graded.out, cwd=root
    ).stdout
    record = json.loads(graded.book("show", "ann", "--json"))
    graded_score, most = record["score"], record["max_score"]
    penalty = most * 10 / 100
    graded.expected = Numbers(
        f"{graded_score:g}", f"{most:g}", f"{penalty:g}", "add 3", f"{graded_score - penalty + 3:g}"
    )
    graded.override_said = said
    return graded


def numbers_everywhere(graded: Class) -> dict[str, Numbers]:
    """Each output's numbers for ann, read the way a person reads that output."""
    out, seen = graded.out, {}
    with (out / "grades.csv").open(newline="") as handle:
        row = {r["student"]: r for r in csv.DictReader(handle)}["ann"]
    seen["grades.csv"] = Numbers(row["score"], row["max_score"], row["penalty"], row["override"], row["final"])

    md = (out / "feedback" / "ann.md").read_text()
    graded_md = re.search(r"\*\*Graded score: (\S+) / (\S+)\*\*", md)
    late_md = re.search(r"- Late by 1 day \(submitted .*\): 10% of the maximum, (\S+) points off\.", md)
    add_md = re.search(r"- Adjusted by your instructor: \+(\S+) points\.", md)
    final_md = re.search(r"\*\*Final score: (\S+) / \S+\*\*", md)
    assert graded_md and late_md and add_md and final_md, md
    seen["feedback .md"] = Numbers(*graded_md.groups(), late_md[1], f"add {add_md[1]}", final_md[1])

    page = parse((out / "feedback" / "ann.html").read_text())
    graded_html = re.fullmatch(r"Graded score (\S+) / (\S+)", page.one("p", "graded").full_text())
    items = [li.full_text() for li in page.one("ul", "adjustments").all("li")]
    late_html = re.fullmatch(r"Late by 1 day \(submitted .*\): 10% of the maximum, (\S+) points off\.", items[0])
    add_html = re.fullmatch(r"Adjusted by your instructor: \+(\S+) points\.", items[1])
    final_html = re.fullmatch(r"Final score (\S+) / \S+", page.one("p", "final").full_text())
    assert graded_html and late_html and add_html and final_html, items
    seen["feedback .html"] = Numbers(*graded_html.groups(), late_html[1], f"add {add_html[1]}", final_html[1])

    rows = parse((out / "class.html").read_text()).one("section", "adjusted").all("tr", "adjusted")
    [cells] = [r for r in rows if r.attrs["data-student"] == "ann"]
    graded_cell, most_cell = cells.one("td", "graded").full_text().split(" / ")
    penalty_cell = cells.one("td", "penalty").full_text().removeprefix("-")
    seen["class.html"] = Numbers(
        graded_cell,
        most_cell,
        penalty_cell,
        cells.one("td", "override").full_text(),
        cells.one("td", "final").full_text(),
    )
    assert cells.one("td", "late").full_text() == "1 day late"

    seen["summary.txt"] = _table_row((out / "summary.txt").read_text())
    svg = ElementTree.fromstring((out / "summary.svg").read_text())
    texts = [t.text or "" for t in svg.iter("{http://www.w3.org/2000/svg}text")]
    [line] = [t for t in texts if t.startswith("ann: ")]
    found = re.fullmatch(r"ann: graded (\S+) / (\S+), 1 day late -(\S+), (add \S+), final (\S+)", line)
    assert found, line
    seen["summary.svg"] = Numbers(*found.groups())

    table = graded.book("show")
    header, *lines = table.splitlines()
    starts = {column: header.index(column) for column in header.split()}
    [ann] = [line for line in lines if line.startswith("ann ")]

    def cell(column: str) -> str:
        names = list(starts)
        end = starts[names[names.index(column) + 1]] if names.index(column) + 1 < len(names) else None
        return ann[starts[column] : end].strip()

    assert cell("late") == "1d"
    seen["gradebook show"] = Numbers(
        cell("score"), cell("max"), cell("penalty").removeprefix("-"), cell("override"), cell("final")
    )

    text = graded.book("show", "ann")
    score_line = re.search(r"^score\s+(\S+) / (\S+) ", text, re.M)
    late_line = re.search(r"late by 1 day\(s\): -10%, -(\S+) points", text)
    override_line = re.search(r"^override\s+(add \S+) by ", text, re.M)
    final_line = re.search(r"^final\s+(\S+)$", text, re.M)
    assert score_line and late_line and override_line and final_line, text
    seen["gradebook show ann"] = Numbers(*score_line.groups(), late_line[1], override_line[1], final_line[1])

    for name, record in (
        ("gradebook show --json", next(r for r in json.loads(graded.book("show", "--json")) if r["student"] == "ann")),
        ("gradebook show ann --json", json.loads(graded.book("show", "ann", "--json"))),
    ):
        override = record["override"]
        seen[name] = Numbers(
            f"{record['score']:g}",
            f"{record['max_score']:g}",
            f"{record['penalty']['points']:g}",
            f"{override['mode']} {override['points']:g}",
            f"{record['final']:g}",
        )
        assert record["penalty"]["late"] == "1 day late"

    said = re.search(
        r"graded (\S+) / (\S+), 1 day late, penalty -(\S+), override (add \S+), final (\S+)", graded.override_said
    )
    assert said, graded.override_said
    seen["gradebook override (terminal)"] = Numbers(*said.groups())
    if graded.batch_said:
        seen["batch (terminal)"] = _table_row(graded.batch_said)
    return seen


def _table_row(text: str) -> Numbers:
    """ann's row of the class summary's table of adjusted scores (batch's terminal, summary.txt)."""
    found = re.search(r"^\s+ann\s+(\S+) / (\S+)\s+1 day late\s+-(\S+)\s+(add \S+)\s+(\S+)$", text, re.M)
    assert found, text
    return Numbers(*found.groups())


def finals_in_lms_exports(graded: Class) -> dict[str, str]:
    """ann's final score in every export layout."""
    roster = ("--roster", graded.root / "roster.csv")
    finals = {}
    canvas = list(csv.reader(io.StringIO(graded.book("export", "--format", "canvas", *roster))))
    finals["canvas"] = next(row for row in canvas if row[1] == "501")[5]
    moodle = list(csv.reader(io.StringIO(graded.book("export", "--format", "moodle", *roster))))
    finals["moodle"] = next(row for row in moodle if row[0] == "ann@u.edu")[1]
    gradescope = list(csv.reader(io.StringIO(graded.book("export", "--format", "gradescope-csv", *roster))))
    finals["gradescope-csv"] = next(row for row in gradescope if row[1] == "ann")[3]
    own = list(csv.DictReader(io.StringIO(graded.book("export", "--format", "csv"))))
    finals["csv"] = next(row for row in own if row["student"] == "ann")["final"]
    return finals


@pytest.mark.slow
def test_every_output_shows_one_final_score_at_once_after_an_override(graded):
    expected = graded.expected
    seen = numbers_everywhere(graded)
    assert seen == {name: expected for name in seen}, seen
    assert set(finals_in_lms_exports(graded).values()) == {expected.final}
    bob = {row["student"]: row for row in csv.DictReader((graded.out / "grades.csv").open(newline=""))}["bob"]
    assert (bob["days_late"], bob["penalty"], bob["final"]) == ("0", "0", bob["score"])  # on time: as graded


@pytest.mark.slow
def test_the_next_batch_shows_the_same_numbers_in_the_terminal_and_every_file(graded):
    graded.batch_said = graded.batch()
    assert "0 graded now, 2 up to date" in graded.batch_said
    seen = numbers_everywhere(graded)
    assert "batch (terminal)" in seen
    assert seen == {name: graded.expected for name in seen}, seen
    assert set(finals_in_lms_exports(graded).values()) == {graded.expected.final}


@pytest.mark.slow
def test_one_grade_of_the_notebook_shows_one_score_in_the_terminal_json_and_html(graded):
    """`abgrade grade` of ann's notebook (the spec's seed, not the batch's: its own random
    cases): the terminal's score, results.json's and the HTML report's are one, and each
    says the cell error."""
    ann = graded.root / "class" / "ann.ipynb"
    json_out, html_out = graded.root / "ann.json", graded.root / "ann.html"
    done = subprocess.run(
        [sys.executable, "-m", "grader", "grade", ann, "--lab", "tree", "--json", json_out, "--html", html_out],
        cwd=graded.root, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode in (0, 1), done.stdout + done.stderr
    results = json.loads(json_out.read_text())
    page = parse(html_out.read_text())
    terminal = re.search(r"^Score: (\S+) / (\S+)$", done.stdout, re.M)
    in_html = re.fullmatch(r"Score (\S+) / (\S+)", page.one("p", "total").full_text())
    assert terminal and in_html, done.stdout
    assert terminal.groups() == in_html.groups() == (f"{results['score']:g}", graded.expected.max_score)
    said = "cell In [1] raised NameError: name 'helper_not_defined_yet' is not defined"
    assert said in done.stdout and said in results["tests"][0]["output"], done.stdout
    assert said in html.unescape(html_out.read_text())
