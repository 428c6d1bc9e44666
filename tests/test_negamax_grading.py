"""The negamax lab graded end to end: fixture submissions through real worker processes,
the spec and its verification, the hidden random positions, and why exact counts are fair
to every accepted variant."""

import json
import math
import random
from pathlib import Path

import pytest

from grader.exercises import exercise_path, exercise_text
from grader.grading import grade_submission
from grader.labs import get_lab
from grader.labs.negamax.random_cases import random_positions
from grader.spec import SpecError, load_spec, spec_path
from reference.games import load_game
from reference.negamax import alphabeta_value

FIXTURES = Path(__file__).parent / "fixtures" / "negamax"
SEED = 7  # random cases are part of every grading; a fixed seed keeps the outcomes fixed
KINDS = {"load", "value", "nodes", "bounds", "choice", "random", "limits"}
INF = math.inf


@pytest.fixture(scope="module")
def lab():
    return get_lab("negamax")


@pytest.fixture(scope="module")
def spec():
    return load_spec(spec_path("negamax"))


_REPORTS: dict = {}


def graded(name, lab, spec):
    """Each fixture is graded once per test session (a real worker process each time)."""
    if name not in _REPORTS:
        _REPORTS[name] = grade_submission(FIXTURES / f"{name}.py", lab, spec, seed=SEED)
    return _REPORTS[name]


def failing_kinds(report):
    return {test.kind for test in report.tests if not test.passed}


def output(report, name):
    (test,) = [t for t in report.tests if t.name == name]
    return test.output


# --- accepted variants and classic bugs ----------------------------------------------


# explicit_stack: no recursion, each node entered counted as a call of value;
# aliases_decorator: `alphaBeta = _ab`, a functools.wraps counting decorator on value, np.int64 values;
# protocol_match_threads: typing.Protocol, static methods, `match`, best_move on a thread pool
@pytest.mark.parametrize(
    "name",
    [
        "course",
        "fail_hard",
        "start_minus_one",
        "fail_soft_inf",
        "textbook_fail_soft",
        "explicit_stack",
        "aliases_decorator",
        "protocol_match_threads",
    ],
)
def test_accepted_variants_get_full_marks(name, lab, spec):
    report = graded(name, lab, spec)
    failures = [f"{t.name}: {t.output}" for t in report.tests if not t.passed]
    assert report.score == report.max_score > 0, "\n".join(failures)
    assert {t.kind for t in report.tests} == KINDS


BUGS = {
    "window_not_swapped": {"value", "nodes", "bounds", "choice", "random"},
    "utility_sign_flipped": {"value", "nodes", "bounds", "choice", "random"},
    "value_not_negated": {"value", "nodes", "bounds", "choice", "random"},
    "counter_never_incremented": {"nodes", "random"},
    "recurse_alphabeta": {"nodes", "random"},
    "no_cutoff": {"nodes", "random"},
    "strict_cutoff": {"nodes", "random"},
    "first_successor": {"choice", "random"},
    "transposition_table": {"nodes", "bounds", "choice", "random"},  # kept across calls and games
}
HEAVY = {"no_cutoff", "strict_cutoff"}  # they search hundreds of thousands of positions from the start


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.slow) if n in HEAVY else n for n in BUGS])
def test_classic_bugs_fail_exactly_the_kinds_they_touch(name, lab, spec):
    report = graded(name, lab, spec)
    assert {t.kind for t in report.tests} == KINDS
    assert failing_kinds(report) == BUGS[name]  # so every other kind passes in full
    assert 0 < report.score < report.max_score


def test_a_counter_never_incremented_is_named_and_the_search_is_cleared(lab, spec):
    text = output(graded("counter_never_incremented", lab, spec), "tictactoe-start: nodes")
    assert "After value(Start, 0), num_value_call is still 0: value never incremented it" in text
    assert "16,811 times" in text
    assert "next_states was called 10,071 times, on the same states in the same order" in text


def test_counting_through_alphabeta_says_which_count_is_off(lab, spec):
    text = output(graded("recurse_alphabeta", lab, spec), "nim-start: nodes")
    assert "num_value_call is 1; the reference's value is called 229 times (228 fewer)" in text
    assert "next_states was called 139 times, on the same states" in text
    assert "never through alphaBeta itself" in text


