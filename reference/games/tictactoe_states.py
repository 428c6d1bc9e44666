"""Tic-tac-toe behind the negamax game interface.

Self-contained (standard library only): the grader ships this file's source
text into the student's process, where its functions become the globals the
student's `value` / `alphaBeta` / `best_move` call.

A state is a string of 9 characters, the cells in row-major order (cell
`3 * row + col`): 'X' for player 0 (who moves first), 'O' for player 1 and
'.' for an empty cell. Strings are hashable and already plain JSON, so
`encode` / `decode` only check the shape. The player to move is not part of
the state: the marks on the board already say who has won.
"""

Players = [0, 1]
MARKS = ("X", "O")
EMPTY = "."
Start = EMPTY * 9

LINES = (
    (0, 1, 2),
    (3, 4, 5),
    (6, 7, 8),  # rows
    (0, 3, 6),
    (1, 4, 7),
    (2, 5, 8),  # columns
    (0, 4, 8),
    (2, 4, 6),  # diagonals
)


def winner(state):
    """The mark with three in a row, or None."""
    for a, b, c in LINES:
        mark = state[a]
        if mark != EMPTY and mark == state[b] == state[c]:
            return mark
    return None


def next_states(state, player):
    """`player` puts a mark in each empty cell, in row-major order of the cell."""
    mark = MARKS[player]
    return [state[:cell] + mark + state[cell + 1 :] for cell, content in enumerate(state) if content == EMPTY]


def finished(state):
    """A line of three, or a full board."""
    return winner(state) is not None or EMPTY not in state


def utility(state, player):
    """1 if `player` has three in a row, -1 if the opponent has, 0 for a full
    board without a line; None while the game goes on."""
    mark = winner(state)
    if mark is not None:
        return 1 if mark == MARKS[player] else -1
    return None if EMPTY in state else 0


def describe(state):
    """The board as three rows, e.g. 'X.O' / '.X.' / '..O'."""
    return "\n".join(state[row : row + 3] for row in (0, 3, 6))


def _checked(obj):
    if not (isinstance(obj, str) and len(obj) == 9 and set(obj) <= {EMPTY, *MARKS}):
        raise ValueError(f"not a tic-tac-toe state: {obj!r}")
    return obj


def encode(state):
    """The state as JSON data: the 9-character string itself."""
    return _checked(state)


def decode(obj):
    """The state that `encode` turned into `obj`."""
    return _checked(obj)
