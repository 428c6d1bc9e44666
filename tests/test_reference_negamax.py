"""The negamax lab's reference: its games, its searches and its solution file."""

import ast
import json
import math
import random
import sys
from functools import reduce
from operator import xor
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import reference.solutions.negamax as solution
from reference.games import GAMES, load_game
from reference.negamax import (
    alphabeta_value,
    negamax_value,
    optimal_successors,
    true_value,
)

INF = math.inf
WINDOWS = [(alpha, beta) for alpha in (-INF, -1, 0, 1, INF) for beta in (-INF, -1, 0, 1, INF) if alpha < beta]


def positions(game):
    """Every (state, player to move) reachable from the start, in BFS order."""
    first = (game.start, game.players[0])
    seen, queue = {first}, [first]
    for state, player in queue:
        if game.finished(state):
            continue
        for successor in game.next_states(state, player):
            position = (successor, game.other(player))
            if position not in seen:
                seen.add(position)
                queue.append(position)
    return queue


def sample(game, size, seed=0):
    found = positions(game)
    return found if len(found) <= size else random.Random(seed).sample(found, size)


@pytest.fixture(scope="module")
def tictactoe():
    return load_game("tictactoe")


# --- the course's figures -------------------------------------------------


def test_minimax_from_tictactoe_start_visits_the_whole_game_tree(tictactoe):
    result = negamax_value(tictactoe, tictactoe.start, 0)
    assert result.value == 0
    assert result.calls == 549_946
    # 549,946 - 294,778 = 255,168: the number of possible tic-tac-toe games.
    assert result.next_states_calls == 294_778


@pytest.mark.parametrize("fail", ["soft", "hard"])
def test_alphabeta_from_tictactoe_start_with_the_course_window(tictactoe, fail):
    result = alphabeta_value(tictactoe, tictactoe.start, 0, -1, 1, fail=fail)
    assert (result.value, result.calls, result.next_states_calls) == (0, 16_811, 10_071)
    assert result.trace[:2] == (tictactoe.start, "X........")


@pytest.mark.parametrize("fail", ["soft", "hard"])
def test_alphabeta_from_tictactoe_start_with_the_full_window(tictactoe, fail):
    # Without the bound 1, a won child no longer cuts off its siblings.
    result = alphabeta_value(tictactoe, tictactoe.start, 0, -INF, INF, fail=fail)
    assert (result.value, result.calls, result.next_states_calls) == (0, 18_297, 10_967)


def test_alphabeta_on_the_default_tree_prunes_below_c2_and_b2():
    game = load_game("tree")
    result = alphabeta_value(game, game.start, 0)
    assert result.value == 0
    assert result.trace == ("a", "b1", "c1", "c2", "b2", "c3", "b3", "c5")
    assert negamax_value(game, game.start, 0).calls == 20


# --- the games ------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(GAMES))
def test_encode_decode_round_trip_through_json(name):
    game = load_game(name)
    for state, _ in positions(game):
        data = json.loads(json.dumps(game.encode(state)))
        assert game.decode(data) == state
        assert hash(game.decode(data)) == hash(state)
        assert isinstance(game.describe(state), str)


@pytest.mark.parametrize(
    "name, garbage",
    [
        ("tictactoe", "XO"),
        ("tictactoe", "XOX?....."),
        ("tictactoe", list("X........")),
        ("nim", [[1, -2], 0]),
        ("nim", [[1, 2], 2]),
        ("nim", [1, 2, 0]),
        ("tree", "zz"),
        ("tree", 3),
    ],
)
def test_decode_rejects_what_no_state_encodes_to(name, garbage):
    with pytest.raises(ValueError):
        load_game(name).decode(garbage)


@pytest.mark.parametrize("name", sorted(GAMES))
def test_game_modules_import_only_the_standard_library(name):
    tree = ast.parse(load_game(name).source)
    imported = {
        alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names
    }
    imported |= {
        node.module.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.level == 0
    }
    assert imported <= set(sys.stdlib_module_names)


def test_load_game_rejects_unknown_games_and_parameters():
    with pytest.raises(ValueError, match="unknown game"):
        load_game("chess")
    with pytest.raises(TypeError):
        load_game("tictactoe", size=4)