@pytest.mark.slow
def test_no_cutoff_reports_both_counts_and_where_the_search_parts(lab, spec):
    text = output(graded("no_cutoff", lab, spec), "tictactoe-start: nodes")
    assert "num_value_call is 549,946; the reference's value is called 16,811 times (533,135 more)" in text
    assert "next_states was called 294,778 times; the reference calls it 10,071 times" in text
    assert (
        "First difference at next_states call #8: yours was on XOX / OXO / .X., the reference's on XOX / OX. / O.."
        in text
    )
    assert "prunes less" in text


@pytest.mark.slow
def test_a_strict_cutoff_shows_on_a_successor_worth_exactly_beta(lab, spec):
    text = output(graded("strict_cutoff", lab, spec), "tree-ties: nodes")
    assert "num_value_call is 11; the reference's value is called 10 times (1 more)" in text
    assert "worth exactly beta" in text
    assert "The game: the tree graph = {'a': ['b1', 'b2', 'b3']" in text


@pytest.mark.parametrize(
    ("name", "says"),
    [
        ("value_not_negated", "Likely cause: a sign error: the value of each successor is not negated."),
        ("utility_sign_flipped", "Likely cause: a sign error: the utility of a finished state is negated."),
    ],
)
def test_a_sign_error_is_recognised_and_named_not_blamed_on_search_order(name, says, lab, spec):
    report = graded(name, lab, spec)
    failing = [t for t in report.tests if not t.passed and t.kind in ("value", "nodes")]
    assert failing and all(says in t.output for t in failing), [t.name for t in failing if says not in t.output]
    assert not any("skips or reorders" in t.output or "prunes less" in t.output for t in failing)
    text = output(report, "tictactoe-full-window: nodes")
    assert (
        "val = max(val, -value(ns, other(player), -beta, -alpha))." in text or "utility(State, player) as it is" in text
    )
    assert set(report.tests[2].diagnoses) | {d for t in failing for d in t.diagnoses} <= {
        "value_not_negated",
        "utility_negated",
    }
    # the hidden random positions say it too
    assert all(
        says in t.output
        for t in report.tests
        if t.kind == "random" and not t.passed and ("value(" in t.output and "returned" in t.output)
    )


def test_other_bugs_are_not_called_sign_errors(lab, spec):
    for name in ("window_not_swapped", "recurse_alphabeta", "counter_never_incremented"):
        report = graded(name, lab, spec)
        assert not any("sign error" in t.output or t.diagnoses for t in report.tests), name


def test_a_wrong_value_is_shown_with_the_board(lab, spec):
    text = output(graded("window_not_swapped", lab, spec), "tictactoe-x-wins: value")
    assert text.startswith("value('XO.......', 0) returned -1, expected 1. Player 0 can force a win from here.")
    assert "The state (player = 0):\n    XO.\n    ...\n    ..." in text


def test_a_non_optimal_move_is_drawn_next_to_an_optimal_one(lab, spec):
    report = graded("first_successor", lab, spec)
    text = output(report, "tictactoe-o-wins-now: choice")
    assert text.startswith("best_move('XX.X...OO', 1) returned (1, 'XXOX...OO').")
    assert "That move is worth -1 to player 1, but the state is worth 1: it is not optimal." in text
    assert "Your move leads to:\n    XXO\n    X..\n    .OO" in text
    assert "An optimal move leads to:\n    XX.\n    X..\n    OOO" in text
    nim = output(report, "nim-one-winning-move: choice")
    assert "Your move leads to:\n    heaps 1 3 4, player 1 to move" in nim
    assert "An optimal move leads to:\n    heaps 2 3 1, player 1 to move" in nim


def test_bound_failures_list_the_call_the_requirement_and_the_state(lab, spec):
    text = output(graded("window_not_swapped", lab, spec), "tictactoe-bounds: bounds")
    assert "35 of 84 calls of alphaBeta broke the bound specification" in text
    assert (
        "alphaBeta('.O.....X.', 0, -1, 0) returned -1, but the true value 0 lies inside the window [-1, 0], "
        "so the result must be exactly 0.\nThe state (player = 0):\n    .O.\n    ...\n    .X."
    ) in text
    assert "Failing calls by window: (-1, 0) 10x, (-1, 1) 10x, (-inf, inf) 11x, (0, 1) 4x." in text


