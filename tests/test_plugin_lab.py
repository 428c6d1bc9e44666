"""Labs are plugins: a lab shipped as its own package (tests/fixtures/plugin_lab), installed
next to abgrade, is found through the `abgrade.labs` entry points and graded with
`abgrade grade --lab double`, with no line of abgrade naming it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

TESTS_DIR = Path(__file__).resolve().parent

PLUGIN = TESTS_DIR / "fixtures" / "plugin_lab"


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    target = tmp_path_factory.mktemp("plugin")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "-q",
            "--no-deps",
            "--no-build-isolation",
            "--target",
            str(target),
            str(PLUGIN),
        ],
        check=True,
        capture_output=True,
    )
    return target


def grade(installed: Path, tmp_path: Path, submission: str) -> tuple[int, dict]:
    out = tmp_path / "results.json"
    env = {**os.environ, "PYTHONPATH": str(installed)}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "grader",
            "grade",
            str(TESTS_DIR / "fixtures" / submission),
            "--lab",
            "double",
            "--spec",
            str(installed / "double_lab" / "double.yaml"),
            "--json",
            str(out),
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.exists(), done.stderr
    return done.returncode, json.loads(out.read_text())


@pytest.mark.slow
def test_an_installed_lab_package_grades_with_lab_name(installed: Path, tmp_path: Path) -> None:
    code, results = grade(installed, tmp_path, "plugin_double_right.py")
    assert code == 0 and (results["score"], results["extra_data"]["max_score"]) == (3, 3)
    assert [t["tags"][0] for t in results["tests"]] == ["load", "value"]
    code, results = grade(installed, tmp_path, "plugin_double_wrong.py")
    assert code == 1 and results["score"] == 1
    assert "double(3) returned 5, expected 6" in results["tests"][1]["output"]
