"""The tictactoe lab's reference: board rules, the lab's exact search, true values and the solution."""

import dataclasses
import itertools
import random
from contextlib import contextmanager

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reference import tictactoe_bugs
from reference.solutions import tictactoe as solution
from reference.tictactoe import (
    O,
    X,
    draw_board,
    format_board,
    game_over,
    game_status,
    get_childs,
    get_next_turn,
    is_legal,
    parse_board,
    score,
)
from reference.tictactoe_search import (
    INF,
    lab_maximize,
    lab_minimax,
    lab_minimize,
    optimal_moves,
    position_value,
    random_position,
)

boards = st.lists(st.sampled_from([O, X, 0]), min_size=9, max_size=9).map(
    lambda cells: np.array(cells, dtype=float).reshape(3, 3)
)
rngs = st.integers(0, 2**32).map(random.Random)
positions = rngs.map(lambda rng: random_position(rng, 2, 7))
EMPTY_BOARD = ".../.../..."


def notation(board):
    return None if board is None else format_board(board)


# --- notation ---------------------------------------------------------------


@given(boards)
def test_format_then_parse_gives_the_board_back(board):
    assert np.array_equal(parse_board(format_board(board)), board)
    assert np.array_equal(parse_board(format_board(board.astype(int))), board)


@given(st.lists(st.text("xo.", min_size=3, max_size=3), min_size=3, max_size=3).map("/".join))
def test_parse_then_format_gives_the_text_back(text):
    board = parse_board(text)
    assert board.dtype == float and board.shape == (3, 3)
    assert format_board(board) == text


def test_parse_board_reads_rows_top_to_bottom():
    board = parse_board("xo./.x./..o")
    assert board.tolist() == [[X, O, 0], [0, X, 0], [0, 0, O]]


@pytest.mark.parametrize(
    "text, message",
    [
        ("xo./.q./..o", r"row 2 \('\.q\.'\) has 'q' at column 2"),
        ("xo./.x.", "expected 3 rows"),
        ("xo./.x../..o", r"row 2 \('\.x\.\.'\) must have 3 cells"),
        ("XO./.X./..O", "row 1"),
    ],
)
def test_parse_board_names_the_bad_row_and_character(text, message):
    with pytest.raises(ValueError, match=message):
        parse_board(text)


@pytest.mark.parametrize("board", [np.zeros((2, 3)), np.full((3, 3), 2.0), [[1, 0], [0, 1]]])
def test_format_board_rejects_what_is_not_a_board(board):
    with pytest.raises(ValueError):
        format_board(board)


def test_draw_board():
    assert draw_board(parse_board("xo./.x./..o")) == (" x | o | . \n---+---+---\n . | x | . \n---+---+---\n . | . | o ")


# --- the given helpers ------------------------------------------------------


def test_get_next_turn_alternates():
    assert (get_next_turn(O), get_next_turn(X)) == (X, O)
    assert get_next_turn(1.0) == X


def test_get_childs_fills_empty_cells_in_row_major_order_on_copies():
    board = parse_board("x.o/.o./x..")
    childs = get_childs(board, X)
    assert [format_board(child) for child in childs] == [
        "xxo/.o./x..",
        "x.o/xo./x..",
        "x.o/.ox/x..",
        "x.o/.o./xx.",
        "x.o/.o./x.x",
    ]
    childs[0][2, 2] = O
    assert format_board(board) == "x.o/.o./x.."
    assert get_childs(parse_board("xox/oxo/oxo"), O) == []
    assert get_childs(board.astype(int), O)[0].dtype == board.astype(int).dtype


def test_game_status_and_score():
    o_wins = parse_board("ooo/xx./...")
    assert game_status(o_wins) == O and game_status(parse_board("o../xxx/o..")) == X
    assert game_status(parse_board("xo./.x./..o")) == 0
    assert score(o_wins, O, 3) == 7 and score(o_wins, X, 3) == -7
    assert score(parse_board("oxo/oxo/xox"), O, 9) == 0


LINES = (
    [[(r, 0), (r, 1), (r, 2)] for r in range(3)]
    + [[(0, c), (1, c), (2, c)] for c in range(3)]
    + [
        [(0, 0), (1, 1), (2, 2)],
        [(0, 2), (1, 1), (2, 0)],
    ]
)


@pytest.mark.parametrize("player", [O, X])
@pytest.mark.parametrize("line", LINES, ids=[f"line{k}" for k in range(len(LINES))])
def test_game_over_on_every_line_for_both_players(line, player):
    board = np.zeros((3, 3))
    for cell in line:
        board[cell] = player
    assert game_over(board) == (True, player)
    assert game_over(board.astype(int)) == (True, player)
    assert solution.game_over(board) == (True, player)


