"""An exact Connect Four solver on bitboards, counted as Pascal Pons counts.

This is the reference that gives the `connect4` lab its game-theoretic
results (the `solved` check) and that is pinned against Pons' published test
sets ("Solving Connect 4", parts 2 to 6 of his blog; the sets and their
README are shipped in `reference/data/connect4/`).

Bitboards
---------
A position is two integers and a move count (`Bitboard`): `position`, the
stones of the player to move, and `mask`, all stones. Each column takes 7
bits, bit `7 * col + row` (col 0 = column 1 = leftmost, row 0 = bottom); the
7th bit of a column is always empty, so that no line of four wraps around
from one column into the next. Playing column `col`: the stones of the
player to move become `position ^ mask` (the opponent's stones, who moves
next), and `mask` gains the bit `mask + bottom(col)` carries into.

Score
-----
As in the test sets: for the player to move, 0 for a draw; when a side wins,
`22 - (number of stones of the winner at the end)`, positive when the player
to move wins, negative when it loses. So a win on the next move scores
`(43 - moves) // 2` where `moves` is the number of stones on the board.

The search (`solve`)
--------------------
Pons' negamax alpha-beta of parts 3 and 4, node for node:

1. count the node (every call, the root included);
2. a full board (42 stones) is a draw: 0;
3. if the player to move can win on the next move: `(43 - moves) // 2`;
4. the best score reachable is `(41 - moves) // 2`; lower `beta` to it and
   return `beta` if then `alpha >= beta`;
5. with the transposition table only (part 6): an entry stored for this
   position is an upper bound that lowers `beta` the same way, before step 4;
6. try the playable columns left to right (or centre first: 4, 3, 5, 2, 6,
   1, 7), each score negated from the opponent's search with the window
   (-beta, -alpha); return the first score `>= beta`; raise `alpha` on a
   better score; return `alpha` (and, with the table, store it as an upper
   bound).

The root is searched with the window (-21, 21) (the exact score) or, weak,
with (-1, 1) (only its sign: win, draw or loss). On `Test_L3_R1` this gives
Pons' published mean node counts exactly: 283.6 left to right, 139.7 centre
first, 222.9 and 107.1 with the window (-1, 1) (pinned in
`tests/test_reference_connect4.py`). The transposition table here is a
plain dict that never loses an entry (Pons' is a fixed-size table that
overwrites), so its counts are ours and are not compared with his.
"""

from __future__ import annotations

from importlib import resources
from typing import NamedTuple

from reference.games import connect4 as rules

WIDTH, HEIGHT = 7, 6
CELLS = WIDTH * HEIGHT
# the exact-score window of the root
MIN_SCORE = -CELLS // 2
MAX_SCORE = CELLS // 2

LEFT_TO_RIGHT = (0, 1, 2, 3, 4, 5, 6)
CENTRE_FIRST = (3, 2, 4, 1, 5, 0, 6)

BOTTOM = tuple(1 << (col * (HEIGHT + 1)) for col in range(WIDTH))
TOP = tuple(1 << (col * (HEIGHT + 1) + HEIGHT - 1) for col in range(WIDTH))
BOTTOM_ROW = sum(BOTTOM)
BOARD = BOTTOM_ROW * ((1 << HEIGHT) - 1)  # every playable cell

TEST_SETS = ("Test_L3_R1",)  # the sets shipped in reference/data/connect4/


class Bitboard(NamedTuple):
    """A position: the stones of the player to move, all stones, their number."""

    position: int
    mask: int
    moves: int


class Solution(NamedTuple):
    """What `solve` found: the score for the player to move and the number of
    negamax calls (root included)."""

    score: int
    nodes: int


def winning_cells(position: int, mask: int) -> int:
    """The empty cells (playable now or not) that would complete a line of
    four for the player whose stones are `position`."""
    # vertical: three stones right below
    found = (position << 1) & (position << 2) & (position << 3)
    # horizontal (7), diagonal down-right (6) and up-right (8): the cell may be
    # at either end of the line or one of its two middle cells
    for step in (HEIGHT + 1, HEIGHT, HEIGHT + 2):
        pair = (position << step) & (position << 2 * step)
        found |= pair & (position << 3 * step)
        found |= pair & (position >> step)
        pair = (position >> step) & (position >> 2 * step)
        found |= pair & (position << step)
        found |= pair & (position >> 3 * step)
    return found & (BOARD ^ mask)


def playable_cells(mask: int) -> int:
    """The cell each column that is not full would be played in."""
    return (mask + BOTTOM_ROW) & BOARD


def can_win_next(board: Bitboard) -> bool:
    """Whether the player to move has a winning move."""
    return bool(winning_cells(board.position, board.mask) & playable_cells(board.mask))


