"""A lab folder's failed hidden case is shrunk as a built-in lab's is, through the game's
optional hook `smaller(case)` (grader/labs/generic/smaller.py, runs.py, plans.py): the
student's real process answers the smaller cases, the same example is found on every run,
and the score is the unshrunk run's. A hook that raises, loops or yields a case that is
not smaller or not a case of the lab is the course's error: one line naming game.py and
the hook, and the grade goes on unshrunk. Without the hook, a tree world shrinks with the tree
lab's own cuts.

The real gradings use the Nim example with its random cases only (three of them); the
hook's checks run in the grader's process alone, without a student."""

from __future__ import annotations

import argparse
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from grader.checks import Verdict
from grader.commands.common import EXIT_FAILED
from grader.commands.specs import run_verify
from grader.counterexample import Counterexample, counterexample_of
from grader.grading import grade_submission
from grader.lab_setup import load_lab
from grader.labs.generic import runs
from grader.labs.generic.smaller import case_size, tree_of
from grader.labs.generic.steps import StepsExhausted, bounded_steps
from grader.labs.kit import CasePlan, Judgement, Shrinkable, ShrinkFailed
from grader.results import GradeReport
from grader.shrinking import shrink_all
from grader.spec.model import ShrinkPolicy

TESTS = Path(__file__).resolve().parent
NIM = TESTS.parent / "examples" / "labs" / "nim"
BUGGY = TESTS / "fixtures" / "folder_labs" / "nim" / "bug_strict_cutoff.py"
SEED = 1


def random_only(folder: Path, name: str, **random: object) -> Path:
    """The lab's spec with its random cases only (three), `random` settings over it."""
    raw = yaml.safe_load((folder / "spec.yaml").read_text())
    raw["cases"] = []
    raw["checks"] = {kind: raw["checks"][kind] for kind in ("load", "random", "limits")}
    raw["random"].update(count=3, **random)
    path = folder / f"{name}.yaml"
    path.write_text(yaml.safe_dump(raw, sort_keys=False))
    return path


def nim_with_hook(folder: Path, hook: str | None) -> Path:
    """A copy of the Nim example whose hook `smaller` is `hook` (None: no hook)."""
    shutil.copytree(NIM, folder)
    game = folder / "game.py"
    text = game.read_text()
    text = text[: text.index("\n\ndef smaller(")] + "\n"
    game.write_text(text + ("\n\n" + hook if hook else ""))
    return folder


def graded(folder: Path, spec: Path) -> GradeReport:
    lab, lab_spec = load_lab(str(folder), spec)
    return grade_submission(BUGGY, lab, lab_spec, seed=SEED)


def examples(report: GradeReport) -> list[Counterexample]:
    return [example for test in report.tests if (example := counterexample_of(test)) is not None]


def outcomes(report: GradeReport) -> list[tuple[str, float, bool]]:
    return [(test.name, test.score, test.passed) for test in report.tests]


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    copy = tmp_path_factory.mktemp("shrink") / "nim"
    shutil.copytree(NIM, copy)
    return copy


@pytest.fixture(scope="module")
def unshrunk(folder: Path) -> GradeReport:
    return graded(folder, random_only(folder, "unshrunk", shrink={"calls": 0}))


def test_a_failed_random_case_is_shown_shrunk_the_same_every_run_and_scores_as_unshrunk(
    folder: Path, unshrunk: GradeReport
) -> None:
    spec = random_only(folder, "random")
    first, again = graded(folder, spec), graded(folder, spec)
    found = examples(first)
    assert found, [test.output[:120] for test in first.tests if not test.passed]
    assert not examples(unshrunk)
    assert outcomes(first) == outcomes(unshrunk) and first.score == unshrunk.score < first.max_score
    for example in found:
        assert example.size < example.original_size and example.calls > 0
        assert example.text.startswith("alphabeta([") and example.text != example.original_text
        assert "all match" not in example.output.splitlines()[0]  # it still fails ...
        assert example.check == "pruned" and "Cut off as soon as alpha >= beta" in example.output  # the bug named
    assert [e.to_json() for e in found] == [e.to_json() for e in examples(again)]  # the same, byte for byte