@pytest.mark.parametrize(
    "text, expected",
    [
        ("oxo/oxo/xox", (True, 0)),  # full and drawn
        ("oxo/xxo/xoo", (True, O)),  # full, 'o' completed the right column with the last move
        ("xox/oxo/oxx", (True, X)),  # full, 'x' completed the diagonal with the last move
        (EMPTY_BOARD, (False, 0)),
        ("xo./.x./..o", (False, 0)),
    ],
)
def test_game_over_on_full_and_unfinished_boards(text, expected):
    finished, status = game_over(parse_board(text))
    assert (finished, status) == expected and isinstance(finished, bool)
    assert solution.game_over(parse_board(text)) == expected


@given(boards, st.sampled_from([O, X]), st.integers(0, 9))
def test_solution_helpers_are_the_given_helpers(board, turn, depth):
    assert [format_board(c) for c in solution.get_childs(board, turn)] == [
        format_board(c) for c in get_childs(board, turn)
    ]
    assert solution.get_next_turn(turn) == get_next_turn(turn)
    assert solution.game_status(board) == game_status(board)
    assert solution.score(board, turn, depth) == score(board, turn, depth)


# --- legality ---------------------------------------------------------------


def reachable_boards(first_players) -> set[str]:
    """Every board some game reaches, from the empty board, stopping at a finished one."""
    seen = set()
    frontier = [(np.zeros((3, 3)), first) for first in first_players]
    while frontier:
        board, turn = frontier.pop()
        key = (format_board(board), turn)
        if key not in seen:
            seen.add(key)
            if not game_over(board)[0]:
                frontier.extend((child, get_next_turn(turn)) for child in get_childs(board, turn))
    return {text for text, _ in seen}


def test_is_legal_is_exactly_reachability():
    assert len(reachable_boards([X])) == 5478  # the known count of legal positions when 'x' starts
    reachable = reachable_boards([O, X])
    for cells in itertools.product([O, X, 0], repeat=9):
        board = np.array(cells).reshape(3, 3)
        assert is_legal(board) == (format_board(board) in reachable), format_board(board)
    assert not is_legal(np.zeros((3, 4))) and not is_legal(np.full((3, 3), 0.5))


@given(rngs, st.integers(1, 9), st.integers(0, 8))
def test_random_position_is_legal_unfinished_and_says_who_moves(rng, min_empty, extra):
    max_empty = min(9, min_empty + extra)
    board, turn = random_position(rng, min_empty, max_empty)
    assert is_legal(board) and not game_over(board)[0]
    assert min_empty <= np.count_nonzero(board == 0) <= max_empty
    movers, others = np.count_nonzero(board == turn), np.count_nonzero(board == -turn)
    assert others - movers in (0, 1)


def test_random_position_rejects_impossible_ranges():
    with pytest.raises(ValueError):
        random_position(None, 0, 3)
    with pytest.raises(ValueError):
        random_position(None, 5, 4)


# --- the lab's search -------------------------------------------------------


def test_known_figure_from_the_empty_board():
    result = lab_minimax(np.zeros((3, 3)), O)
    assert (result.points, result.nodes_visited, notation(result.choice)) == (0, 20865, "o../.../...")
    assert result.expanded[:2] == [EMPTY_BOARD, "o../.../..."]
    assert len(result.expanded) == 12413


# The computer ('o') moves of the two games printed in seed 002, reconstructed
# from the final boards and the printed (points, nodes_visited): the only
# move orders that reproduce all the printed figures.
SEED_GAME_MOVES = [
    (".../.x./.o.", 0, 2382, "o../.x./.o."),
    ("o.x/.x./.o.", 7, 102, "o.x/.x./oo."),
    ("o.x/xx./oo.", 9, 10, "o.x/xx./ooo"),
    (".../.xo/...", 0, 1489, "o../.xo/..."),
    ("ox./.xo/...", 0, 128, "ox./.xo/.o."),
    ("ox./.xo/xo.", 0, 9, "oxo/.xo/xo."),
    ("oxo/.xo/xox", 0, 1, "oxo/oxo/xox"),
]


@pytest.mark.parametrize("before, points, nodes, after", SEED_GAME_MOVES)
def test_seed_games_figures(before, points, nodes, after):
    result = lab_minimax(parse_board(before), O)
    assert (result.points, result.nodes_visited, notation(result.choice)) == (points, nodes, after)


def test_finished_board_returns_its_score_without_expanding():
    result = lab_minimize(parse_board("ooo/xx./..."), X, O, 4, -INF, INF, 7)
    assert (result.choice, result.points, result.nodes_visited, result.expanded) == (None, 6, 7, [])


