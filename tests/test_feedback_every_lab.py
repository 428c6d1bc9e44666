"""Feedback that teaches, in each of the five labs (issue 24, points 1 and 3): a classic bug
graded end to end, through real workers, and read the way a student reads it.

- The default terminal summary names the bug ("Likely cause: <its hint>") right under the
  first line of its first failure, within the summary's 40 lines, and a direction hint that
  doesn't fit the diagnosed bug is gone (connect4 without the single-successor extension
  was shown a cut-off hint).
- The HTML report draws every lab's cases as SVG: trees (tree lab, negamax game trees),
  tic-tac-toe boards (tic-tac-toe, agents, negamax), Connect Four boards (connect4, agents)
  and Nim heaps (negamax), with the first divergence marked where the lab knows it; and
  headless Chromium renders them (screenshots under the test's tmp_path)."""

from __future__ import annotations

import dataclasses
from collections import Counter
from pathlib import Path

import pytest

from grader.grading import grade_submission
from grader.labs import get_lab
from grader.report.html import render_html, write_html
from grader.report.terminal import MAX_LINES, summary
from grader.results import GradeReport
from grader.spec import Spec, load_spec, spec_path
from tests.test_html_report import chromium, parse, png_size, run_browser

FIXTURES = Path(__file__).resolve().parent / "fixtures"

# lab -> (fixture, the classic bug it has)
BUGS = {
    "tree": ("tree/bug_strict_cutoff.py", "strict_cutoff"),
    "tictactoe": ("tictactoe/bug_strict_cutoff.py", "strict_cutoff"),
    "negamax": ("negamax/value_not_negated.py", "value_not_negated"),
    "connect4": ("connect4/bug_no_singular_extension.py", "no_singular_extension"),
    "agents": ("agents/bug_immediate_win_not_taken.py", "immediate_win_not_taken"),
}

# lab -> the SVG pictures (class of the <svg>) its report must hold
PICTURES = {
    "tree": {"tree"},
    "tictactoe": {"board"},
    "negamax": {"tree", "board", "nim"},
    "connect4": {"connect4"},
    "agents": {"board", "connect4"},
}


def short(spec: Spec) -> Spec:
    """The agents spec with two games per match, the hidden random matches too (the
    matches are not what this file is about; test_agents_lab.py grades its fixtures so)."""
    cases = []
    for case in spec.cases:
        if "match" in case:
            case = type(case)(case)
            case["match"] = type(case["match"])(case["match"])
            case["match"]["games"] = 2
        cases.append(case)
    assert spec.random is not None
    random = dataclasses.replace(spec.random, params={**spec.random.params, "games": 2})
    return dataclasses.replace(spec, cases=cases, random=random)


@pytest.fixture(scope="module")
def graded():
    reports: dict[str, GradeReport] = {}

    def grade(lab: str) -> GradeReport:
        if lab not in reports:
            spec = load_spec(spec_path(lab))
            spec = short(spec) if lab == "agents" else spec
            reports[lab] = grade_submission(FIXTURES / BUGS[lab][0], get_lab(lab), spec, seed=1)
        return reports[lab]

    return grade


@pytest.mark.parametrize("lab", list(BUGS))
def test_the_default_summary_names_the_bug_under_its_first_failure(graded, lab):
    report = graded(lab)
    bug = BUGS[lab][1]
    assert bug in {d for t in report.tests for d in t.diagnoses}
    hint = get_lab(lab).bug_hints[bug]
    lines = summary(report).splitlines()
    assert len(lines) <= MAX_LINES
    said = f"    Likely cause: {hint}"
    assert said in lines, "\n".join(lines)
    at = lines.index(said)
    assert lines[at - 2].startswith("✗ ") and lines[at - 1].startswith("    ")  # title, first line, cause
    assert not any(line.lstrip().startswith("Hint:") for line in lines[:at])  # no generic hint before it


def test_a_hint_that_does_not_fit_the_diagnosed_bug_is_dropped(graded):
    report = graded("connect4")
    named = [t for t in report.tests if "no_singular_extension" in t.diagnoses]
    assert named and all("does it cut off only when" not in t.output for t in named)
    assert "does it cut off only when" not in summary(report)


def test_the_feedback_text_of_every_writer_has_the_cause_on_its_second_line(graded):
    """results.json, the feedback file and the HTML page show `output` whole: the cause is
    second there too, before the details."""
    for lab in BUGS:
        for test in graded(lab).tests:
            if test.diagnoses and not test.passed:
                assert test.output.splitlines()[1 : 1 + len(test.cause.splitlines())] == test.cause.splitlines()


def svg_classes(dom) -> Counter:
    return Counter(cls for svg in dom.all("svg") for cls in svg.classes)


@pytest.mark.parametrize("lab", list(BUGS))
def test_every_lab_draws_its_cases(graded, lab):
    page = render_html(graded(lab))
    dom = parse(page)
    drawn = svg_classes(dom)
    assert PICTURES[lab] <= set(drawn), drawn
    assert "<script>alert" not in page and page.replace("http://www.w3.org/2000/svg", "").count("http") == 0


@pytest.mark.parametrize("lab", ["negamax", "connect4", "agents", "tictactoe", "tree"])
def test_the_first_divergence_is_marked_where_the_lab_knows_it(graded, lab):
    dom = parse(render_html(graded(lab)))
    marked = dom.all("figure", "first-divergence") + dom.all("g", "first-divergence")
    assert marked, lab


@pytest.mark.slow
def test_every_labs_report_renders_in_headless_chromium(graded, tmp_path):
    binary = chromium()
    if binary is None:
        pytest.skip("headless Chromium not found (Debian: apt-get install chromium); the browser test needs it")
    for lab in BUGS:
        report = graded(lab)
        page_file = tmp_path / f"{lab}.html"
        write_html(report, page_file)
        source = parse(page_file.read_text(encoding="utf-8"))
        dumped = run_browser(binary, tmp_path / "profile", "--dump-dom", page_file.as_uri())
        assert dumped.returncode == 0, dumped.stderr[-2000:]
        rendered = parse(dumped.stdout)
        assert svg_classes(rendered) == svg_classes(source), lab
        screenshot = tmp_path / f"{lab}.png"
        shot = run_browser(
            binary, tmp_path / "profile", f"--screenshot={screenshot}", "--window-size=1200,2400", page_file.as_uri()
        )
        assert shot.returncode == 0 and screenshot.exists(), shot.stderr[-2000:]
        assert png_size(screenshot) == (1200, 2400)
        assert screenshot.stat().st_size > 50_000, lab  # a page with pictures, not a blank one
