"""Connect Four for the `connect4` lab, in the course's conventions (seed 001).

Self-contained (standard library only): the grader can ship this file's source
text into the student's process, where `gPlayers`, `gStart`, `next_states`,
`finished`, `utility` and `heuristic` become the globals the student's search
calls.

Board and states
----------------
- 7 columns and 6 rows. A state is a tuple of 6 rows, row 0 at the bottom;
  each row is a tuple of 7 one-character strings, column 0 at the left:
  `'X'` (player `gPlayers[0]`, who moves first and maximises), `'O'`
  (`gPlayers[1]`, who minimises) or `' '` (empty). So `State[row][col]`, as in
  the course's notebook. States are immutable, hashable and ordered (tuples of
  strings compare), so `heapq` on `(priority, State)` pairs works.
- The player to move is not part of the state: `X` is to move when both have
  as many stones, else `O` (`to_move`).
- Move strings follow Pascal Pons' test sets: one digit per move, the column
  from 1 (leftmost) to 7, `X` playing the first move. `from_moves('4453')`.

Rules
-----
- `next_states(State, player)`: `player` drops a stone in each column that is
  not full, in column order from left to right (column 1 first). Like the
  course's function it does not look at whether the game is already over.
- `finished(State)`: a line of four of one mark (horizontal, vertical or
  diagonal), or a full board.
- `utility(State)`: for the maximiser `X`: 1 if `X` has four in a line, -1 if
  `O` has, 0 for a full board without one; None while the game goes on.

Heuristic (ours; the course leaves it to the game's notebook)
-------------------------------------------------------------
`heuristic(State)` looks at the 69 lines of four cells of the board. A line
that holds stones of one side only is still open for that side: it counts 1
point when it holds two of them and 4 points when it holds three (`WEIGHT`),
for `X` and against `O`. The sum `s` is squashed into the open interval
(-1, 1) as `s / (|s| + 20)`, so that a heuristic value never reaches the
value of a won or lost game. It only reads the stones on the board (not whose
move it is) and is defined on every board, finished ones included.
"""

gPlayers = ["X", "O"]
EMPTY = " "
ROWS = 6
COLS = 7

gStart = tuple(tuple(EMPTY for col in range(COLS)) for row in range(ROWS))


def _lines():
    """The 69 lines of four cells, each as four indices into `cells(State)`."""
    directions = ((0, 1), (1, 0), (1, 1), (1, -1))  # right, up, up-right, up-left
    lines = []
    for drow, dcol in directions:
        for row in range(ROWS):
            for col in range(COLS):
                end_row, end_col = row + 3 * drow, col + 3 * dcol
                if 0 <= end_row < ROWS and 0 <= end_col < COLS:
                    lines.append(tuple((row + k * drow) * COLS + col + k * dcol for k in range(4)))
    return tuple(lines)


LINES = _lines()

# points of an open line by the number of stones of its one side (0 to 4)
WEIGHT = (0, 0, 1, 4, 0)


def cells(State):
    """The 42 cells as one string, row by row from the bottom (`row * 7 + col`)."""
    return "".join(["".join(row) for row in State])


def winner(State):
    """The mark ('X' or 'O') with four in a line, or None."""
    board = cells(State)
    for a, b, c, d in LINES:
        mark = board[a]
        if mark != EMPTY and mark == board[b] == board[c] == board[d]:
            return mark
    return None


def finished(State):
    """True when a side has four in a line or the board is full."""
    return EMPTY not in State[ROWS - 1] or winner(State) is not None


def utility(State):
    """1 if 'X' has won, -1 if 'O' has, 0 for a full board without a line of
    four; None while the game goes on."""
    mark = winner(State)
    if mark is not None:
        return 1 if mark == gPlayers[0] else -1
    return None if EMPTY in State[ROWS - 1] else 0


def free_row(State, col):
    """The lowest empty row of column `col` (0 to 6), or None when it is full."""
    for row in range(ROWS):
        if State[row][col] == EMPTY:
            return row
    return None


def drop(State, col, player):
    """The state after `player` drops a stone in column `col` (0 to 6)."""
    row = free_row(State, col)
    if row is None:
        raise ValueError(f"column {col + 1} is full")
    line = State[row]
    return State[:row] + (line[:col] + (player,) + line[col + 1 :],) + State[row + 1 :]


def next_states(State, player):
    """The states reached when `player` drops a stone, one per column that is
    not full, from the leftmost column (1) to the rightmost (7)."""
    return [drop(State, col, player) for col in range(COLS) if State[ROWS - 1][col] == EMPTY]


def heuristic(State):
    """A guess of the value for 'X', strictly between -1 and 1: open lines of
    two and three stones, for 'X' minus for 'O', squashed (module docstring)."""
    board = cells(State)
    score = 0
    for a, b, c, d in LINES:
        line = board[a] + board[b] + board[c] + board[d]
        if "O" not in line:
            score += WEIGHT[line.count("X")]
        elif "X" not in line:
            score -= WEIGHT[line.count("O")]
    return score / (abs(score) + 20)


def stones(State):
    """The number of stones on the board."""
    return sum(COLS - row.count(EMPTY) for row in State)


def to_move(State):
    """The player whose turn it is: 'X' when both have as many stones."""
    board = cells(State)
    return gPlayers[0] if board.count("X") == board.count("O") else gPlayers[1]


def from_moves(moves, start=gStart):
    """The state after playing `moves` (a string of columns 1 to 7, as in
    Pons' test sets) from `start`, the players taking turns, the player to
    move in `start` first. Rejects a bad digit, a full column and any move
    after the game is over."""
    State = start
    for position, char in enumerate(moves):
        if char not in "1234567":
            raise ValueError(f"move {position + 1} of {moves!r}: {char!r} is not a column 1-7")
        if finished(State):
            raise ValueError(f"move {position + 1} of {moves!r}: the game is already over")
        col = int(char) - 1
        if State[ROWS - 1][col] != EMPTY:
            raise ValueError(f"move {position + 1} of {moves!r}: column {char} is full")
        State = drop(State, col, to_move(State))
    return State


def describe(State):
    """The board as text, top row first: 'X', 'O', '.' for empty, then the
    column numbers."""
    rows = ["".join(row).replace(EMPTY, ".") for row in reversed(State)]
    return "\n".join(rows + ["1234567"])


def encode(State):
    """The state as JSON data: a list of 6 strings of 7 characters, the rows
    from the bottom, ' ' for empty."""
    return ["".join(row) for row in _checked(State)]


def decode(obj):
    """The state that `encode` turned into `obj`."""
    if not (isinstance(obj, (list, tuple)) and all(isinstance(row, str) for row in obj)):
        raise ValueError(f"not an encoded Connect Four state: {obj!r}")
    return _checked(tuple(tuple(row) for row in obj))


def _checked(State):
    """`State` itself, after checking that it is a legal board: its shape,
    marks, no stone above an empty cell, and 'X' one stone ahead or even."""
    shape_ok = (
        isinstance(State, tuple)
        and len(State) == ROWS
        and all(isinstance(row, tuple) and len(row) == COLS for row in State)
    )
    if not shape_ok or not set(cells(State)) <= {EMPTY, *gPlayers}:
        raise ValueError(f"not a Connect Four state: {State!r}")
    for row in range(1, ROWS):
        for col in range(COLS):
            if State[row][col] != EMPTY and State[row - 1][col] == EMPTY:
                raise ValueError(f"stone in row {row} of column {col + 1} floats")
    board = cells(State)
    if board.count("X") - board.count("O") not in (0, 1):
        raise ValueError("'X' must have as many stones as 'O' or one more")
    return State