def test_each_loaded_game_has_its_own_configuration():
    small, large = load_game("nim", heaps=[1, 1]), load_game("nim", heaps=(3, 4, 5))
    assert small.start == ((1, 1), 0)
    assert large.start == ((3, 4, 5), 0)


def test_tictactoe_moves_fill_empty_cells_in_row_major_order(tictactoe):
    assert tictactoe.next_states("X...O....", 0) == [
        "XX..O....",
        "X.X.O....",
        "X..XO....",
        "X...OX...",
        "X...O.X..",
        "X...O..X.",
        "X...O...X",
    ]
    assert tictactoe.utility("XXXOO....", 0) == 1
    assert tictactoe.utility("XXXOO....", 1) == -1
    assert tictactoe.utility("XOXXOOOXX", 0) == 0
    assert tictactoe.utility("XX.OO....", 0) is None
    assert tictactoe.describe("XOX.O...X") == "XOX\n.O.\n..X"


def test_tictactoe_has_5478_reachable_boards(tictactoe):
    assert len({state for state, _ in positions(tictactoe)}) == 5478


def test_nim_moves_take_from_each_heap_in_order():
    game = load_game("nim", heaps=[1, 2])
    assert game.next_states(((1, 2), 0), 0) == [((0, 2), 1), ((1, 1), 1), ((1, 0), 1)]
    assert game.utility(((0, 0), 1), 1) == -1
    assert game.utility(((0, 0), 1), 0) == 1
    assert game.utility(((0, 1), 1), 0) is None


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 4), min_size=1, max_size=3))
def test_nim_is_lost_for_the_mover_iff_the_heaps_xor_to_zero(heaps):
    game = load_game("nim", heaps=heaps)
    for state, player in sample(game, 60):
        expected = -1 if reduce(xor, state[0]) == 0 else 1
        assert true_value(game, state, player) == expected
        assert alphabeta_value(game, state, player).value == expected


def test_tree_values_are_for_player_0_and_negated_for_player_1():
    game = load_game("tree")
    assert true_value(game, "a", 0) == 0
    assert true_value(game, "b2", 1) == 1
    assert game.utility("d3", 0) == 1 and game.utility("d3", 1) == -1
    assert optimal_successors(game, "a", 0) == ["b1"]


def test_a_configured_tree_finds_its_root():
    game = load_game("tree", graph={"r": ["x", "m"], "m": ["y", "z"]}, terminal_nodes={"x": -1, "y": 1, "z": 0})
    assert game.start == "r"
    assert true_value(game, "r", 0) == 0
    assert optimal_successors(game, "r", 0) == ["m"]
    assert alphabeta_value(game, "r", 0).trace == ("r", "m")


@pytest.mark.parametrize(
    "graph, leaves",
    [
        ({"r": ["x"], "s": ["x"]}, {"x": 1}),  # two roots
        ({"r": ["x", "q"]}, {"x": 1}),  # unknown child
        ({"r": ["x"]}, {"x": 2}),  # value outside -1..1
        ({"r": []}, {}),  # inner node without children
    ],
)
def test_a_malformed_tree_is_rejected(graph, leaves):
    with pytest.raises(ValueError):
        load_game("tree", graph=graph, terminal_nodes=leaves)


# --- the searches ---------------------------------------------------------


def bound_cases():
    games = [
        load_game("tictactoe"),
        load_game("nim", heaps=(1, 2, 3)),
        load_game("nim", heaps=(2, 3)),
        load_game("tree"),
    ]
    return [(game, state, player) for game in games for state, player in sample(game, 150)]


@pytest.mark.parametrize("fail", ["soft", "hard"])
def test_alphabeta_meets_the_bound_specification(fail):
    for game, state, player in bound_cases():
        exact = true_value(game, state, player)
        for alpha, beta in WINDOWS:
            result = alphabeta_value(game, state, player, alpha, beta, fail=fail).value
            where = f"{game.name} {game.encode(state)} player {player} window ({alpha}, {beta})"
            if alpha <= exact <= beta:
                assert result == exact, where
            elif exact < alpha:
                assert result <= alpha, where
            else:
                assert result >= beta, where
            if fail == "hard":
                assert alpha <= result <= beta, where


