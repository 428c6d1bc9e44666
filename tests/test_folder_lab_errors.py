"""A broken lab folder is one line naming the file and the line (`file:line: what: problem`,
exit code 2 on the command line), never a traceback and never a student's lost points:
the game module, the reference, a bug replay, a variant and the spec (at its YAML line).

Each test starts from the working lab `abgrade lab new` writes, breaks one thing in it and
reads the error."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from grader.lab_setup import UsageError, load_lab
from grader.registry import new_lab_folder
from grader.spec import SpecError

PROJECT = Path(__file__).resolve().parent.parent


@pytest.fixture
def lab(tmp_path: Path) -> Path:
    folder = tmp_path / "sticks"
    new_lab_folder(folder)
    return folder


def line_of(path: Path, text: str) -> int:
    """The line of `text` in `path`; a leading newline: a line that starts with it."""
    lines = path.read_text().splitlines()
    if text.startswith("\n"):
        return next(n for n, line in enumerate(lines, start=1) if line.startswith(text[1:]))
    return next(n for n, line in enumerate(lines, start=1) if text in line)


def replace(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, (path, old)
    path.write_text(text.replace(old, new, 1))


def error(folder: Path, spec: Path | None = None, plans: bool = False) -> SpecError:
    """The SpecError loading (and with `plans`, planning) the lab raises."""
    with pytest.raises(SpecError) as caught:
        found, found_spec = load_lab(str(folder), spec)
        if plans:
            found.plans(found_spec, 0)
    message = str(caught.value)
    assert "\n" not in message and "Traceback" not in message
    return caught.value


def test_the_skeleton_itself_loads_and_plans(lab: Path) -> None:
    found, spec = load_lab(str(lab))
    assert found.name == "sticks" and found.plans(spec, 0) and found.verify(spec) == []


# --- game.py ------------------------------------------------------------------------------

GAME_BREAKS: list[tuple[str, str, str, str, str]] = [
    # (text in game.py, replaced by, the field named, a phrase of the problem, the line named)
    ("def moves(sticks):", "def moves(sticks)", "load", "SyntaxError", "def moves"),
    ('MODULE = "game"', 'MODULE = "game"\n1 / 0', "load", "ZeroDivisionError: division by zero", "1 / 0"),
    ("STUDENT_API = {", "NOT_THE_API = {", "STUDENT_API", "missing", '"""The game'),
    (
        "alphabeta(sticks, alpha, beta, maximizing)",
        "alphabeta(sticks, low, high, maximizing)",
        "SEARCH",
        "no parameter 'alpha'",
        "SEARCH =",
    ),
    ('"best_move(sticks)"', '"best_move(pile)"', "CHOOSE", "no parameter 'sticks'", "CHOOSE ="),
    ('SEARCH = "alphabeta"', 'SEARCH = "search"', "SEARCH", "must name a function of STUDENT_API", "SEARCH ="),
    ('STATE = "sticks"', 'STATE = "pile"', "STATE", "must name the parameter", "STATE ="),
    ('"outcome": "state"}', '"score": "state"}', "WATCH", "'score' is not a function", "WATCH ="),
    (
        'WATCH = {"moves": "state", "outcome": "state"}',
        'WATCH = {"moves": "read"}',
        "WATCH",
        "the role must be",
        "WATCH =",
    ),
    ('MODULE = "game"', 'MODULE = "random"', "MODULE", "a module the student may import", "MODULE ="),
    ("REPEATS = True", "REPEATS = 1", "REPEATS", "must be True or False", "REPEATS ="),
    ("def after(call, move):", "after = 3\n\n\ndef _after(call, move):", "after", "must be a function", "after = 3"),
]


@pytest.mark.parametrize(
    ("old", "new", "field", "problem", "where"), GAME_BREAKS, ids=[f"{b[2]}:{b[3][:20]}" for b in GAME_BREAKS]
)
def test_a_broken_game_module_is_one_line_at_its_line(
    lab: Path, old: str, new: str, field: str, problem: str, where: str
) -> None:
    game = lab / "game.py"
    replace(game, old, new)
    found = error(lab)
    assert found.file == f"{lab}/game.py" and found.field == field and problem in found.problem, str(found)
    assert found.line == line_of(game, where), str(found)


def test_choose_needs_the_after_hook(lab: Path) -> None:
    replace(lab / "game.py", "def after(call, move):", "def _after(call, move):")
    found = error(lab)
    assert found.field == "CHOOSE" and "after(call, move)" in found.problem


# --- reference.py, bugs/, variants ----------------------------------------------------------


def test_a_reference_without_a_function_of_the_api_names_it(lab: Path) -> None:
    replace(lab / "reference.py", "def best_move(sticks):", "def best_choice(sticks):")
    found = error(lab)
    assert (found.file, found.field) == (f"{lab}/reference.py", "best_move")
    assert "best_move(sticks)" in found.problem