def test_cut_off_on_equality_with_beta():
    # 'o' wins at once with its first child (value 9): with beta = 9 the
    # search stops there, so `>=` (not `>`) decides the cut-off.
    board = parse_board("oo./xx./...")
    assert notation(lab_maximize(board, O, O, 0, -INF, 9, 0).choice) == "ooo/xx./..."
    assert lab_maximize(board, O, O, 0, -INF, 9, 0).nodes_visited == 1
    assert lab_maximize(board, O, O, 0, -INF, 10, 0).nodes_visited > 1


# --- true values and optimal moves ------------------------------------------


def test_win_in_one_is_the_only_optimal_move():
    board = parse_board("oo./xx./...")
    assert position_value(board, O, O) == 9
    assert optimal_moves(board, O) == {"ooo/xx./..."}


def test_forced_block_is_the_only_optimal_move():
    board = parse_board("o../xx./...")
    assert position_value(board, O, O) == 0
    assert optimal_moves(board, O) == {"o../xxo/..."}


def test_fork_moves_are_optimal():
    board = parse_board("oxo/x../...")
    assert position_value(board, O, O) == 7
    assert optimal_moves(board, O) == {"oxo/xo./...", "oxo/x../..o"}


def test_slower_win_is_not_optimal():
    board = parse_board(".../..o/xxo")
    slower_wins = [c for c in get_childs(board, O) if 0 < position_value(c, X, O, 1) < 9]
    assert slower_wins
    assert optimal_moves(board, O) == {"..o/..o/xxo"}


def test_empty_board_values():
    assert position_value(np.zeros((3, 3)), O, O) == 0
    assert len(optimal_moves(np.zeros((3, 3)), X)) == 9
    assert optimal_moves(parse_board("ooo/xx./..."), X) == set()


@settings(max_examples=60, deadline=None)
@given(positions)
def test_lab_choice_is_optimal_and_its_points_are_the_true_value(position):
    board, turn = position
    result = lab_minimax(board, turn)
    assert result.points == position_value(board, turn, turn)
    assert notation(result.choice) in optimal_moves(board, turn)


@settings(max_examples=150, deadline=None)
@given(positions, st.sampled_from([O, X]), st.integers(0, 3), st.data())
def test_bound_specification(position, player, depth, data):
    """Fail-soft: exact inside [alpha, beta], else a bound between v and the window's edge."""
    board, turn = position
    v = position_value(board, turn, player, depth)
    around_v = st.integers(v - 4, v + 4) | st.sampled_from([-INF, INF])
    alpha, beta = sorted(data.draw(st.lists(around_v, min_size=2, max_size=2, unique=True)))
    lab_search = lab_maximize if turn == player else lab_minimize
    u = lab_search(board, turn, player, depth, alpha, beta, 0).points
    if alpha <= v <= beta:
        assert u == v
    elif v < alpha:
        assert v <= u <= alpha
    else:
        assert beta <= u <= v


# --- the reference solution in the student API -------------------------------


@contextmanager
def recorded_get_childs(module):
    """Record the boards on which `module`'s searches call `get_childs`, as the grader does."""
    expanded = []
    original = module.get_childs

    def recording(matrix, turn):
        expanded.append(format_board(matrix))
        return original(matrix, turn)

    module.get_childs = recording
    try:
        yield expanded
    finally:
        module.get_childs = original


def test_solution_gives_the_known_figure():
    choice, points, nodes_visited = solution.minimax(np.zeros((3, 3)), 1)
    assert (points, nodes_visited, notation(choice)) == (0, 20865, "o../.../...")


@settings(max_examples=40, deadline=None)
@given(positions)
def test_solution_minimax_matches_the_lab_search(position):
    board, turn = position
    expected = lab_minimax(board, turn)
    with recorded_get_childs(solution) as expanded:
        choice, points, nodes_visited = solution.minimax(board.copy(), turn)
    assert (notation(choice), points, nodes_visited) == (
        notation(expected.choice),
        expected.points,
        expected.nodes_visited,
    )
    assert expanded == expected.expanded


@settings(max_examples=60, deadline=None)
@given(positions, st.sampled_from([O, X]), st.integers(0, 3), st.integers(-12, 12), st.integers(1, 12))
def test_solution_maximize_and_minimize_match_the_lab_search(position, player, depth, alpha, width):
    board, turn = position
    beta = alpha + width
    maximizing = turn == player
    lab_search = lab_maximize if maximizing else lab_minimize
    student_search = solution.maximize if maximizing else solution.minimize
    expected = lab_search(board, turn, player, depth, alpha, beta, 5)
    with recorded_get_childs(solution) as expanded:
        choice, utility, nodes_visited = student_search(board.copy(), turn, player, depth, alpha, beta, 5)
    assert (notation(choice), utility, nodes_visited) == (
        notation(expected.choice),
        expected.points,
        expected.nodes_visited,
    )
    assert expanded == expected.expanded


