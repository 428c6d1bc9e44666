"""The `tictactoe` lab's exact search, with a trace, and the true values it is judged against.

`lab_maximize` / `lab_minimize` / `lab_minimax` follow the skeleton line by
line (DESIGN.md, "Skeleton semantics"), so their `nodes_visited` and their
order of `get_childs` calls are what a correct submission must reproduce.
`position_value` and `optimal_moves` are plain minimax (no pruning) under the
same `score`, for judging values and chosen moves.

Bound specification (fail-soft, checked in tests/test_reference_tictactoe.py):
`lab_maximize` / `lab_minimize` called on a position whose true value, at the
same depth offset, is `v`, with a window `alpha < beta`, return a utility `u`
such that

- `alpha <= v <= beta` implies `u == v`;
- `v < alpha` implies `v <= u <= alpha`;
- `v > beta` implies `beta <= u <= v`.

The first form, with only `u <= alpha` and `u >= beta` in the last two, is the
Knuth-Moore specification that the grader checks (fail-hard submissions meet
it too); the lab's search meets the stronger fail-soft form above. Ties are
exact at the window's edges: the strict `>` / `<` bound updates never let a
value equal to `alpha` or `beta` be mistaken for a bound.
"""

import random
from dataclasses import dataclass, field
from functools import cache

import numpy as np

from reference.tictactoe import (
    O,
    X,
    format_board,
    game_over,
    get_childs,
    get_next_turn,
    parse_board,
    score,
)

INF = 100000
"""The lab's `infinite_number`: beyond any score, which lies in [-10, 10]."""


@dataclass
class LabSearchResult:
    """What the lab's `maximize` / `minimize` / `minimax` return, plus the trace the grader compares."""

    choice: np.ndarray | None
    points: int
    nodes_visited: int
    expanded: list[str] = field(default_factory=list)
    """Notation of each board `get_childs` was called on, in call order."""


def _lab_search(
    board, active_turn, player, depth, alpha, beta, nodes_visited, maximizing, expanded, strict=False, fail_hard=False
):
    """One `maximize` (or, with `maximizing` false, `minimize`) call of the skeleton;
    `strict`: a course that cuts off only when maxUtility > beta (minUtility < alpha).
    `fail_hard` (off in the lab's own search): the textbook's fail-hard form, which answers
    the bound it cut on and never less than alpha (more than beta); a finished board's
    score as it is. Under `strict` it reads more than the fail-soft search: a child's
    clamped answer equals the bound, which `>` does not cut on."""
    finished, _ = game_over(board)
    if finished:
        return None, score(board, player, depth), nodes_visited
    entry_alpha, entry_beta = alpha, beta
    depth += 1
    best = -INF if maximizing else INF
    choice = None
    expanded.append(format_board(board))
    for child in get_childs(board, active_turn):
        nodes_visited += 1
        _, utility, nodes_visited = _lab_search(
            child,
            get_next_turn(active_turn),
            player,
            depth,
            alpha,
            beta,
            nodes_visited,
            not maximizing,
            expanded,
            strict,
            fail_hard,
        )
        if maximizing:
            if utility > best:
                choice, best = child, utility
            if best > beta if strict else best >= beta:
                return choice, beta if fail_hard else best, nodes_visited
            if best > alpha:
                alpha = best
        else:
            if utility < best:
                choice, best = child, utility
            if best < alpha if strict else best <= alpha:
                return choice, alpha if fail_hard else best, nodes_visited
            if best < beta:
                beta = best
    if fail_hard:
        best = max(best, entry_alpha) if maximizing else min(best, entry_beta)
    return choice, best, nodes_visited


def _run(
    board, active_turn, player, depth, alpha, beta, nodes_visited, maximizing, strict=False, fail_hard=False
) -> LabSearchResult:
    expanded: list[str] = []
    choice, points, nodes = _lab_search(
        np.array(board, dtype=float),
        active_turn,
        player,
        depth,
        alpha,
        beta,
        nodes_visited,
        maximizing,
        expanded,
        strict,
        fail_hard,
    )
    return LabSearchResult(choice, points, nodes, expanded)


def lab_maximize(
    board, active_turn, player, depth, alpha, beta, nodes_visited, strict=False, fail_hard=False
) -> LabSearchResult:
    """The skeleton's `maximize(matrix, active_turn, player, depth, alpha, beta, nodes_visited)`."""
    return _run(board, active_turn, player, depth, alpha, beta, nodes_visited, True, strict, fail_hard)


def lab_minimize(
    board, active_turn, player, depth, alpha, beta, nodes_visited, strict=False, fail_hard=False
) -> LabSearchResult:
    """The skeleton's `minimize(matrix, active_turn, player, depth, alpha, beta, nodes_visited)`."""
    return _run(board, active_turn, player, depth, alpha, beta, nodes_visited, False, strict, fail_hard)


def lab_minimax(board, player, strict=False, fail_hard=False) -> LabSearchResult:
    """The skeleton's `minimax(matrix, player)`: `player` moves and maximizes, full window
    (`strict`: a course that cuts off only when maxUtility > beta, minUtility < alpha;
    `fail_hard`: the textbook's fail-hard form, see _lab_search)."""
    return lab_maximize(board, player, player, 0, -INF, INF, 0, strict=strict, fail_hard=fail_hard)


# --- true values ------------------------------------------------------------


@cache
def _value(notation: str, active_turn: int, player: int, depth: int) -> int:
    board = parse_board(notation)
    finished, _ = game_over(board)
    if finished:
        return score(board, player, depth)
    values = [
        _value(format_board(child), get_next_turn(active_turn), player, depth + 1)
        for child in get_childs(board, active_turn)
    ]
    return max(values) if active_turn == player else min(values)


def position_value(board, active_turn, player, depth=0) -> int:
    """True minimax value for `player` of `board` with `active_turn` to move, `depth` moves deep.

    `player` maximizes and the other side minimizes, scored by `score`, with no
    pruning; memoised on the notation, so a whole game tree costs ~5,000 positions.
    """
    return _value(format_board(board), int(active_turn), int(player), int(depth))


def optimal_moves(board, player) -> set[str]:
    """Notation of each child of `board` (`player` to move) whose true value is the position's.

    Because `score` rewards speed, a slower win is not optimal. A finished
    board has no moves.
    """
    if game_over(board)[0]:
        return set()
    value = position_value(board, player, player)
    return {
        format_board(child)
        for child in get_childs(np.asarray(board), player)
        if position_value(child, get_next_turn(player), player, 1) == value
    }


# --- random positions -------------------------------------------------------


def random_position(rng: random.Random, min_empty=3, max_empty=8) -> tuple[np.ndarray, int]:
    """A legal, unfinished (board, player_to_move) reached by random play.

    Either player may start, as in the lab; the number of empty cells is drawn
    uniformly from [min_empty, max_empty], and games that end early are replayed.
    """
    if not 1 <= min_empty <= max_empty <= 9:
        raise ValueError(f"need 1 <= min_empty <= max_empty <= 9, got {min_empty}, {max_empty}")
    while True:
        moves = 9 - rng.randint(min_empty, max_empty)
        turn = rng.choice((O, X))
        board = np.zeros((3, 3))
        for _ in range(moves):
            board = rng.choice(get_childs(board, turn))
            turn = get_next_turn(turn)
            if game_over(board)[0]:
                break
        else:
            return board, turn