def test_a_reference_that_raises_on_a_case_is_the_instructors_error_at_its_line(lab: Path) -> None:
    reference = lab / "reference.py"
    replace(
        reference, "    if sticks == 0:", "    if sticks == 6:\n        raise RuntimeError('six')\n    if sticks == 0:"
    )
    found = error(lab, plans=True)
    assert found.file == f"{lab}/reference.py" and found.line == line_of(reference, "raise RuntimeError")
    assert "alphabeta(7, -inf, inf, True) raised RuntimeError: six" in found.problem


def test_a_reference_that_returns_no_number(lab: Path) -> None:
    replace(
        lab / "reference.py", "    if sticks == 0:", "    if sticks == 7:\n        return 'seven'\n    if sticks == 0:"
    )
    found = error(lab, plans=True)
    assert (
        found.file == f"{lab}/reference.py"
        and "alphabeta(7, -inf, inf, True) returned 'seven', not a number" in found.problem
    )


def test_a_bug_replay_without_a_hint(lab: Path) -> None:
    replace(lab / "bugs" / "no_pruning.py", "HINT = ", "NOTE = ")
    found = error(lab)
    assert (found.file, found.field) == (f"{lab}/bugs/no_pruning.py", "HINT") and "one line" in found.problem


def test_the_ways_of_one_bug_must_give_the_same_hint(lab: Path) -> None:
    """bugs/NAME/*.py are one bug written several ways, diagnosed as NAME: one hint for all."""
    ways = lab / "bugs" / "no_pruning"
    ways.mkdir()
    (lab / "bugs" / "no_pruning.py").rename(ways / "first.py")
    (ways / "second.py").write_text((ways / "first.py").read_text())
    assert load_lab(str(lab))[0].bug_hints.keys() >= {"no_pruning"}  # type: ignore[attr-defined]
    replace(ways / "second.py", "HINT = ", "HINT = 'Another hint.'\nOLD_HINT = ")
    found = error(lab)
    assert (found.file, found.field) == (f"{lab}/bugs/no_pruning/second.py", "HINT")
    assert "the same in every way of writing bugs/no_pruning" in found.problem


def test_a_bug_replay_that_does_not_load(lab: Path) -> None:
    bug = lab / "bugs" / "no_pruning.py"
    replace(bug, "import math", "import math\nimport no_such_module_here")
    found = error(lab)
    assert found.file == f"{lab}/bugs/no_pruning.py" and found.line == line_of(bug, "no_such_module_here")
    assert "ModuleNotFoundError" in found.problem


def test_a_variant_that_is_no_file_of_the_folder(lab: Path) -> None:
    spec = lab / "spec.yaml"
    replace(
        spec, "title: Alpha-beta on a pile of sticks", "title: Alpha-beta on a pile of sticks\nvariants: [fail_hard.py]"
    )
    found = error(lab, plans=True)
    assert found.file == f"{lab}/spec.yaml" and found.line == line_of(spec, "variants:")
    assert "'fail_hard.py' is no Python file of the lab folder" in found.problem


def test_a_missing_file_or_folder(lab: Path) -> None:
    (lab / "reference.py").unlink()
    found = error(lab)
    assert found.file == f"{lab}/reference.py" and "missing" in found.problem
    with pytest.raises(UsageError, match="no such lab folder"):
        load_lab(str(lab.parent / "nowhere"))


# --- spec.yaml ------------------------------------------------------------------------------

SPEC_BREAKS: list[tuple[str, str, str, str, str]] = [
    # (text in spec.yaml, replaced by, the field named, a phrase of the problem, the line named)
    ("lab: sticks", "lab: tree", "lab", "the name of an installed lab", "lab: tree"),
    ("lab: sticks", "lab: 'two words'", "lab", "is not a lab name", "lab: 'two"),
    ("  choice: {points: 1}", "  cache: {points: 1}", "checks.cache", "unknown check kind", "cache:"),
    (
        "maximizing: true}\n    expect",
        "maximizing: true, depth: 2}\n    expect",
        "cases[0].call.depth",
        "not a parameter",
        "depth: 2",
    ),
    ("{sticks: 4, maximizing: true}", "{sticks: 4}", "cases[0].call.maximizing", "missing", "{sticks: 4}"),
    (
        "    expect: {value: -1",
        "    window: [1, -1]\n    expect: {value: -1",
        "cases[0].window",
        "alpha < beta",
        "window:",
    ),
    ("    expect: {value: -1", "    world: {size: 3}\n    expect: {value: -1", "cases[0].world", "no setup", "world:"),
    ("  sticks: [5, 12]", "  heaps: [5, 12]", "random.heaps", "unknown setting of random_case", "heaps:"),
    ("  sticks: [5, 12]", "  sticks: [12, 5]", "random", "bad generator settings: ", "\nrandom:"),
    (
        "{value: -1, nodes: 15}",
        "{value: -1, moves: 15}",
        "cases[0].expect.moves",
        "not used by this case's checks",
        "moves: 15",
    ),
]