def test_play_runs_a_whole_game_in_the_terminal(monkeypatch, capsys):
    answers = iter(["hello", "4 1"] + [f"{r} {c}" for r in range(1, 4) for c in range(1, 4)])
    monkeypatch.setattr("builtins.input", lambda prompt: next(answers))
    solution.play(human=X, human_starts=True)
    output = capsys.readouterr().out
    assert "Please type two numbers" in output and "That cell is not free" in output
    assert "nodes_visited" in output
    assert output.rstrip().splitlines()[-1] in ("draw", "computer wins")


# --- classic-bug replays (reference/tictactoe_bugs.py) ------------------------------------


@pytest.mark.parametrize(
    ("text", "player"),
    [(".../.../...", 1), ("o../.../...", -1), ("o../xx./...", 1), (".../oxx/xo.", 1), ("oxo/oxx/xo.", -1)],
)
def test_the_replay_with_the_labs_rules_is_the_labs_search(text, player):
    board = parse_board(text)
    ours = tictactoe_bugs.replay(tictactoe_bugs.LAB_RULES, "minimax", text, [player])
    lab = lab_minimax(board, player)
    assert (ours.points, ours.nodes_visited, ours.expanded) == (lab.points, lab.nodes_visited, lab.expanded)
    assert ours.choice == format_board(lab.choice)
    for alpha, beta in ((-3, -1), (-1, 1), (0, 1), (1, 3), (-INF, INF)):
        for function, search, turn, depth in (
            ("maximize", lab_maximize, player, 2),
            ("minimize", lab_minimize, -player, 1),
        ):
            ours = tictactoe_bugs.replay(
                tictactoe_bugs.LAB_RULES, function, text, [player, turn, depth, alpha, beta, 0]
            )
            lab = search(board, player, turn, depth, alpha, beta, 0)
            assert (ours.points, ours.nodes_visited, ours.expanded) == (lab.points, lab.nodes_visited, lab.expanded)


@pytest.mark.parametrize("fail_hard", [False, True], ids=["fail_soft", "fail_hard"])
def test_the_replay_of_a_strict_course_is_its_search_in_either_form(fail_hard):
    """A strict course's search, fail-soft or fail-hard (which expands more boards there),
    replayed on small positions (the figures of the empty board are checked above)."""
    rules = dataclasses.replace(tictactoe_bugs.STRICT_RULES, fail_hard=fail_hard)
    for text, player in (("o../xx./...", 1), (".../oxx/xo.", 1), ("oxo/oxx/xo.", -1)):
        board = parse_board(text)
        ours = tictactoe_bugs.replay(rules, "minimax", text, [player])
        lab = lab_minimax(board, player, strict=True, fail_hard=fail_hard)
        assert (ours.points, ours.nodes_visited, ours.expanded) == (lab.points, lab.nodes_visited, lab.expanded)
        for alpha, beta in ((-3, -1), (-1, 1), (0, 1), (1, 3)):
            for function, search, turn, depth in (
                ("maximize", lab_maximize, player, 2),
                ("minimize", lab_minimize, -player, 1),
            ):
                ours = tictactoe_bugs.replay(rules, function, text, [player, turn, depth, alpha, beta, 0])
                lab = search(board, player, turn, depth, alpha, beta, 0, strict=True, fail_hard=fail_hard)
                assert (ours.points, ours.nodes_visited, ours.expanded) == (lab.points, lab.nodes_visited, lab.expanded)


def test_a_watched_replay_stops_where_the_searches_part():
    rules = tictactoe_bugs.Rules(prune=False)
    full = tictactoe_bugs.replay(rules, "minimax", "o../xx./...", [1])
    watch = tictactoe_bugs.Watch(full.expanded, len(full.expanded))
    assert tictactoe_bugs.watched_replay(rules, "minimax", "o../xx./...", [1], watch) == full
    assert tictactoe_bugs.watched_replay(tictactoe_bugs.LAB_RULES, "minimax", "o../xx./...", [1], watch) is None
    shorter = tictactoe_bugs.Watch(full.expanded[:-1], len(full.expanded) - 1)
    assert tictactoe_bugs.watched_replay(rules, "minimax", "o../xx./...", [1], shorter) is None


def test_only_the_draw_bug_changes_game_over():
    for bug in tictactoe_bugs.BUGS:
        for rules in bug.variants:
            for text in ("oxo/oxo/xox", "ooo/xx./x..", "oxo/xxo/xo."):
                truth = game_over(parse_board(text))
                if bug.name == "draw_not_detected" and text == "oxo/oxo/xox":
                    assert tictactoe_bugs.bug_game_over(rules, text) == (False, 0)
                else:
                    assert tictactoe_bugs.bug_game_over(rules, text) == truth
