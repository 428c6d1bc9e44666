"""The one boundary for student-side text (grader/text.py, applied in observations.py and
grading.py) and the writers that escape for their own format: hostile reprs, exception
names, messages and output are graded through real worker processes and must never
reach a terminal as escape sequences, crash a writer, or produce invalid JSON / XML."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from dataclasses import replace
from pathlib import Path

import pytest

from grader.course.junit import junit_xml
from grader.observations import sanitize_call, sanitize_error, sanitize_load, sanitize_value
from grader.report.gradescope import results_json
from grader.report.html import render_html
from grader.report.terminal import summary
from grader.sandbox.channel import WorkerFailure
from grader.sandbox.session import LoadObservation
from grader.text import clean_data, clean_line, clean_text, utf8_safe, visible_controls

PROJECT_DIR = Path(__file__).resolve().parent.parent
TREE = PROJECT_DIR / "tests" / "fixtures" / "tree"
GRADER_COLOURS = re.compile(r"\x1b\[(?:0|1|32|31|1;31|1;32)m")


def abgrade(*args: object) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "grader", *map(str, args)], capture_output=True, text=True, cwd=PROJECT_DIR, timeout=120
    )


# --- the sanitiser itself -----------------------------------------------------------------


def test_lone_surrogates_become_replacement_characters():
    assert clean_text("a\ud800b\udfff") == "a\ufffdb\ufffd"
    assert clean_text("\ud800").encode("utf-8") == "\ufffd".encode("utf-8")


def test_control_characters_and_escape_sequences_become_visible():
    assert clean_text("\x1b[2J\x1b[1;32mScore: 63 / 63\x1b[0m") == "␛[2J␛[1;32mScore: 63 / 63␛[0m"
    assert clean_text("\x00\x07\x08\x7f") == "␀␇␈␡"
    assert clean_text("8-bit CSI \x9b2J") == "8-bit CSI \\x9b2J"
    assert clean_text("abc\u202egnp.exe") == "abc\\u202egnp.exe"


def test_newlines_and_tabs_are_kept_in_multiline_text_and_shown_in_names():
    assert clean_text("line 1\r\n\tline 2\rover") == "line 1\n\tline 2␍over"
    assert clean_line("Err\nScore: 63 / 63\t!") == "Err␊Score: 63 / 63␉!"


def test_length_is_capped_with_a_visible_marker():
    assert clean_text("x" * 2500) == "x" * 2000 + "… [500 more characters]"
    assert clean_line("n" * 250) == "n" * 200 + "… [50 more characters]"
    assert clean_text("ok", limit=2) == "ok"


def test_non_strings_become_empty_text():
    assert clean_text(None) == "" and clean_text(42) == ""


def test_nested_data_is_cleaned_and_its_shape_kept():
    data = {"expanded": ["xo./.x./..o", "\x1b[2J"], "n": 3, "k\x1b": {"deep": [1.5, None, "\ud800"]}}
    assert clean_data(data) == {"expanded": ["xo./.x./..o", "␛[2J"], "n": 3, "k␛": {"deep": [1.5, None, "\ufffd"]}}
    deep: list = []
    for _ in range(100):
        deep = [deep]
    cut = clean_data(deep)
    for _ in range(24):
        cut = cut[0]
    assert cut is None


def test_writer_helpers():
    assert visible_controls("a\x1b[31mb\nc\td") == "a␛[31mb\nc\td"
    assert utf8_safe("a\ud800") == "a\ufffd"


# --- where observations enter ------------------------------------------------------------


def test_returned_values_errors_and_calls_are_sanitised_on_entry():
    assert sanitize_value({"type": "Liar\x1b", "repr": "\ud800\x1b[2J"}) == {"type": "Liar␛", "repr": "\ufffd␛[2J"}
    assert sanitize_value("\x1b") == "␛"
    error = sanitize_error(
        {
            "type": "Err\x1b[2J",
            "message": "m\ud800",
            "frames": [["f\n.py", 3, "alpha\x1b", "raise X\x1b", 1]],
            "text": "x\x1b",
            "file": "a\nb.py",
            "line": 4,
        }
    )
    assert error == {
        "type": "Err␛[2J",
        "message": "m\ufffd",
        "frames": [["f␊.py", 3, "alpha␛", "raise X␛", 1]],
        "recursion": False,
        "memory": False,
        "exit": False,
        "line": 4,
        "text": "x␛",
        "file": "a␊b.py",
    }
    call = sanitize_call(
        {"returned": 1, "error": None, "reads": ["a\x1b"], "seconds": 0.1, "expanded": ["\x1b[2J"], "counter": 3}
    )
    assert call == {"returned": 1, "error": None, "reads": ["a␛"], "seconds": 0.1, "expanded": ["␛[2J"], "counter": 3}


def test_load_observations_are_sanitised_on_entry():
    load = LoadObservation(
        api={"alphabeta": {"defined": True, "signature": "alphabeta(x='\x1b[2J')"}},
        error={"type": "Tab\x1bError", "message": "\ud800", "frames": []},
        failure=WorkerFailure("died", "exit \x1b[2J"),
        problem="bad \ud800",
        notes=["cell 3 raised \x1b[31mImportError"],
    )
    clean = sanitize_load(load)
    assert clean.api == {"alphabeta": {"defined": True, "signature": "alphabeta(x='␛[2J')"}}
    assert clean.error["type"] == "Tab␛Error" and clean.error["message"] == "\ufffd"
    assert clean.failure.message == "exit ␛[2J" and clean.problem == "bad \ufffd"
    assert clean.notes == ["cell 3 raised ␛[31mImportError"]


# --- end to end: real workers, real writers ------------------------------------------------


@pytest.fixture(scope="module")
def ansi_run(tmp_path_factory) -> tuple[subprocess.CompletedProcess, dict, str]:
    out = tmp_path_factory.mktemp("ansi")
    run = abgrade(
        "grade",
        TREE / "hostile_ansi_summary.py",
        "--lab",
        "tree",
        "--seed",
        "1",
        "--json",
        out / "r.json",
        "--html",
        out / "r.html",
    )
    return run, json.loads((out / "r.json").read_text(encoding="utf-8")), (out / "r.html").read_text("utf-8")


def test_escape_sequences_from_the_student_never_reach_the_terminal(ansi_run):
    run, results, _ = ansi_run
    assert "Traceback" not in run.stderr and run.returncode == 1
    assert "\x1b" not in run.stdout  # not a tty: the grader adds no colours, so any ESC would be the student's
    assert "raised Err␛[2J␛[HScore: 63 / 63␛[0m" in run.stdout  # the class name, shown
    assert "returned ␛[2J␛[H␛[1;32mabgrade · lab tree" in run.stdout  # the repr, shown
    lines = run.stdout.rstrip("\n").splitlines()
    assert lines[-1] == f"Score: {results['score']:g} / {results['extra_data']['max_score']:g}" == "Score: 2 / 75"
    assert sum(line.startswith("Score:") for line in lines) == 1  # forged lines are indented, never a score line
    assert len(lines) <= 40


def test_with_colours_the_only_escapes_are_the_graders_own(grade):
    report = grade(TREE / "hostile_ansi_summary.py")
    for verbose in (False, True):
        painted = summary(report, color=True, verbose=verbose)
        assert "\x1b" not in GRADER_COLOURS.sub("", painted)
        assert painted.splitlines()[-1] == "\x1b[1mScore: 2 / 75\x1b[0m"


def test_escape_sequences_are_plain_text_in_json_and_html(ansi_run):
    _, results, page = ansi_run
    text = json.dumps(results, ensure_ascii=False)
    assert "\x1b" not in text and "\\u001b" not in text
    assert "\x1b" not in page and "␛[2J" in page


@pytest.mark.parametrize("suffix", ["--html", "--json"])
def test_a_lone_surrogate_repr_grades_fine_with_html_and_json(tmp_path, suffix):
    out = tmp_path / ("r.html" if suffix == "--html" else "r.json")
    run = abgrade("grade", TREE / "hostile_surrogate_repr.py", "--lab", "tree", "--seed", "1", suffix, out)
    assert "Traceback" not in run.stderr + run.stdout and run.returncode == 1, run.stderr
    text = out.read_bytes().decode("utf-8")  # strict: no surrogates were written
    if suffix == "--html":
        assert "\ufffd (a Lone)" in text
    else:
        results = json.loads(text)
        json.dumps(results, ensure_ascii=False).encode("utf-8")  # strict: no surrogate escapes in the JSON
        assert any("\ufffd (a Lone)" in t["output"] for t in results["tests"])
        assert "␀␇␈␛]0;pwned␇ \\u202e gnp.exe" in results["output"]  # the printed control characters, shown
        assert results["score"] == 2


def test_junit_xml_holds_hostile_text(grade):
    reports = [grade(TREE / "hostile_surrogate_repr.py"), grade(TREE / "hostile_ansi_summary.py")]
    root = ET.fromstring(junit_xml(reports).encode("utf-8"))
    assert "␛[2J" in ET.tostring(root, encoding="unicode")
    out = root.find("testsuite/system-out").text
    assert "␀␇␈␛]0;pwned␇" in out


def test_writers_survive_text_that_skipped_the_boundary(grade):
    """Defence in depth: a report built by hand (e.g. rebuilt from a gradebook) with raw
    student text still writes valid UTF-8 JSON, HTML, JUnit and a terminal summary."""
    report = grade(TREE / "hostile_surrogate_repr.py")
    raw = replace(
        report,
        student_output="\ud800\x1b[2J",
        load_notes=["cell 1 raised \ud800"],
        tests=[replace(t, output=t.output + "\ud800\x1b[2J") for t in report.tests],
    )
    json.dumps(results_json(raw), ensure_ascii=False).encode("utf-8")
    assert "\x1b" not in summary(raw, verbose=True)
    ET.fromstring(junit_xml([raw]).encode("utf-8"))
    page = render_html(raw)
    assert "\x1b" not in page and "\ud800" not in page and "␛[2J" in page


def test_a_calls_fast_paths_clean_exactly_what_cleaning_every_string_does():
    """sanitize_call skips the calls of clean_line and clean_data where a key or a value
    is plain (a batch sanitises about 500 calls per submission): the same dict, in the same
    order, as cleaning every key and value, for keys and labels of every kind."""

    def every_string(call, fields):
        clean = {clean_line(k): clean_data(v) for k, v in call.items() if isinstance(k, str)}
        clean["returned"] = sanitize_value(call.get("returned"))
        clean["error"] = sanitize_error(call.get("error"))
        for name, kind in fields.items():
            value = call.get(name)
            if kind == "labels":
                clean[name] = [clean_line(r) for r in value if isinstance(r, str)] if isinstance(value, list) else []
            else:
                clean[name] = sanitize_value(value)
        seconds = call.get("seconds")
        clean["seconds"] = (
            float(seconds) if isinstance(seconds, (int, float)) and not isinstance(seconds, bool) else 0.0
        )
        return clean

    long = "x" * 300
    calls = [
        {"reads": ["a0", "b\x1b[2J", long, 7, None, "\ud800"], "returned": 4, "error": None, "seconds": 1e-05},
        {"k\x1b": "v\x9b", long: [1, "\u202e", {"a\n": long}], "seconds": True, "board": {"type": "list", "items": []}},
        {"reads": "not a list", 3: "int key", "nested": [[["\x00"]]], "error": {"type": "E\x1b", "message": "m"}},
        {"returned": {"type": "str", "repr": "'\x1b'"}, "error": "malformed", "reads": [], "counter": 2.5},
    ]
    fields = {"reads": "labels", "board": "value"}
    for call in calls:
        for chosen in (fields, {}):
            got, expected = sanitize_call(call, chosen), every_string(call, chosen)
            assert got == expected and list(got) == list(expected), call