@pytest.mark.parametrize(("old", "new", "field", "problem", "where"), SPEC_BREAKS, ids=[b[2] for b in SPEC_BREAKS])
def test_a_broken_spec_is_one_line_at_its_yaml_line(
    lab: Path, old: str, new: str, field: str, problem: str, where: str
) -> None:
    spec = lab / "spec.yaml"
    replace(spec, old, new)
    with pytest.raises(SpecError) as caught:
        found, found_spec = load_lab(str(lab))
        found.plans(found_spec, 0)
        found.check_random(found_spec)
    found = caught.value
    assert found.file == f"{lab}/spec.yaml" and found.field == field and problem in found.problem, str(found)
    assert found.line == line_of(spec, where), str(found)


def test_a_stored_expectation_the_reference_disagrees_with_is_a_verify_line(lab: Path) -> None:
    spec = lab / "spec.yaml"
    replace(spec, "    expect: {value: -1, nodes: 15}", "    expect: {value: 1, nodes: 15}")
    found, found_spec = load_lab(str(lab))
    assert found.verify(found_spec) == [
        f"{lab}/spec.yaml:{line_of(spec, 'expect: {value: 1')}: cases[0].expect.value: stored 1, the reference computes -1"
    ]


def test_a_bug_the_cases_cannot_show_is_a_verify_line(lab: Path) -> None:
    spec = lab / "spec.yaml"
    text = spec.read_text()
    spec.write_text(text[: text.index("  - name: seven-sticks")].replace("count: 4", "count: 0"))
    replace(spec, "    call: {sticks: 4, maximizing: true}", "    call: {sticks: 1, maximizing: true}")
    replace(spec, "    expect: {value: -1, nodes: 15}\n", "")
    found, found_spec = load_lab(str(lab))
    assert found.verify(found_spec) == [
        f"{lab}/bugs/no_pruning.py: reads and returns what reference.py does on every case, so no submission can "
        "be diagnosed with it; add a case where it differs"
    ]


# --- on the command line: one line, exit code 2 -------------------------------------------------


def abgrade(*args: object, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "grader", *map(str, args)], capture_output=True, text=True, cwd=cwd, timeout=120
    )


@pytest.mark.parametrize("command", ["grade", "specs", "exercise", "batch"])
def test_every_command_says_a_broken_game_in_one_line(lab: Path, command: str) -> None:
    game = lab / "game.py"
    replace(game, "def moves(sticks):", "def moves(sticks)")
    (lab.parent / "class").mkdir()
    argv: dict[str, list[object]] = {
        "grade": ["grade", lab / "reference.py", "--lab", lab],
        "specs": ["specs", "verify", lab],
        "exercise": ["exercise", lab, "-o", lab.parent / "student.py"],
        "batch": ["batch", lab.parent / "class", "--lab", lab],
    }
    done = abgrade(*argv[command], cwd=lab.parent)
    assert done.returncode == 2, done.stderr
    assert (
        done.stderr.strip() == f"abgrade: {lab}/game.py:{line_of(game, 'def moves')}: load: SyntaxError: expected ':'"
    )
    assert "Traceback" not in done.stdout + done.stderr


def test_a_missing_lab_folder_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\n")
    done = abgrade("grade", "a.py", "--lab", "./labs/nothing", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.startswith("abgrade: ./labs/nothing: no such lab folder; give the folder that holds game.py")


def test_checked_callables_keep_their_names(lab: Path) -> None:
    """The game's watched functions keep their names and docstrings for the student."""
    found, _ = load_lab(str(lab))
    moves: Callable = found.hooks.module.moves
    assert moves.__name__ == "moves" and "piles left" in (moves.__doc__ or "")


def test_a_lab_failure_while_judging_fails_the_tests_without_the_labs_path() -> None:
    """Judging may run the lab's own code on what a student did (the position after their
    move): when that fails, the tests say so in words a student may read, no path."""
    from grader.labs.generic.files import LabError
    from grader.labs.generic.judges import guarded

    def judge(observed: list) -> None:
        raise LabError("/secret/labs/nim/reference.py", 12, "alphabeta", "alphabeta([0, 1], ...) raised KeyError: 3")

    judgement = guarded([{}], judge, ("value", "choice"))
    assert set(judgement.verdicts) == {"value", "choice"}
    for verdict in judgement.verdicts.values():
        assert not verdict.passed and "/secret" not in verdict.message
        assert verdict.message == (
            "not judged: the lab's reference failed on this case (alphabeta: alphabeta([0, 1], ...) raised KeyError: 3); "
            "tell your instructor."
        )