def test_soft_and_hard_alphabeta_visit_the_same_states():
    for game, state, player in bound_cases()[::5]:
        for alpha, beta in WINDOWS:
            soft = alphabeta_value(game, state, player, alpha, beta, fail="soft")
            hard = alphabeta_value(game, state, player, alpha, beta, fail="hard")
            assert (soft.calls, soft.trace) == (hard.calls, hard.trace)


def test_minimax_agrees_with_the_memoised_value():
    for game, state, player in bound_cases()[::3]:
        assert negamax_value(game, state, player).value == true_value(game, state, player)


def test_optimal_successors_keep_the_value(tictactoe):
    for state, player in sample(tictactoe, 100):
        best = optimal_successors(tictactoe, state, player)
        if tictactoe.finished(state):
            assert best == []
            continue
        exact = true_value(tictactoe, state, player)
        opponent = tictactoe.other(player)
        assert best and all(-true_value(tictactoe, s, opponent) == exact for s in best)
        others = [s for s in tictactoe.next_states(state, player) if s not in best]
        assert all(-true_value(tictactoe, s, opponent) < exact for s in others)


def test_alphabeta_rejects_an_unknown_fail_mode(tictactoe):
    with pytest.raises(ValueError):
        alphabeta_value(tictactoe, tictactoe.start, 0, fail="medium")


# --- the solution file ----------------------------------------------------


@pytest.fixture
def play(monkeypatch):
    """Set a game's globals in the solution module, as the grader does."""

    def use(game):
        for name, obj in game.student_globals().items():
            monkeypatch.setattr(solution, name, obj)
        monkeypatch.setattr(solution, "num_value_call", 0)

    return use


@pytest.mark.parametrize(
    "name, params",
    [
        ("tictactoe", {}),
        ("nim", {"heaps": (1, 2, 3)}),
        ("nim", {"heaps": (2, 2, 3)}),
        ("tree", {}),
    ],
)
def test_solution_value_counts_calls_like_the_reference(play, name, params):
    game = load_game(name, **params)
    play(game)
    reference = alphabeta_value(game, game.start, 0)
    assert solution.value(game.start, 0) == reference.value
    assert solution.num_value_call == reference.calls


@pytest.mark.parametrize("name", sorted(GAMES))
def test_solution_best_move_is_the_first_optimal_successor(play, name):
    game = load_game(name)
    play(game)
    for state, player in sample(game, 80, seed=1):
        if not game.finished(state):
            assert solution.best_move(state, player) == (
                true_value(game, state, player),
                optimal_successors(game, state, player)[0],
            )


def test_solution_alphabeta_is_the_course_code(play):
    for game, state, player in bound_cases()[::4]:
        play(game)
        for alpha, beta in WINDOWS:
            assert (
                solution.alphaBeta(state, player, alpha, beta)
                == alphabeta_value(game, state, player, alpha, beta, fail="soft").value
            )


def test_solution_functions_need_no_game_globals_until_called():
    """The cell with the student's functions runs without any game globals."""
    source = Path(solution.__file__).read_text(encoding="utf-8")
    cells = source.split("\n# %%")
    (functions,) = [cell for cell in cells if "def alphaBeta(" in cell]
    namespace = {}
    exec(functions.removeprefix("\n"), namespace)
    game = load_game("nim", heaps=(3, 5))
    namespace.update(game.student_globals())
    assert namespace["value"](game.start, 0) == 1
    assert namespace["num_value_call"] == alphabeta_value(game, game.start, 0).calls


def test_solution_inline_tictactoe_matches_the_reference_game(tictactoe):
    assert solution.Players == tictactoe.players
    assert solution.Start == tictactoe.start
    for state, player in positions(tictactoe):
        assert solution.finished(state) == tictactoe.finished(state)
        for who in tictactoe.players:
            assert solution.utility(state, who) == tictactoe.utility(state, who)
        assert solution.next_states(state, player) == tictactoe.next_states(state, player)
