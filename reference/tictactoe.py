"""Tic-tac-toe rules on 3x3 numpy boards, as the `tictactoe` lab sees them.

A board holds 1 for 'o', -1 for 'x' and 0 for an empty cell; students build
them with `np.zeros((3, 3))`, so every function accepts int or float arrays.

This module is self-contained (standard library and numpy only): the grader
ships its *source text* into the student process to stand in for the given
helpers (`get_next_turn`, `get_childs`, `game_status`, `score`, `game_over`),
so their behaviour here is the contract of the lab.

Specs and feedback write boards in a compact notation: rows top to bottom
separated by '/', cells 'x', 'o' or '.', e.g. "xo./.x./..o".
"""

import numpy as np

O = 1  # noqa: E741 - the course material names the two marks O and X
X = -1
EMPTY = 0

SIZE = 3
_MARK_OF_CELL = {O: "o", X: "x", EMPTY: "."}
_CELL_OF_MARK = {mark: cell for cell, mark in _MARK_OF_CELL.items()}


# --- notation ---------------------------------------------------------------


def parse_board(text: str) -> np.ndarray:
    """The float board (like the students' `np.zeros((3, 3))`) written as `text`."""
    rows = text.split("/")
    if len(rows) != SIZE:
        raise ValueError(f"board {text!r}: expected {SIZE} rows separated by '/', got {len(rows)}")
    board = np.zeros((SIZE, SIZE))
    for r, row in enumerate(rows):
        if len(row) != SIZE:
            raise ValueError(f"board {text!r}: row {r + 1} ({row!r}) must have {SIZE} cells")
        for c, mark in enumerate(row):
            if mark not in _CELL_OF_MARK:
                raise ValueError(
                    f"board {text!r}: row {r + 1} ({row!r}) has {mark!r} at column {c + 1}; use 'x', 'o' or '.'"
                )
            board[r, c] = _CELL_OF_MARK[mark]
    return board


def _marks(board) -> list[list[str]]:
    """The board's cells as marks, row by row; ValueError for anything not a board."""
    array = np.asarray(board)
    if array.shape != (SIZE, SIZE):
        raise ValueError(f"a board must be a {SIZE}x{SIZE} array, got shape {array.shape}")
    marks = []
    for r, row in enumerate(array.tolist()):  # plain numbers: ~10x faster than indexing the array
        for c, cell in enumerate(row):
            if cell not in _MARK_OF_CELL:
                raise ValueError(f"cell ({r}, {c}) holds {cell!r}; expected 1 (o), -1 (x) or 0 (empty)")
        marks.append([_MARK_OF_CELL[cell] for cell in row])
    return marks


def format_board(board) -> str:
    """The notation of `board` (inverse of `parse_board`)."""
    return "/".join("".join(row) for row in _marks(board))


def draw_board(board) -> str:
    """A small multi-line picture of `board` for feedback messages."""
    separator = "\n" + "+".join(["---"] * SIZE) + "\n"
    return separator.join("|".join(f" {mark} " for mark in row) for row in _marks(board))


# --- the given helpers of the lab -------------------------------------------


def get_next_turn(turn):
    """The player who moves after `turn` (1 'o' <-> -1 'x')."""
    return X if turn == O else O


def get_childs(matrix, turn) -> list:
    """Every board `turn` can reach in one move: copies, in row-major order of the empty cell."""
    childs = []
    for i in range(SIZE):
        for j in range(SIZE):
            if matrix[i, j] == EMPTY:
                child = matrix.copy()
                child[i, j] = turn
                childs.append(child)
    return childs


def _line_sums(matrix) -> list:
    """Sums of the 8 lines (rows, columns, diagonals): three in a row for 'o' sums to 3,
    for 'x' to -3. Plain Python numbers: the searches call this at every board."""
    (a, b, c), (d, e, f), (g, h, i) = np.asarray(matrix).tolist()
    return [a + b + c, d + e + f, g + h + i, a + d + g, b + e + h, c + f + i, a + e + i, c + e + g]


def game_status(matrix) -> int:
    """1 if 'o' has three in a row, -1 if 'x' has, else 0 ('o' is checked first, as in the lab)."""
    sums = _line_sums(matrix)
    if 3 * O in sums:
        return O
    if 3 * X in sums:
        return X
    return 0


def score(matrix, player, depth):
    """`10 - depth` if `player` has won, `depth - 10` if the opponent has, else 0.

    The depth term makes a quicker win (and a later loss) worth more.
    """
    status = game_status(matrix)
    if status == 0:
        return 0
    return 10 - depth if status == player else depth - 10


def game_over(matrix) -> tuple[bool, int]:
    """(finished, status): finished when someone has three in a row or no cell is empty."""
    status = game_status(matrix)
    finished = status != 0 or np.count_nonzero(np.asarray(matrix) == EMPTY) == 0
    return bool(finished), status


# --- legality ---------------------------------------------------------------


def is_legal(board) -> bool:
    """Whether `board` can arise in a game where either player may move first and play stops at a win.

    Conditions: a 3x3 board of 1/-1/0; the counts of 'o' and 'x' differ by at
    most one; not both players have three in a row; and a winner made the last
    move, so has at least as many marks as the loser. (With at most five marks,
    two winning lines of one player always share the cell of that last move.)
    """
    try:
        _marks(board)
    except ValueError:
        return False
    array = np.asarray(board)
    count_o = int(np.count_nonzero(array == O))
    count_x = int(np.count_nonzero(array == X))
    if abs(count_o - count_x) > 1:
        return False
    sums = _line_sums(array)
    o_won = 3 * O in sums
    x_won = 3 * X in sums
    if o_won and x_won:
        return False
    if o_won:
        return count_o >= count_x
    if x_won:
        return count_x >= count_o
    return True
