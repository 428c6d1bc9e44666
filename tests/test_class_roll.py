"""class.html names every student found in the class folder: name and id, graded or not,
including a file that did not load and entries that were skipped, each with the reason."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from .test_batch import write_batch_spec
from .test_html_report import parse

TESTS = Path(__file__).resolve().parent
FIXTURES = TESTS / "fixtures" / "tree"


def test_the_class_page_lists_every_student_with_name_status_and_reason(tmp_path):
    folder = tmp_path / "lab1"
    folder.mkdir()
    shutil.copyfile(FIXTURES / "correct_seed_style.py", folder / "smithann_10001_65001_lab1.py")
    (folder / "roebob_10002_65002_lab1.py").write_text("def alphabeta(node, alpha, beta, max_player)\n    return 0\n")
    twins = folder / "doecy_10003_65003_lab1"  # a student's folder with two notebooks: skipped
    twins.mkdir()
    (twins / "a.ipynb").write_text("{}")
    (twins / "b.ipynb").write_text("{}")
    os.symlink("/etc/passwd", folder / "evil<b>_10004_65004_lab1.py")  # refused, and the name escaped
    run = subprocess.run(
        [sys.executable, "-m", "grader", "batch", folder, "--lab", "tree", "--spec", write_batch_spec(tmp_path),
         "--out", tmp_path / "out"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert run.returncode == 1, run.stderr  # two entries skipped
    page = (tmp_path / "out" / "class.html").read_text()
    assert "<b>" not in page
    rows = {tr.attrs["data-student"]: tr for tr in parse(page).all("tr", "student")}
    assert {k: v.attrs["data-status"] for k, v in rows.items()} == {
        "10001": "graded",
        "10002": "did not load",
        "10003": "skipped",
        "10004": "skipped",
    }
    cells = {k: [td.full_text() for td in v.all("td")] for k, v in rows.items()}
    assert cells["10001"][:2] == ["smithann", "10001"] and cells["10001"][4].startswith("21 / 21")
    assert cells["10002"][0] == "roebob" and "SyntaxError" in cells["10002"][5]
    assert "folder with 2 .ipynb files" in cells["10003"][5]
    assert cells["10004"][0] == "evil<b>" and "symlink: refused" in cells["10004"][5]
    assert "Students (4 found)" in page