def test_the_skeleton_loads_and_fails_every_case(lab, spec):
    assert exercise_path("negamax").read_text() == exercise_text("negamax")
    report = grade_submission(exercise_path("negamax"), lab, spec, seed=SEED)
    assert failing_kinds(report) == KINDS - {"load", "limits"}
    assert "raised NotImplementedError" in output(report, "tictactoe-start: value")


def test_the_course_form_graded_as_a_notebook_gets_full_marks(lab, spec, tmp_path):
    from tests.notebook_builder import notebook_from_py

    notebook = notebook_from_py(FIXTURES / "course.py", tmp_path / "course.ipynb")
    report = grade_submission(notebook, lab, spec, seed=SEED)
    assert report.score == report.max_score, [t.output for t in report.tests if not t.passed]


def test_a_game_configured_by_one_case_does_not_leak_into_the_next(lab, tmp_path):
    ties = (
        "{graph: {a: [b1, b2, b3], b1: [c1, c2], b2: [c3, c4], b3: [c5, c6], c4: [d1, d2]}, "
        "terminal_nodes: {c1: 0, c2: -1, c3: 0, d1: 1, d2: 0, c5: 0, c6: 1}}"
    )
    cases = (
        f"  - name: ties\n    game: tree\n    params: {ties}\n    checks: [nodes]\n"
        f"    expect: {{calls: 10, expansions: 5}}\n"
        f"  - name: built-in\n    game: tree\n    checks: [nodes]\n    expect: {{calls: 16, expansions: 8}}\n"
    )
    spec = write_spec(tmp_path, cases)
    assert lab.verify(spec) == []
    report = grade_submission(FIXTURES / "course.py", lab, spec, seed=SEED)
    assert {t.name: t.passed for t in report.tests} == {"load": True, "ties: nodes": True, "built-in: nodes": True}


def test_a_submission_without_best_move_fails_load_with_the_call_shape(lab, spec, tmp_path):
    source = (FIXTURES / "course.py").read_text().split("def best_move")[0]
    path = tmp_path / "no_best_move.py"
    path.write_text(source)
    report = grade_submission(path, lab, spec, seed=SEED)
    assert "no `best_move` is defined; the grader calls best_move(State, player)" in output(report, "load")
    assert report.score == 0


# --- the spec -------------------------------------------------------------------------


def test_the_stored_expectations_are_the_references(lab, spec):
    assert lab.verify(spec) == []


def test_the_spec_holds_the_course_figures(spec):
    (start,) = [case for case in spec.cases if case["name"] == "tictactoe-start"]
    assert start["game"] == "tictactoe" and "state" not in start and "window" not in start
    assert start["expect"] == {"value": 0, "calls": 16811, "expansions": 10071}


def test_expected_answers_never_reach_the_student_process(lab, spec):
    for plan in lab.plans(spec, SEED):
        text = json.dumps(plan.request)
        assert "expect" not in text and "16811" not in text
        assert set(plan.request) == {"id", "game", "params", "calls"}


def write_spec(tmp_path, cases="  []\n", random_block=""):
    text = (
        f"lab: negamax\nchecks:\n  load: {{points: 1}}\n  value: {{points: 1}}\n  nodes: {{points: 1}}\n"
        f"  choice: {{points: 1}}\n  bounds: {{points: 1}}\n  random: {{points: 1}}\n"
        f"{random_block}cases:\n{cases}"
    )
    path = tmp_path / "negamax.yaml"
    path.write_text(text)
    return load_spec(path)


