"""The head start of a `.py` grade (commands/grade_early.py, issue 26 goal 1): the
student's worker is spawned before argparse, the commands and the pipeline are imported,
only for a command line spelled plainly, and taken only for the submission and lab that
argparse then reads; a session no grade takes leaves no process, folder or uid behind."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from grader.commands import grade_early
from grader.commands.grade_early import plain_grade_of_py
from grader.paths import PROJECT_DIR, SOLUTIONS_DIR

TREE = str(SOLUTIONS_DIR / "tree.py")


@pytest.mark.parametrize(
    "words",
    [
        ["grade", TREE, "--lab", "tree"],
        ["grade", "--lab", "tree", TREE, "-q"],
        ["grade", TREE, "--lab=tree", "--seed", "3", "--json", "out.json", "--show-hidden", "-v"],
        ["grade", TREE, "--lab", "tree", "--spec", "x.yaml", "--config", "c.yaml", "--html", "o.html", "--quiet"],
    ],
)
def test_a_plain_grade_of_an_existing_py_gets_a_head_start(words: list[str]) -> None:
    assert plain_grade_of_py(words) == (TREE, "tree")


@pytest.mark.parametrize(
    "words",
    [
        [],
        ["batch", TREE, "--lab", "tree"],
        ["grade", TREE],  # no --lab: argparse's error
        ["grade", TREE, "--lab"],
        ["grade", TREE, "--lab", "-q"],
        ["grade", TREE, TREE, "--lab", "tree"],
        ["grade", TREE, "--la", "tree"],  # an abbreviation: argparse's to read
        ["grade", TREE, "--lab", "tree", "-qv"],
        ["grade", TREE, "--lab", "tree", "--help"],
        ["grade", TREE, "--lab", "tree", "--"],
        ["grade", TREE, "--lab", "tree", "--quiet=yes"],
        ["grade", str(SOLUTIONS_DIR / "no-such-file.py"), "--lab", "tree"],
        ["grade", str(SOLUTIONS_DIR), "--lab", "tree"],  # a folder
        ["grade", str(PROJECT_DIR / "README.md"), "--lab", "tree"],
    ],
)
def test_anything_else_is_left_to_argparse(words: list[str]) -> None:
    assert plain_grade_of_py(words) is None


def test_a_session_opened_for_another_submission_or_lab_is_closed_not_taken(tmp_path: Path) -> None:
    submission = tmp_path / "tree.py"
    submission.write_text(Path(TREE).read_text())
    grade_early.start(["grade", str(submission), "--lab", "tree"])
    assert grade_early._EARLY is not None
    session = grade_early._EARLY[2]
    assert grade_early.take(submission, "tictactoe") is None
    assert not session.workdir.exists() and session._early is None

    grade_early.start(["grade", str(submission), "--lab", "tree"])
    assert grade_early._EARLY is not None
    taken = grade_early.take(submission, "tree")
    assert taken is not None and grade_early._EARLY is None
    taken.close()
    taken.wait_closed()
    assert not taken.workdir.exists()


SPY = """
import sys
import grader.sandbox.first_spawn as first_spawn
seen = {"ordinary": [], "first": []}
first, spawn = first_spawn._fork_exec, first_spawn.spawn
def spy_first(*args):
    seen["first"].append(sorted(sys.modules))
    return first(*args)
def spy_spawn(*args):
    spawned = spawn(*args)
    import grader.sandbox.session as session  # imported next by grade_early anyway: spy on it now
    ordinary = session.PythonSession._start_worker
    def spy(self):
        seen["ordinary"].append(sorted(sys.modules))
        return ordinary(self)
    session.PythonSession._start_worker = spy
    return spawned