def test_a_hook_that_raises_leaves_the_grade_unshrunk_with_the_courses_error_in_the_notes(
    tmp_path: Path, unshrunk: GradeReport
) -> None:
    folder = nim_with_hook(tmp_path / "nim", "def smaller(case):\n    yield from ()\n    raise KeyError('depth')\n")
    report = graded(folder, random_only(folder, "random"))
    assert outcomes(report) == outcomes(unshrunk) and not examples(report)
    said = [note for note in report.notes if "smaller" in note]
    assert len(said) == 1 and "\n" not in said[0], report.notes
    assert said[0].startswith(f"{folder}/game.py:") and "smaller: raised KeyError (shrinking random" in said[0]
    assert "'depth'" not in said[0]  # the exception's words may hold the hidden case: they stay out


# --- the hook's checks, in the grader's process alone --------------------------------------

# kind -> (the hook, what the grade's note says, what `abgrade specs verify` adds): a note
# reaches a student's feedback page, so it holds nothing of the hidden case
BROKEN = {
    "raises": ("def smaller(case):\n    return [case['nope']]\n", "smaller: raised KeyError", "KeyError: 'nope'"),
    "loops": ("def smaller(case):\n    while True:\n        pass\n", "smaller: ran more than 20,000 lines", ""),
    "loops between cases": (
        "def smaller(case):\n    yield {'call': {**case['call'], 'depth': 1}}\n    while True:\n        pass\n",
        "without finishing (a loop?)",
        "",
    ),
    "not smaller": (
        "def smaller(case):\n    yield {'call': {**case['call'], 'depth': case['call']['depth'] + 1}}\n",
        "yielded a case no smaller than the one it came from (values and magnitude (",
        "no smaller than alphabeta([",
    ),
    "not a case": (
        "def smaller(case):\n    yield [1, 2]\n",
        'must yield cases {"call": {...}} (and maybe "world"), not a list',
        "",
    ),
    "no iterable": ("def smaller(case):\n    return 3\n", "must yield (or return a list of) cases, not int", ""),
    "a call short of a parameter": (
        "def smaller(case):\n    yield {'call': {'heaps': (1,), 'maximizing': True}}\n",
        "yielded a call without 'depth'",
        "",
    ),
    "a state the game can't decode": (
        "def smaller(case):\n    yield {'call': {**case['call'], 'heaps': (-1,)}}\n",
        "yielded a case the lab can't search: ",
        "not [-1]",
    ),
}