@pytest.mark.parametrize(
    "case, line, problem",
    [
        ("  - name: a\n    game: chess\n    expect: {value: 0}\n", 11, "unknown game 'chess'"),
        ("  - name: a\n    game: tictactoe\n    state: XO\n    expect: {value: 0}\n", 12, "not a tic-tac-toe state"),
        (
            "  - name: a\n    game: tictactoe\n    window: [0, 1]\n    checks: [value]\n    expect: {value: 0}\n",
            12,
            "alpha <= -1 and beta >= 1",
        ),
        (
            "  - name: a\n    game: nim\n    params: {heaps: [1, 2]}\n    checks: [choice]\n"
            "    expect: {value: 1, moves: [[[1, 2], 1]]}\n",
            14,
            "is not a successor",
        ),
        (
            "  - name: a\n    game: tree\n    params: {graph: {r: [x]}, terminal_nodes: {x: 2}}\n    expect: {value: 0}\n",
            12,
            "not -1, 0 or 1",
        ),
        (
            "  - name: a\n    game: tictactoe\n    checks: [value]\n    expect: {value: 0, calls: 3}\n",
            13,
            "not used by this case's checks",
        ),
        (
            "  - name: a\n    game: tictactoe\n    positions: [{state: '.........', player: 0}]\n"
            "    expect: {values: [0, 1]}\n",
            13,
            "one value -1, 0 or 1 per position",
        ),
    ],
)
def test_a_malformed_case_is_a_spec_error_at_its_line(lab, tmp_path, case, line, problem):
    with pytest.raises(SpecError, match=problem) as caught:
        lab.plans(write_spec(tmp_path, case), SEED)
    assert caught.value.line == line


def test_verify_names_the_line_of_a_stale_count(lab, tmp_path):
    case = (
        "  - name: a\n    game: nim\n    params: {heaps: [1, 2, 3]}\n    checks: [nodes]\n"
        "    expect: {calls: 230, expansions: 139}\n"
    )
    (problem,) = lab.verify(write_spec(tmp_path, case))
    assert problem.endswith(":14: cases[0].expect.calls: stored 230, the reference computes 229")


def test_a_bad_random_setting_is_a_spec_error(lab, tmp_path):
    spec = write_spec(tmp_path, random_block="random:\n  count: 3\n  nim_size: [0, 9]\n")
    with pytest.raises(SpecError, match="random.nim_size"):
        lab.plans(spec, SEED)


# --- hidden random positions ----------------------------------------------------------


def encoded(positions):
    return [(p.game.name, json.dumps(p.game.encode(p.state)), p.player) for p in positions]


def test_random_positions_come_from_the_seed_and_cycle_through_the_games(spec):
    first = random_positions(spec, 11)
    assert encoded(first) == encoded(random_positions(spec, 11))
    assert encoded(first) != encoded(random_positions(spec, 12))
    assert [p.game.name for p in first] == ["tictactoe", "nim", "tree"] * 3
    for position in first:
        assert not position.game.finished(position.state)
        if position.game.name == "nim":
            assert position.state[1] == position.player  # the player to move is the one asked
        if position.game.name == "tree":
            assert set(position.game.module.terminal_nodes.values()) <= {-1, 0, 1}


# --- why comparing counts exactly is fair ---------------------------------------------


def sample_positions(game, count, seed):
    """Positions reached by random play from the start (each with the player to move)."""
    rng, found = random.Random(seed), []
    while len(found) < count:
        state, player = game.start, 0
        for _ in range(rng.randint(0, 8)):
            if game.finished(state):
                break
            state, player = rng.choice(game.next_states(state, player)), game.other(player)
        found.append((state, player))
    return found


VARIANTS = [dict(fail=fail, start=start) for fail in ("soft", "hard") for start in (None, -1, -INF)]


@pytest.mark.slow
def test_accepted_variants_make_the_same_calls_for_every_window_with_alpha_below_beta():
    games = [(load_game("tictactoe"), 25), (load_game("nim", heaps=(2, 3, 4)), 15), (load_game("tree"), 10)]
    windows = [(a, b) for a in (-INF, -1, 0, 1) for b in (-1, 0, 1, INF) if a < b]
    zero_width_differs = False
    for game, count in games:
        # each position once: a repeated draw (nim's start three times) makes the same
        # deterministic calls again and shows nothing more
        for state, player in dict.fromkeys(sample_positions(game, count, seed=3)):
            if state == game.start and game.name == "tictactoe":
                continue  # the start alone takes longer than all the rest; the fixtures grade it
            for alpha, beta in windows:
                course = alphabeta_value(game, state, player, alpha, beta)
                for variant in VARIANTS:
                    other = alphabeta_value(game, state, player, alpha, beta, **variant)
                    assert (other.calls, other.trace) == (course.calls, course.trace), (state, alpha, beta, variant)
            for v in (-1, 0, 1):
                course = alphabeta_value(game, state, player, v, v)
                lowest = alphabeta_value(game, state, player, v, v, start=-1)
                zero_width_differs |= course.calls != lowest.calls
    assert zero_width_differs  # which is why no measured call uses a window with alpha == beta
