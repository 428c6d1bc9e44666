"""The tictactoe lab graded end to end: fixture submissions through real worker processes
(tests/fixtures/tictactoe), the skeleton and the reference solution, the spec and its
verification, the hidden random positions, and the observer's board notation.

Most fixtures are graded against the bundled spec without its three large positions (the
empty board alone is 20,865 nodes), to keep this file fast: the small positions show every
bug below. The reference solution, the skeleton and one accepted variant are graded
against the whole spec.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import sys
import types
from pathlib import Path

import numpy as np
import pytest

from grader.exercises import exercise_notebook_path, exercise_notebook_text, exercise_path, exercise_text
from grader.grading import grade_submission
from grader.labs import get_lab
from grader.labs.kit.state import with_state_hint
from grader.labs.tictactoe.cases import BOUND_SEARCHES, Position, reference_expectations
from grader.labs.tictactoe.random_cases import random_positions
from grader.paths import PROJECT_DIR, SOLUTIONS_DIR
from grader.report.gradescope import results_json
from grader.results import GradeReport
from grader.spec import SpecError, load_spec, spec_path
from reference.tictactoe import format_board, parse_board

FIXTURES = Path(__file__).parent / "fixtures" / "tictactoe"
SEED = 1  # random cases are part of every grading; a fixed seed keeps the outcomes fixed
LARGE_CASES = {"empty-board", "course-second-move", "x-answers-corner"}
EVERY_KIND = {"load", "game_over", "value", "nodes", "pruned", "choice", "bounds", "random", "limits"}


@pytest.fixture(scope="module")
def lab():
    return get_lab("tictactoe")


@pytest.fixture(scope="module")
def spec():
    return load_spec(spec_path("tictactoe"))


@pytest.fixture(scope="module")
def small_spec(spec):
    return dataclasses.replace(spec, cases=[c for c in spec.cases if c["name"] not in LARGE_CASES])


@pytest.fixture(scope="module")
def grade(lab, spec, small_spec):
    """`grade(name_or_path, full=False)`: each submission graded once per module."""
    reports: dict[tuple[str, bool], GradeReport] = {}

    def grade_once(name: str | Path, full: bool = False) -> GradeReport:
        path = name if isinstance(name, Path) else FIXTURES / f"{name}.py"
        if (str(path), full) not in reports:
            reports[str(path), full] = grade_submission(path, lab, spec if full else small_spec, seed=SEED)
        return reports[str(path), full]

    return grade_once


def failing_kinds(report: GradeReport) -> set[str]:
    return {kind for kind, (got, most) in report.subtotals().items() if got < most}


def first_failure(report: GradeReport, kind: str) -> str:
    return next(t.output for t in report.tests if t.kind == kind and not t.passed)


def explain(report: GradeReport) -> str:
    return "\n".join(f"{t.name}: {t.output}" for t in report.tests if not t.passed) or "(no failed test)"


def line_of(path: Path, text: str) -> int:
    return next(n for n, line in enumerate(path.read_text().splitlines(), start=1) if text in line)


# --- accepted variants ---------------------------------------------------------------------------

CORRECT = (
    "correct_fail_hard",  # returns beta / alpha on a cut-off, the utility lives in alpha / beta
    "correct_own_helpers",  # its own full-board / line / comparison helpers, one shared search
    "correct_own_get_childs",  # its own get_childs (np.argwhere, integer boards)
    "correct_prints",  # prints points and nodes_visited, plays a move at import
    "correct_without_helpers",  # defines none of the given helpers: the grader provides them
    "correct_solver_class",  # maximize / minimize / minimax are bound methods of one object
    "correct_numpy_scalars",  # np.int64 utilities and counts, np.bool_ from game_over
    "correct_static_thread",  # static methods of a class, the search on a threading.Thread
    "correct_match_statement",  # one search for both players, `match` statements
)


@pytest.mark.parametrize("name", CORRECT)
def test_accepted_variant_gets_full_marks(grade, name):
    report = grade(name)
    assert report.score == report.max_score, explain(report)


def test_the_reference_solution_gets_full_marks_on_the_whole_spec(grade):
    report = grade(SOLUTIONS_DIR / "tictactoe.py", full=True)
    assert set(report.subtotals()) == EVERY_KIND
    assert report.score == report.max_score, explain(report)


@pytest.mark.slow
def test_a_fail_hard_search_gets_full_marks_on_the_whole_spec(grade):
    report = grade("correct_fail_hard", full=True)
    assert report.score == report.max_score, explain(report)


def test_prints_stay_output_and_change_nothing(grade):
    report = grade("correct_prints")
    assert "nodes_visited:" in report.student_output and "points:" in report.student_output


# --- classic bugs ---------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Bug:
    """A buggy fixture, the kinds it must lose points in (every other kind keeps full
    marks), and per failing kind a phrase its first failed test must contain."""

    fixture: str
    fails: frozenset[str]
    says: dict[str, str]


BUGS = (
    # `> beta`: right values and moves, but boards the reference prunes get expanded.
    Bug(
        "bug_strict_cutoff",
        frozenset({"nodes", "pruned", "random"}),
        {"pruned": "Likely cause: You cut off only when maxUtility > beta", "nodes": "expands other boards"},
    ),
    # nodes counted in a global never reset: right boards and values, each search's count
    # carries the earlier searches' counts (the search asked again counts otherwise: kit/state.py)
    Bug(
        "bug_global_counter",
        frozenset({"nodes", "random"}),
        {
            "nodes": "the count outlives the call (a global counter never reset)",
            "random": "Likely cause: Your function keeps state between calls",
        },
    ),
    # Every win scores 10: wrong scores, slower wins chosen, other cut-offs, wrong bounds.
    Bug(
        "bug_depth_not_incremented",
        frozenset({"value", "nodes", "pruned", "choice", "bounds", "random"}),
        {"value": "returned score 10, expected 9: 'o' can force a win with its next move"},
    ),
    # A full drawn board goes on being searched: get_childs on it gives no child, so its
    # utility stays at +-100000.
    Bug(
        "bug_draw_not_detected",
        frozenset({"game_over", "value", "nodes", "pruned", "choice", "bounds", "random"}),
        {"game_over": "A full board ends the game too", "value": "returned score -6, expected 0"},
    ),
    # A zero-width window at the root: wrong cut-offs, so wrong scores and moves; maximize
    # and minimize themselves are right, so bounds passes.
    Bug(
        "bug_alpha_beta_zero",
        frozenset({"value", "nodes", "pruned", "choice", "random"}),
        {"nodes": "expands other boards than the reference"},
    ),
    # The search is exactly right, only the count is not.
    Bug(
        "bug_counts_leaves",
        frozenset({"nodes", "random"}),
        {"nodes": "is the number of finished boards it reached: count every child"},
    ),
    # A tie that is only a bound replaces the move: the score stays, the move loses.
    Bug(
        "bug_tie_last",
        frozenset({"choice", "random"}),
        {"choice": "Likely cause: Change choice only on a strict improvement (utility > maxUtility)"},
    ),
    # Slow: 14 unpruned searches per random position for bounds.
    Bug(
        "bug_no_pruning",
        frozenset({"nodes", "pruned", "random"}),
        {"pruned": "Likely cause: Your search never cuts off"},
    ),
    # One placeholder left: every search raises TypeError; game_over is fine.
    Bug(
        "bug_placeholder_left",
        frozenset({"value", "nodes", "pruned", "choice", "bounds", "random"}),
        {
            kind: "`beta = None` is the skeleton's placeholder: lower beta to minUtility"
            for kind in ("value", "bounds", "random")
        },
    ),
    # Its own child generator under another name: nothing to observe, everything else right.
    Bug(
        "unobservable_own_children",
        frozenset({"pruned", "random"}),
        {"pruned": "your code never called get_childs, so the grader can't see which boards"},
    ),
)


ALL_BUGS = [
    pytest.param(b, id=b.fixture, marks=[pytest.mark.slow] if b.fixture == "bug_no_pruning" else []) for b in BUGS
]


@pytest.mark.parametrize("bug", ALL_BUGS)
def test_bug_loses_points_in_exactly_its_kinds(grade, bug):
    report = grade(bug.fixture)
    assert failing_kinds(report) == bug.fails, explain(report)
    assert set(report.subtotals()) == EVERY_KIND


@pytest.mark.parametrize("bug", ALL_BUGS)
def test_bug_feedback_says_what_is_wrong(grade, bug):
    report = grade(bug.fixture)
    for kind, phrase in bug.says.items():
        assert phrase in first_failure(report, kind), first_failure(report, kind)


# each classic bug is named ("Likely cause", tag diagnosis:<name>) from replays of the lab's
# search with that bug (reference/tictactoe_bugs.py); the other fixtures are named nothing
NAMED = {
    "bug_strict_cutoff": "strict_cutoff",
    "bug_depth_not_incremented": "depth_not_incremented",
    "bug_draw_not_detected": "draw_not_detected",
    "bug_alpha_beta_zero": "alpha_beta_zero",
    "bug_counts_leaves": "counts_leaves",
    "bug_tie_last": "tie_last",
    "bug_no_pruning": "no_pruning",
    "bug_global_counter": "state_between_calls",  # from the search asked again (kit/state.py)
}


@pytest.mark.parametrize("bug", [b for b in ALL_BUGS if b.values[0].fixture in NAMED])
def test_a_classic_bug_is_named_as_the_likely_cause(grade, bug):
    name, report = NAMED[bug.fixture], grade(bug.fixture)
    assert {d for t in report.tests for d in t.diagnoses} == {name}, explain(report)
    carrying = [t for t in report.tests if t.diagnoses]
    assert all(not t.passed for t in carrying) and any(t.visibility == "visible" for t in carrying)
    assert {t.kind for t in carrying} >= bug.fails - {"random"}
    hint = with_state_hint(get_lab("tictactoe").bug_hints)[name]
    assert all(f"Likely cause: {hint}" in t.output for t in carrying)
    tags = {tag for test in results_json(report)["tests"] for tag in test["tags"]}
    assert {tag for tag in tags if tag.startswith("diagnosis:")} == {f"diagnosis:{name}"}


@pytest.mark.parametrize("name", [*CORRECT, "bug_placeholder_left", "unobservable_own_children"])
def test_no_likely_cause_without_a_classic_bug(grade, name):
    report = grade(name)
    assert not [t.name for t in report.tests if t.diagnoses]
    assert "Likely cause" not in "".join(t.output for t in report.tests)


def test_the_hints_are_one_line_for_a_student(lab):
    # and the mirror a strict course names (tests/test_conventions.py)
    # (state kept between calls is every lab's, kit/state.py)
    assert set(lab.bug_hints) == set(NAMED.values()) - {"state_between_calls"} | {"inclusive_cutoff"}
    for name, hint in lab.bug_hints.items():
        assert hint and "\n" not in hint and len(hint) <= 130 and name not in hint


def test_the_placeholder_message_points_at_its_line(grade):
    report = grade("bug_placeholder_left")
    line = line_of(FIXTURES / "bug_placeholder_left.py", "beta = None  # complete")
    message = first_failure(report, "value")
    assert f"line {line} of bug_placeholder_left.py: `beta = None` is the skeleton's placeholder" in message
    assert "TypeError" in message and "'NoneType'" in message


def test_a_divergence_is_drawn_side_by_side(grade):
    message = first_failure(grade("bug_strict_cutoff"), "pruned")
    assert "your search expands" in message and "the reference expands" in message
    assert "---+---+---" in message
    assert "The reference never expands the board on the left" in message


def test_a_losing_move_is_drawn_next_to_an_optimal_one(grade):
    report = grade("bug_tie_last")
    message = next(t.output for t in report.tests if t.name == "tie-trap: choice")
    assert "chose a move worth -8; the position is worth 0" in message
    assert "your move" in message and "an optimal move" in message
    assert "The board \".../oxx/xo.\", 'o' to move" in message


def test_the_unobservable_search_is_still_counted(grade):
    report = grade("unobservable_own_children")
    assert report.subtotals()["nodes"][0] == report.subtotals()["nodes"][1]


# --- the skeleton -------------------------------------------------------------------------------------


def test_the_skeleton_loads_and_fails_everything_with_the_placeholder_message(grade):
    skeleton = exercise_path("tictactoe")
    report = grade(skeleton, full=True)
    assert failing_kinds(report) == EVERY_KIND - {"load", "limits"}, explain(report)
    assert all(not t.passed for t in report.tests if t.kind not in ("load", "limits"))
    minimax_line = line_of(skeleton, "return choice, score, nodes_visited")
    assert f"line {minimax_line} of lab.py: minimax uses `choice` before anything assigns it" in first_failure(
        report, "value"
    )
    bounds = first_failure(report, "bounds")
    assert "is the skeleton's placeholder" in bounds
    assert any(
        f"line {line_of(skeleton, text)} of lab.py: `{text}`" in bounds
        for text in ("maxUtility = None", "minUtility = None")
    )
    assert "#Write code here" in first_failure(report, "game_over")


def test_the_checked_in_exercises_are_generated_from_the_solution():
    assert exercise_path("tictactoe").read_text() == exercise_text("tictactoe")
    assert exercise_notebook_path("tictactoe").read_text() == exercise_notebook_text("tictactoe")


# --- the spec --------------------------------------------------------------------------------------


def test_the_stored_expectations_are_the_references(lab, spec):
    assert lab.verify(spec) == []


def test_the_spec_holds_the_course_figure(spec):
    (empty,) = [c for c in spec.cases if c["name"] == "empty-board"]
    assert empty["expect"]["points"] == 0 and empty["expect"]["nodes_visited"] == 20865
    assert empty["expect"]["expanded"]["count"] == 12413


def test_expected_answers_never_reach_the_student_process(lab, spec):
    for plan in lab.plans(spec, SEED):
        assert set(plan.request) == {"id", "calls"}
        for call in plan.request["calls"]:
            assert set(call) <= {"function", "board", "args", "trace"}, call


SPEC_HEAD = """lab: tictactoe
checks:
  game_over: {points: 1}
  value: {points: 1}
  bounds: {points: 1}