@pytest.mark.parametrize("kind", sorted(BROKEN))
def test_a_broken_hook_is_one_line_naming_game_py_and_the_hook(
    tmp_path: Path, kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(runs, "SMALLER_STEPS", 20_000)  # a loop found sooner (the bundled hooks take far fewer)
    hook, problem, detail = BROKEN[kind]
    folder = nim_with_hook(tmp_path / "nim", hook)
    lab, spec = load_lab(str(folder), random_only(folder, "random"))
    plan = lab.random_plans(spec, SEED)[0]
    assert plan.shrink is not None
    with pytest.raises(ShrinkFailed) as caught:
        list(plan.shrink.smaller())
    message = str(caught.value)
    line = 1 + folder.joinpath("game.py").read_text().splitlines().index("def smaller(case):")
    assert "\n" not in message and problem in message, message
    assert message.startswith(f"{folder}/game.py:") and "(shrinking random 1)" in message
    assert "alphabeta(" not in message and "[" not in message.partition("magnitude")[0]  # nothing of the case
    if kind != "raises":  # an exception's own line is where it was raised, else the hook's
        assert message.startswith(f"{folder}/game.py:{line}: smaller: "), message
    said = lab.advice(spec)  # `abgrade specs verify` says all of it ...
    assert len(said) == 3 and all(": smaller: " in p and detail in p and "\n" not in p for p in said), said
    assert not [p for p in lab.verify(spec) if "smaller" in p]  # ... the check before a grading does not


def test_specs_verify_says_a_hook_that_draws_at_random(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # twenty draws: asked twice, one draw each gave the same case one time in two, and the
    # three random cases checked all alike one run in eight (the test failed then)
    hook = (
        "import random\n\ndef smaller(case):\n    for _ in range(20):\n"
        "        yield {'call': {**case['call'], 'depth': random.choice([0, 1])}}\n"
    )
    folder = nim_with_hook(tmp_path / "nim", hook)
    assert run_verify(argparse.Namespace(labs=[str(folder)], spec=None)) == EXIT_FAILED  # `abgrade specs verify`
    printed = capsys.readouterr().out.splitlines()
    problems = [line for line in printed if "gave other cases when asked again" in line]
    assert problems and all(line.startswith(f"{folder}/game.py:") for line in problems), printed
    assert printed[-1] == f"{folder}/spec.yaml: FAILED (6 fixed cases)"


def test_without_the_hook_nothing_shrinks_and_the_bundled_hooks_verify(tmp_path: Path) -> None:
    lab, spec = load_lab(str(nim_with_hook(tmp_path / "nim", None)))
    assert all(plan.shrink is None for plan in lab.random_plans(spec, SEED))
    for name in ("nim", "tree", "catmouse"):
        bundled, bundled_spec = load_lab(str(NIM.parent / name))
        assert bundled.advice(bundled_spec) == []
        assert all(plan.shrink is not None for plan in bundled.random_plans(bundled_spec, SEED))


def test_the_candidates_are_plans_of_the_same_case_with_a_request_named_after_it(tmp_path: Path) -> None:
    lab, spec = load_lab(str(NIM))
    plan = lab.random_plans(spec, SEED)[0]
    assert plan.shrink is not None
    smaller = list(plan.shrink.smaller())
    assert smaller and all(c.case == "random 1" and c.request["id"] == "random 1/smaller" for c in smaller)
    assert all(c.shrink is not None and c.shrink.size < plan.shrink.size for c in smaller)
    assert [c.request for c in smaller] == [c.request for c in plan.shrink.smaller()]


def test_a_tree_world_without_the_hook_shrinks_with_the_tree_labs_own_cuts(tmp_path: Path) -> None:
    folder = tmp_path / "tree"
    shutil.copytree(NIM.parent / "tree", folder)
    game = folder / "game.py"
    text = game.read_text()
    game.write_text(text[: text.index("\n\n# A failed hidden tree is shrunk")] + "\n")
    lab, spec = load_lab(str(folder), random_only(folder, "random"))
    report = grade_submission(TESTS / "fixtures" / "tree" / "bug_strict_cutoff.py", lab, spec, seed=SEED)
    found = examples(report)
    assert found and all(e.text.startswith("a tree of ") and e.size < e.original_size for e in found)
    assert "Likely cause: You cut off only when alpha > beta" in found[0].output


def test_a_hook_that_reads_the_games_globals_lazily_sees_its_own_case_between_candidates(tmp_path: Path) -> None:
    """A generator runs only as far as shrinking goes; between two pulls the judges set up
    other worlds (the candidate's), so each pull sets the case's own world up again."""
    folder = tmp_path / "tree"
    shutil.copytree(NIM.parent / "tree", folder)
    game = folder / "game.py"
    text = game.read_text()
    hook = (
        "def smaller(case):  # reads the game's globals, as setup(**world) left them\n"
        "    for leaf in list(terminal_nodes):\n"
        "        if terminal_nodes[leaf]:\n"
        "            leaves = {**terminal_nodes, leaf: 0}\n"
        "            yield {'world': {'graph': dict(graph), 'terminal_nodes': leaves}, 'call': case['call']}\n"
    )
    game.write_text(text[: text.index("\n\n# A failed hidden tree is shrunk")] + "\n\n\n" + hook)
    lab, spec = load_lab(str(folder), random_only(folder, "random"))
    plan = next(p for p in lab.random_plans(spec, SEED) if len(p.request["world"]["terminal_nodes"]) > 2)
    assert plan.shrink is not None
    candidates = plan.shrink.smaller()
    first = next(candidates)
    lab.hooks.tree({"graph": {"x": ["y"]}, "terminal_nodes": {"y": 5}}, {"node": "x", "max_player": True})
    second = next(candidates)
    for candidate in (first, second):
        assert candidate.request["world"]["graph"] == plan.request["world"]["graph"]
        assert candidate.request["world"]["terminal_nodes"].keys() == plan.request["world"]["terminal_nodes"].keys()


# --- pure parts -------------------------------------------------------------------------------


def test_the_driver_keeps_what_it_found_and_stops_at_a_labs_failed_way_of_shrinking() -> None:
    def plan(n: int, check: str, broken: bool = False) -> CasePlan:
        def judge(calls: list[dict]) -> Judgement:
            return Judgement({"random": Verdict(False, f"case {n} failed", parts=(check,))})

        def smaller() -> Iterator[CasePlan]:
            if broken:
                raise ShrinkFailed("game.py:9: smaller: raised KeyError (shrinking random 2)")
            yield from (plan(m, check) for m in range(1, n))

        return CasePlan(f"random {n}", {"id": str(n)}, ("random",), judge, shrink=Shrinkable((n,), str(n), smaller))

    plans = [plan(5, "value"), plan(7, "pruned", broken=True), plan(6, "nodes")]
    judged = [(p, p.judge([{}])) for p in plans]
    problems: list[str] = []
    found = shrink_all(judged, lambda p, seconds: p.judge([{}]), ShrinkPolicy(), lambda: 0.0, problems)
    assert list(found) == [0] and found[0].plan.shrink is not None and found[0].plan.shrink.size == (1,)
    assert problems == ["game.py:9: smaller: raised KeyError (shrinking random 2)"]  # and random 6 not tried


def test_a_case_is_measured_by_its_values_then_their_size() -> None:
    assert case_size(None, {"heaps": [3, 4], "depth": 2, "maximizing": True}) == (
        7,
        5 + 3 + 4 + 5 + 2 + 10,
    )  # keys count too
    assert case_size(None, {"heaps": [3], "depth": 2}) < case_size(None, {"heaps": [1, 1], "depth": 2})
    assert case_size(None, {"heaps": [1, 4]}) < case_size(None, {"heaps": [2, 4]})
    assert case_size({"g": {"a": ["b"]}}, {"node": "a"}) == (5, 1 + 1 + 1 + 4 + 1)
    assert case_size(None, {"x": 0.5}) == case_size(None, {"x": 1}) < case_size(None, {"x": float("inf")})


def test_only_a_tree_world_searched_from_its_root_is_a_tree_the_grader_knows() -> None:
    world = {"graph": {"a": ["b", "c"]}, "terminal_nodes": {"b": 1, "c": 2}}
    tree = tree_of(world, {"node": "a", "max_player": True}, "node")
    assert tree is not None and len(tree) == 3
    assert tree_of(world, {"node": "b"}, "node") is None  # a and c not below it
    assert tree_of({**world, "extra": 1}, {"node": "a"}, "node") is None
    assert tree_of({"graph": {"a": ["a"]}, "terminal_nodes": {}}, {"node": "a"}, "node") is None  # a cycle
    assert tree_of(None, {"node": "a"}, "node") is None


def test_the_step_bound_stops_a_loop_and_puts_the_previous_tracer_back() -> None:
    def tracer(frame, event, arg):  # a stand-in for a debugger or coverage
        return None

    def loops() -> None:
        while True:
            try:
                pass
            except Exception:  # noqa: S110 - a hook's own `except Exception` can't swallow the bound
                pass

    sys.settrace(tracer)
    try:
        with pytest.raises(StepsExhausted), bounded_steps(1000):
            loops()
        assert sys.gettrace() is tracer
        with bounded_steps(1000):
            assert sum(range(10_000)) == 49_995_000  # a C loop is no Python line
    finally:
        sys.settrace(None)
