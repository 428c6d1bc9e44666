"""No path length of the machine matters (issue 22, point 6): under a TMPDIR of 120
characters (a macOS temp folder is about 49, a CI runner's work path can be longer), a
batch of notebooks, `grade` of a notebook and `grade` of a `.py` grade every one. A
kernel's sockets and connection file live in a short private folder whatever TMPDIR is
(grader/sandbox/socket_folder.py): a Unix socket's path holds at most 107 bytes."""

from __future__ import annotations

import csv
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from grader.sandbox import socket_folder

from .notebook_builder import notebook_from_py

TESTS = Path(__file__).resolve().parent
PROJECT = TESTS.parent
SOLUTION = PROJECT / "reference" / "solutions" / "tree.py"
BUGGY = TESTS / "fixtures" / "tree" / "bug_strict_cutoff.py"
LONG = 120


@pytest.fixture
def long_tmpdir() -> Iterator[Path]:
    """A folder whose path is exactly LONG characters, made from a short one (the suite may
    itself run under a TMPDIR longer than that: .ci/run's second run does)."""
    base = Path(tempfile.mkdtemp(prefix="abgrade-long-", dir=socket_folder.short_place()))
    path = base / ("d" * (LONG - len(str(base)) - 1))
    path.mkdir()
    assert len(str(path)) == LONG
    yield path
    shutil.rmtree(base, ignore_errors=True)


def run(args: list[str], tmpdir: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "TMPDIR": str(tmpdir)}
    return subprocess.run(
        [sys.executable, "-m", "grader", *args], cwd=PROJECT, env=env, capture_output=True, text=True, timeout=1800
    )


@pytest.mark.slow
@pytest.mark.parametrize("form", ["ipynb", "py"])
def test_grade_under_a_120_character_tmpdir(tmp_path, long_tmpdir, form):
    path = SOLUTION if form == "py" else notebook_from_py(SOLUTION, tmp_path / "lab.ipynb")
    out = tmp_path / "results.json"
    done = run(["grade", str(path), "--lab", "tree", "--seed", "1", "--json", str(out)], long_tmpdir)
    assert done.returncode == 0, done.stdout + done.stderr
    results = json.loads(out.read_text())
    assert results["score"] == results["extra_data"]["max_score"] > 0


@pytest.mark.slow
def test_a_batch_of_notebooks_under_a_120_character_tmpdir_grades_every_one(tmp_path, long_tmpdir):
    folder = tmp_path / "class"
    folder.mkdir()
    notebook_from_py(SOLUTION, folder / "10001.ipynb")
    notebook_from_py(BUGGY, folder / "10002.ipynb")
    notebook_from_py(SOLUTION, folder / "10003.ipynb")
    shutil.copyfile(SOLUTION, folder / "10004.py")
    done = run(["batch", str(folder), "--lab", "tree", "--jobs", "2", "--seed", "1"], long_tmpdir)
    assert done.returncode == 0, done.stdout + done.stderr
    with (tmp_path / "class-abgrade" / "grades.csv").open(newline="") as handle:
        rows = {row["student"]: row for row in csv.DictReader(handle)}
    assert sorted(rows) == ["10001", "10002", "10003", "10004"]
    assert {row["status"] for row in rows.values()} == {"graded"}, rows
    assert rows["10001"]["score"] == rows["10001"]["max_score"] == rows["10004"]["score"]
    assert float(rows["10002"]["score"]) < float(rows["10002"]["max_score"])


def test_a_kernels_folder_is_short_and_private_whatever_tmpdir_is(long_tmpdir, monkeypatch):
    monkeypatch.setenv("TMPDIR", str(long_tmpdir))
    monkeypatch.setattr(socket_folder.tempfile, "tempdir", None)  # read TMPDIR again
    folder = socket_folder.kernel_folder()
    try:
        socket_path = folder / "k-12345"  # ZeroMQ's ipc endpoints are the address plus "-<port>"
        assert len(os.fsencode(socket_path)) < 80
        assert not str(folder).startswith(str(long_tmpdir))
        for private in (folder, folder.parent):
            info = private.stat()
            assert stat.S_IMODE(info.st_mode) == 0o700 and info.st_uid == os.getuid()
        owner = (folder.parent / socket_folder.OWNER).read_text().split()
        assert owner == [str(os.getpid()), socket_folder.process_start(os.getpid())]
    finally:
        shutil.rmtree(folder)


def test_a_base_folder_whose_grader_is_gone_is_swept(tmp_path):
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    stale = tmp_path / f"{socket_folder.PREFIX}stale"
    stale.mkdir()
    (stale / socket_folder.OWNER).write_text(f"{gone.pid} 1\n")
    alive = tmp_path / f"{socket_folder.PREFIX}alive"
    alive.mkdir()
    (alive / socket_folder.OWNER).write_text(f"{os.getpid()} {socket_folder.process_start(os.getpid())}\n")
    socket_folder.sweep_stale(tmp_path)
    assert not stale.exists() and alive.exists()
