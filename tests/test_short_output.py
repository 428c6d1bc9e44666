"""Short, useful output (issue 14): at most 40 terminal lines by default whatever the
submission, `--verbose` for everything; a submission that does not load shows its load
failure once and one line for what was not run (terminal, HTML, Gradescope JSON); every
SyntaxError subclass shows file:line first; notebook cell notes are listed even when every
test passes. Graded through real workers and a real kernel, via the `abgrade` command."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from grader.exercises import exercise_text
from grader.report.gradescope import results_json
from grader.report.html import render_html
from grader.report.terminal import MAX_LINES, summary

from .notebook_builder import notebook_from_py

PROJECT_DIR = Path(__file__).resolve().parent.parent
FIXTURES = PROJECT_DIR / "tests" / "fixtures"
NOT_RUN_LINE = "tests not run: the submission did not load."


def abgrade(*args: object) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "grader", *map(str, args)], capture_output=True, text=True, cwd=PROJECT_DIR, timeout=300
    )


def graded(path: Path, lab: str, tmp: Path, *more: object) -> tuple[list[str], dict, str]:
    """(terminal lines, results.json, HTML page) of one `abgrade grade` run."""
    run = abgrade("grade", path, "--lab", lab, "--seed", "3", "--json", tmp / "r.json", "--html", tmp / "r.html", *more)
    assert "Traceback" not in run.stderr and run.returncode in (0, 1), run.stderr
    return (
        run.stdout.rstrip("\n").splitlines(),
        json.loads((tmp / "r.json").read_text()),
        (tmp / "r.html").read_text(),
    )


@pytest.fixture(scope="module")
def skeleton(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("skeleton") / "t.py"
    path.write_text(exercise_text("tictactoe"))
    return path


def test_the_unfilled_tictactoe_skeleton_fits_in_40_lines(skeleton, tmp_path):
    lines, results, _ = graded(skeleton, "tictactoe", tmp_path)
    assert len(lines) <= MAX_LINES  # was 873
    assert lines[-1] == f"Score: {results['score']:g} / {results['extra_data']['max_score']:g}"
    failed_kinds = {t["tags"][0] for t in results["tests"] if t["status"] == "failed" and t["visibility"] == "visible"}
    shown = "\n".join(lines)
    for kind in failed_kinds:  # every failing kind is named by at least one failure
        assert f": {kind}  (0/" in shown, kind
    assert "more failing tests (--verbose shows everything)" in shown


def test_verbose_shows_every_failure_in_full(skeleton, tmp_path):
    lines, results, _ = graded(skeleton, "tictactoe", tmp_path, "--verbose")
    shown = "\n".join(lines)
    visible_failures = [t for t in results["tests"] if t["status"] == "failed" and t["visibility"] == "visible"]
    assert len(lines) > 800
    assert all(f"✗ {t['name']}  (0/" in shown for t in visible_failures)
    assert all(line in shown for t in visible_failures for line in t["output"].splitlines())


def test_one_missing_line_fits_in_40_lines(tmp_path):
    lines, _, _ = graded(FIXTURES / "tictactoe" / "bug_draw_not_detected.py", "tictactoe", tmp_path)
    assert len(lines) <= MAX_LINES  # was 575
    shown = "\n".join(lines)
    assert "✗ full-boards: game_over  (0/1)\n    game_over was wrong on 2 of 5 boards." in shown  # in full
    assert lines[-1].startswith("Score: ")


def test_a_syntax_error_shows_the_load_failure_once_and_one_not_run_line(tmp_path):
    path = tmp_path / "syn.py"
    path.write_text("def alphabeta(:\n")
    lines, results, page = graded(path, "tree", tmp_path)
    shown = "\n".join(lines)
    assert len(lines) <= 20
    assert shown.count("SyntaxError") == 1 and "✗ load  (0/1)\n    syn.py:1: SyntaxError: " in shown
    not_run = len(results["tests"]) - 1
    assert f"{not_run} {NOT_RUN_LINE}" in lines and shown.count("not run") == 1
    # Gradescope keeps one entry per test, each with a short output, and says it once on top
    assert all(
        t["output"] == "not run: the submission did not load (see the load test)."
        for t in results["tests"]
        if t["name"] != "load"
    )
    assert f"{not_run} tests not run" in results["output"]
    # the HTML: the load case, then one line (no block per test that never ran)
    assert page.count('class="not-run"') == 1 and f"{not_run} {NOT_RUN_LINE}" in page
    assert page.count('<details class="case') == 1


@pytest.mark.parametrize(
    ("source", "kind", "line"),
    [
        ("def alphabeta(node, alpha, beta, max_player):\n\tif 1:\n        return 1\n", "TabError", 3),
        ("def alphabeta(node, alpha, beta, max_player):\nreturn 1\n", "IndentationError", 2),
    ],
)
def test_syntax_error_subclasses_show_file_and_line_first(tmp_path, source, kind, line):
    path = tmp_path / "lab.py"
    path.write_text(source)
    lines, results, _ = graded(path, "tree", tmp_path)
    (load,) = [t for t in results["tests"] if t["name"] == "load"]
    assert load["output"].startswith(f"lab.py:{line}: {kind}: ")
    assert "no `alphabeta` is defined" not in load["output"]


@pytest.fixture(scope="module")
def notebook_with_failing_cell(tmp_path_factory) -> tuple[list[str], dict, str]:
    tmp = tmp_path_factory.mktemp("nb")
    path = notebook_from_py(
        FIXTURES / "tree" / "correct_fail_hard.py", tmp / "lab.ipynb", before=["import numpy_does_not_exist_here"]
    )
    return graded(path, "tree", tmp)


def test_notebook_cell_notes_show_when_every_test_passes(notebook_with_failing_cell):
    lines, results, page = notebook_with_failing_cell
    assert results["score"] == results["extra_data"]["max_score"] > 0
    note = "cell In [1] raised ModuleNotFoundError: No module named 'numpy_does_not_exist_here'"
    advice = "(only the notebook is graded: if numpy_does_not_exist_here.py is a file of yours beside it"
    assert "While loading the submission:" in lines and any(line.startswith(f"  - {note} {advice}") for line in lines)
    assert f"While loading the submission:\n  - {note} {advice}" in results["output"]
    assert '<section class="load-notes">' in page and note.replace("'", "&#x27;") in page
    assert lines[-1] == f"Score: {results['score']:g} / {results['extra_data']['max_score']:g}"


def test_load_notes_are_on_the_report_for_other_writers(grade):
    assert grade("correct_fail_hard").load_notes == []
    report = replace(grade("correct_fail_hard"), load_notes=[f"cell {n} raised NameError: x" for n in range(1, 9)])
    text = summary(report)
    assert "  - cell 5 raised NameError: x" in text and "cell 6 raised" not in text
    assert "  … 3 more (--verbose shows everything)" in text
    assert "cell 8 raised" in summary(report, verbose=True)
    assert "cell 8 raised" in render_html(report) and "cell 8 raised" in results_json(report)["output"]
