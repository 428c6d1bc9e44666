"""A Connect Four board as inline SVG: six rows of seven holes in a frame, the column
numbers below. Input: the rows top to bottom, one character per cell, `pieces` saying
which characters are stones (first player's, second player's) and how they are labelled;
any other character is an empty hole. An `<svg class="connect4">` of 42 `circle.hole`, a
`circle.disc first|second` with its letter on each stone, and a `circle.marked` ring
around each cell of `marked` (flat indices, row * 7 + column, top row first)."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from html import escape

ROWS, COLUMNS = 6, 7
CELL = 26
PAD = 5
RADIUS = 10
# the connect4 lab's stones: 'X' moves first
PIECES: Mapping[str, tuple[str, str]] = {"X": ("first", "X"), "O": ("second", "O")}


def rows_of(value: object) -> list[str] | None:
    """Six rows of seven cells from a list of strings, top row first; None if it isn't one."""
    if not isinstance(value, (list, tuple)) or len(value) != ROWS:
        return None
    if not all(isinstance(row, str) and len(row) == COLUMNS for row in value):
        return None
    return list(value)


def connect4_svg(
    rows: object, marked: Collection[int] = (), pieces: Mapping[str, tuple[str, str]] = PIECES, label: str = ""
) -> str:
    """The board as SVG; something that isn't a board is shown as text."""
    board = rows_of(rows)
    if board is None:
        return f'<code class="board-text">{escape(str(rows))}</code>'
    width, height = COLUMNS * CELL + 2 * PAD, ROWS * CELL + 2 * PAD
    said = label or "Connect Four board: " + " / ".join(board)
    parts = [
        f'<svg class="connect4" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height + 16}" '
        f'viewBox="0 0 {width} {height + 16}" role="img" aria-label="{escape(said)}">',
        f'<rect class="frame" x="0" y="0" width="{width}" height="{height}" rx="6"/>',
    ]
    for row, line in enumerate(board):
        for column, cell in enumerate(line):
            parts.append(_cell(row, column, cell, pieces, row * COLUMNS + column in marked))
    for column in range(COLUMNS):
        x = PAD + column * CELL + CELL / 2
        parts.append(f'<text class="column" x="{x:.0f}" y="{height + 12}">{column + 1}</text>')
    parts.append("</svg>")
    return "".join(parts)


def _cell(row: int, column: int, cell: str, pieces: Mapping[str, tuple[str, str]], marked: bool) -> str:
    x, y = PAD + column * CELL + CELL / 2, PAD + row * CELL + CELL / 2
    out = []
    if cell in pieces:
        side, letter = pieces[cell]
        out.append(f'<circle class="disc {escape(side)}" cx="{x:.0f}" cy="{y:.0f}" r="{RADIUS}"/>')
        out.append(
            f'<text class="stone {escape(side)}" x="{x:.0f}" y="{y + 4:.0f}">{escape(letter[:1].upper())}</text>'
        )
    else:
        out.append(f'<circle class="hole" cx="{x:.0f}" cy="{y:.0f}" r="{RADIUS}"/>')
    if marked:
        out.append(f'<circle class="marked" cx="{x:.0f}" cy="{y:.0f}" r="{RADIUS + 2.5}"/>')
    return "".join(out)


def dropped_cell(before: Sequence[str], after: Sequence[str]) -> int | None:
    """The flat index of the one cell that a move filled between two boards, or None."""
    a, b = rows_of(before), rows_of(after)
    if a is None or b is None:
        return None
    changed = [r * COLUMNS + c for r in range(ROWS) for c in range(COLUMNS) if a[r][c] != b[r][c]]
    return changed[0] if len(changed) == 1 else None