def play(board: Bitboard, col: int) -> Bitboard:
    """The position after the player to move plays column `col` (0 to 6), which
    must not be full."""
    position, mask, moves = board
    return Bitboard(position ^ mask, mask | (mask + BOTTOM[col]), moves + 1)


def has_four(position: int) -> bool:
    """Whether the stones `position` hold a line of four."""
    for step in (1, HEIGHT + 1, HEIGHT, HEIGHT + 2):
        pair = position & (position >> step)
        if pair & (pair >> 2 * step):
            return True
    return False


def from_moves(moves: str) -> Bitboard:
    """The position after `moves` (columns 1 to 7, Pons' format). Rejects a bad
    digit, a full column and a move after the game is won."""
    board = Bitboard(0, 0, 0)
    for index, char in enumerate(moves):
        if char not in "1234567":
            raise ValueError(f"move {index + 1} of {moves!r}: {char!r} is not a column 1-7")
        col = int(char) - 1
        if board.mask & TOP[col]:
            raise ValueError(f"move {index + 1} of {moves!r}: column {char} is full")
        if has_four(board.position ^ board.mask):  # the player who just moved
            raise ValueError(f"move {index + 1} of {moves!r}: the game is already over")
        board = play(board, col)
    return board


def from_state(State: tuple) -> Bitboard:
    """The position of a state of `reference.games.connect4` (whoever is to move
    there, by the number of stones)."""
    mover = rules.to_move(State)
    position = mask = 0
    for row in range(HEIGHT):
        for col in range(WIDTH):
            mark = State[row][col]
            if mark != rules.EMPTY:
                bit = 1 << (col * (HEIGHT + 1) + row)
                mask |= bit
                if mark == mover:
                    position |= bit
    return Bitboard(position, mask, bin(mask).count("1"))


def solve(
    board: Bitboard,
    alpha: int = MIN_SCORE,
    beta: int = MAX_SCORE,
    *,
    weak: bool = False,
    centre_first: bool = False,
    table: dict | None = None,
) -> Solution:
    """Search `board` with Pons' negamax (module docstring) and count the nodes.

    `weak=True` searches the window (-1, 1) instead of `(alpha, beta)`: the
    score's sign only. `table` is the transposition table to use (a dict,
    e.g. `{}`; kept between calls if the caller keeps it); None searches
    without one, as Pons' published counts of parts 3 and 4 do. The position
    must not be over (no line of four on the board).
    """
    if has_four(board.position ^ board.mask):
        raise ValueError("the game is already over: the player who just moved has four in a line")
    if weak:
        alpha, beta = -1, 1
    order = CENTRE_FIRST if centre_first else LEFT_TO_RIGHT
    columns = tuple((BOTTOM[col], TOP[col]) for col in order)
    nodes = 0

    def negamax(position: int, mask: int, moves: int, alpha: int, beta: int) -> int:
        nonlocal nodes
        nodes += 1
        if moves == CELLS:
            return 0
        if winning_cells(position, mask) & (mask + BOTTOM_ROW) & BOARD:
            return (CELLS + 1 - moves) // 2
        best = (CELLS - 1 - moves) // 2
        if table is not None:
            bound = table.get(position + mask)
            if bound is not None:
                best = bound
        if beta > best:
            beta = best
            if alpha >= beta:
                return beta
        opponent = position ^ mask
        for bottom, top in columns:
            if not mask & top:
                score = -negamax(opponent, mask | (mask + bottom), moves + 1, -beta, -alpha)
                if score >= beta:
                    return score
                if score > alpha:
                    alpha = score
        if table is not None:
            table[position + mask] = alpha
        return alpha

    score = negamax(board.position, board.mask, board.moves, alpha, beta)
    return Solution(score, nodes)


def score(moves: str) -> int:
    """The exact score (test-set convention) of the position after `moves`."""
    return solve(from_moves(moves), centre_first=True, table={}).score


def game_result(State: tuple) -> int:
    """The game-theoretic result for the maximiser 'X' of a state of
    `reference.games.connect4`: 1 win, 0 draw, -1 loss (with perfect play).
    A finished state gives its `utility`."""
    if rules.finished(State):
        return rules.utility(State)
    value = solve(from_state(State), weak=True, centre_first=True, table={}).score
    sign = (value > 0) - (value < 0)
    return sign if rules.to_move(State) == rules.gPlayers[0] else -sign


def load_test_set(name: str = "Test_L3_R1") -> list[tuple[str, int]]:
    """The positions of one of Pons' test sets shipped in
    `reference/data/connect4/`, as (moves, score) pairs in file order."""
    if name not in TEST_SETS:
        raise ValueError(f"unknown test set {name!r}; known: {', '.join(TEST_SETS)}")
    text = (resources.files("reference") / "data" / "connect4" / name).read_text(encoding="ascii")
    pairs = []
    for line in text.splitlines():
        if line.strip():
            moves, value = line.split()
            pairs.append((moves, int(value)))
    return pairs