first_spawn._fork_exec, first_spawn.spawn = spy_first, spy_spawn
from grader.cli import main
seen["code"] = main(sys.argv[1:])
import json  # not before: it is one of the imports the first spawn must not need
print(json.dumps(seen))
"""
# what a spawn comes before: the CLI, the pipeline, the lab, the spec, the observer's replies
LATER = {"argparse", "grader.commands.grade", "grader.grading", "grader.labs", "grader.spec.loader"}
LATER |= {"grader.observations", "grader.text"}
# ... and, for the first spawn, everything the ordinary session imports first
HEAVY = {"dataclasses", "subprocess", "ctypes", "json", "tempfile", "shutil", "typing", "inspect"}
HEAVY |= {"grader.spec.model", "grader.sandbox.worker_zygote", "grader.sandbox.identity", "grader.sandbox.cgroup"}


def test_the_worker_is_spawned_before_the_cli_and_the_pipeline_are_imported(tmp_path: Path) -> None:
    """In a fresh cache the ordinary early session spawns (and stores first_spawn's recipe
    once its worker is confined); the next grade spawns first, with next to nothing imported."""
    env = {**os.environ, "ABGRADE_CACHE_DIR": str(tmp_path / "cache")}
    env.pop("ABGRADE_CACHE", None)
    runs = []
    for _ in range(2):
        run = subprocess.run(
            [sys.executable, "-c", SPY, "grade", TREE, "--lab", "tree", "--seed", "1", "-q"],
            capture_output=True,
            text=True,
            cwd=tmp_path,
            env=env,
            timeout=120,
        )
        assert run.returncode == 0, run.stderr
        runs.append(json.loads(run.stdout.splitlines()[-1]))
    ordinary, first = runs
    assert ordinary["code"] == 0 and len(ordinary["ordinary"]) == 1 and ordinary["first"] == []
    assert LATER & set(ordinary["ordinary"][0]) == set()
    from grader.sandbox.isolation import detect_isolation

    if detect_isolation().level != "namespaces":
        pytest.skip("the first spawn is for the namespaces level only; this machine has the process level")
    assert first["code"] == 0 and first["ordinary"] == [] and len(first["first"]) == 1  # the grade took it
    assert (LATER | HEAVY) & set(first["first"][0]) == set()


def _running_with(marker: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and marker.encode() in (entry / "cmdline").read_bytes():
                found.append(int(entry.name))
        except OSError:
            pass
    return found


@pytest.mark.parametrize(
    "extra, says",
    [
        (["--seed", "abc"], "invalid int value"),  # argparse's own error, after the spawn
        (["--json", "/no/such/folder/results.json"], "no folder"),  # grade's check, after the take
        (["--lab", "no-such-lab"], "unknown lab"),  # the lab, after the take
    ],
)
def test_a_command_line_refused_after_the_head_start_leaves_nothing_behind(
    tmp_path: Path, extra: list[str], says: str
) -> None:
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    lab = ["--lab", "tree"] if "--lab" not in extra else []
    run = subprocess.run(
        [sys.executable, "-m", "grader", "grade", TREE, *lab, *extra],
        capture_output=True,
        text=True,
        cwd=PROJECT_DIR,
        env={**os.environ, "TMPDIR": str(temporary)},
        timeout=120,
    )
    assert run.returncode == 2 and says in run.stderr and "Traceback" not in run.stderr, run.stderr
    # the worker's command line names its work folder, which was made under `temporary`
    assert _running_with(str(temporary)) == []
    assert [p.name for p in temporary.iterdir() if p.name.startswith("abgrade-")] == []


def test_a_session_whose_worker_cannot_start_leaves_no_folder_or_uid(tmp_path: Path, monkeypatch) -> None:
    """The head start swallows an opening's error (grade opens again and reports it): the
    session that failed half-way must not keep its work folder or its leased uid."""
    import tempfile

    from grader.sandbox.session import PythonSession

    made: list[PythonSession] = []

    def refused(self: PythonSession) -> None:
        made.append(self)
        raise OSError("no more processes")

    folder = tmp_path / "tmp"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    monkeypatch.setenv("ABGRADE_CACHE", "0")  # no recipe: the ordinary session (first_spawn's: test_first_spawn.py)
    monkeypatch.setattr(PythonSession, "_start_worker", refused)
    grade_early.start(["grade", TREE, "--lab", "tree"])
    assert grade_early._EARLY is None and len(made) == 1
    assert list(folder.iterdir()) == []
    identity = made[0].identity
    assert identity is None or identity._lease_fd is None  # released (None: not root, nothing leased)


def test_the_head_start_knows_every_option_of_grade_and_whether_it_takes_a_value() -> None:
    """An option added to `grade` and not here would quietly cost every grade its head start
    (a flag read as taking a value: the wrong word taken for the submission, then refused
    by `take`)."""
    from grader.cli import build_parser

    parser = build_parser(only="grade")
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    options = {
        option: action.nargs != 0
        for action in commands.choices["grade"]._actions
        for option in action.option_strings
        if option not in ("-h", "--help")
    }
    assert {o for o, valued in options.items() if valued} == grade_early._VALUED
    assert {o for o, valued in options.items() if not valued} == grade_early._FLAGS