cases:
"""


@pytest.mark.parametrize(
    "case, line, problem",
    [
        ('  - name: a\n    boards: ["xo./.q./..o"]\n    expect: {game_over: [[false, 0]]}\n', 8, "has 'q' at column 2"),
        (
            '  - name: a\n    boards: [".../.../..."]\n    expect: {game_over: [[false, 0], [true, 1]]}\n',
            9,
            "one [finished, status] pair",
        ),
        (
            '  - name: a\n    board: ".../.../..."\n    player: 2\n    checks: [value]\n    expect: {points: 0}\n',
            9,
            "must be 1 ('o') or -1 ('x')",
        ),
        (
            '  - name: a\n    board: "ooo/xx./..."\n    player: -1\n    checks: [value]\n    expect: {points: 0}\n',
            8,
            "legal unfinished board",
        ),
        (
            '  - name: a\n    board: ".../.../..."\n    player: 1\n    checks: [value]\n    expect: {points: 0, moves: []}\n',
            11,
            "not used by this case's checks",
        ),
    ],
)
def test_a_malformed_case_is_a_spec_error_at_its_line(lab, tmp_path, case, line, problem):
    path = tmp_path / "bad.yaml"
    path.write_text(SPEC_HEAD + case)
    with pytest.raises(SpecError) as error:
        lab.plans(load_spec(path), SEED)
    assert f"bad.yaml:{line}" in str(error.value) and problem in str(error.value)


def test_verify_names_the_line_of_a_stale_expectation(lab, tmp_path):
    path = tmp_path / "stale.yaml"
    text = spec_path("tictactoe").read_text()
    stale = text.replace("      points: 9\n      nodes_visited: 35\n", "      points: 8\n      nodes_visited: 35\n", 1)
    assert stale != text
    path.write_text(stale)
    problems = lab.verify(load_spec(path))
    line = next(n for n, row in enumerate(stale.splitlines(), start=1) if row == "      points: 8")
    assert problems == [f"{path}:{line}: cases[7].expect.points: stored 8, the reference computes 9"]


def test_a_bad_random_setting_is_a_spec_error(lab, tmp_path):
    path = tmp_path / "random.yaml"
    path.write_text(SPEC_HEAD.replace("cases:\n", "  random: {points: 1}\nrandom:\n  count: 2\n  empties: [0, 4]\n"))
    with pytest.raises(SpecError, match=r"random.yaml:\d+: random.empties"):
        lab.plans(load_spec(path), SEED)


# --- random positions --------------------------------------------------------------------------------


def test_random_positions_come_from_the_seed(spec):
    first = random_positions(spec, SEED)
    assert random_positions(spec, SEED) == first
    assert random_positions(spec, SEED + 1) != first
    low, high = spec.random.params["empties"]
    for position, finished in first:
        assert low <= position.board.count(".") <= high
        assert finished.count(".") < position.board.count(".")


def _load_module(path: Path) -> types.ModuleType:
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _replay_is_wrong(module: types.ModuleType, position: Position) -> bool:
    """Whether `module`, run here, differs from the reference at `position` in anything a
    random case judges (game_over at the position itself aside: it is unfinished)."""
    truth = reference_expectations(position)
    expanded = []
    given = module.get_childs

    def watched(matrix, turn):
        expanded.append(format_board(matrix))
        return given(matrix, turn)

    module.get_childs = watched
    try:
        choice, points, nodes = module.minimax(position.array(), position.player)
    finally:
        module.get_childs = given
    if (points, nodes, expanded) != (truth.points, truth.nodes_visited, list(truth.expanded.boards)):
        return True
    if choice is None or format_board(choice) not in truth.moves:
        return True
    for function, relative, depth in BOUND_SEARCHES:
        v = truth.bound_values[function]
        for alpha, beta in ((v - 2, v - 1), (v - 1, v + 1), (v + 1, v + 2)):
            u = getattr(module, function)(
                position.array(), position.player, relative * position.player, depth, alpha, beta, 0
            )[1]
            if not (u <= alpha if v < alpha else u >= beta if v > beta else u == v):
                return True
    return False


@pytest.mark.parametrize("name", ["bug_tie_last", "bug_strict_cutoff", "correct_own_helpers"])
def test_random_verdicts_agree_with_a_replay_here(grade, spec, name):
    """Each random test fails exactly when the submission, replayed in this process on the
    same position, gets something wrong."""
    report = grade(name)
    module = _load_module(FIXTURES / f"{name}.py")
    for number, (position, _) in enumerate(random_positions(spec, SEED), start=1):
        test = next(t for t in report.tests if t.name == f"random {number}: random")
        assert test.passed != _replay_is_wrong(module, position), (position, test.output)


# --- the observer's notation -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def probe():
    """The observer module, built from its source text as the worker builds it."""
    saved = {name: sys.modules.get(name) for name in ("_abgrade_runtime", "_abgrade_tictactoe_rules")}
    for name, source in get_lab("tictactoe").probe.modules()[:-1]:
        module = types.ModuleType(name)
        exec(compile(source, f"<{name}>", "exec"), module.__dict__)
        sys.modules[name] = module
    observer = types.ModuleType("_abgrade_tictactoe")
    exec(
        compile((PROJECT_DIR / "grader" / "labs" / "tictactoe" / "observer.py").read_text(), "<probe>", "exec"),
        observer.__dict__,
    )
    yield observer
    for name, module in saved.items():
        if module is None:
            sys.modules.pop(name, None)
        else:
            sys.modules[name] = module


def test_the_observer_writes_any_board_in_notation(probe):
    log = probe.ExpansionLog()
    watched = log.watched(lambda matrix, turn: [])
    board = parse_board("xo./.x./..o")
    for matrix in (
        board,
        board.astype(int),
        board.astype(np.int8),
        board.tolist(),
        board.T.copy(),
        board.T,
        None,
        np.full((3, 3), 0.5),
        np.zeros(4),
    ):
        watched(matrix, 1)
    board[0, 0] = 1  # a later change to an expanded board must not change what was recorded
    labels = log.notations()
    assert labels[:6] == ["xo./.x./..o"] * 4 + ["x../ox./..o"] * 2
    assert labels[6] == "?None"
    assert labels[7].startswith("?a board holding [[0.5")
    assert labels[8] == "?an array of 4 numbers"
    assert log.count == 9


def test_the_observer_sends_only_plain_data(probe, lab):
    namespace = {"__name__": "submission"}
    exec(compile((SOLUTIONS_DIR / "tictactoe.py").read_text(), "<solution>", "exec"), namespace)
    position = Position("oo./xx./...", 1)
    reply = probe.handle(
        namespace,
        {
            "id": "t",
            "calls": [
                {"function": "minimax", "board": position.board, "args": [1], "trace": True},
                {"function": "game_over", "board": "ooo/xx./..."},
            ],
        },
    )
    json.dumps(reply, allow_nan=False)  # nothing but JSON data
    minimax, over = reply["calls"]
    truth = reference_expectations(position)
    assert (minimax["choice"], minimax["points"], minimax["nodes"]) == ("ooo/xx./...", 9, 35)
    assert minimax["expanded"] == list(truth.expanded.boards) and minimax["expansions"] == 23
    assert over["returned"] == {"type": "tuple", "items": [True, 1]}
    assert namespace["get_childs"].__name__ == "get_childs"  # the student's own again after the call
