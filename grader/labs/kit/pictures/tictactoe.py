"""A tic-tac-toe board as inline SVG, from a notation: three rows top to bottom, 'x', 'o'
or '.' per cell, e.g. "xo./.x./..o" (the tic-tac-toe lab's own; the agents and negamax
labs turn their boards into it). Each board is an `<svg class="board">` of nine `cell`
rects (`x`, `o` or `empty`); cells in `differs` also carry `differs`."""

from __future__ import annotations

from collections.abc import Collection
from html import escape

CELL = 24
MARKS = {"x": "x", "o": "o", ".": "empty"}


def parse(notation: object) -> list[str] | None:
    """The nine cells ('x', 'o' or '.') of a notation, row-major; None if it isn't one."""
    if not isinstance(notation, str):
        return None
    rows = notation.lower().split("/")
    if len(rows) != 3 or any(len(row) != 3 for row in rows):
        return None
    cells = [c for row in rows for c in row]
    return cells if all(c in MARKS for c in cells) else None


def notation_of(cells: str, marks: dict[str, str]) -> str:
    """Nine cells in row-major order as a notation, each mapped by `marks` (e.g. {"X": "x",
    "O": "o", ".": "."}); a cell `marks` doesn't know stays as it is (and fails `parse`)."""
    mapped = [marks.get(c, c) for c in cells]
    return "/".join("".join(mapped[row : row + 3]) for row in (0, 3, 6))


def board_svg(notation: object, differs: Collection[int] = ()) -> str:
    """One board as SVG; a malformed notation is shown as text."""
    cells = parse(notation)
    if cells is None or not isinstance(notation, str):  # parse() reads only a str
        return f'<code class="board-text">{escape(str(notation))}</code>'
    size = 3 * CELL
    parts = [
        f'<svg class="board" xmlns="http://www.w3.org/2000/svg" width="{size + 2}" height="{size + 2}" '
        f'viewBox="-1 -1 {size + 2} {size + 2}" role="img" aria-label="board {escape(notation)}">'
    ]
    for index, mark in enumerate(cells):
        x, y = (index % 3) * CELL, (index // 3) * CELL
        classes = "cell " + MARKS[mark] + (" differs" if index in differs else "")
        parts.append(f'<rect class="{classes}" x="{x}" y="{y}" width="{CELL}" height="{CELL}"/>')
        parts.append(_glyph(mark, x, y))
    parts.append("</svg>")
    return "".join(parts)


def _glyph(mark: str, x: int, y: int) -> str:
    pad = 6
    if mark == "x":
        a, b = x + pad, x + CELL - pad
        return f'<path class="mark x" d="M{a} {y + pad} L{b} {y + CELL - pad} M{b} {y + pad} L{a} {y + CELL - pad}"/>'
    if mark == "o":
        return f'<circle class="mark o" cx="{x + CELL / 2}" cy="{y + CELL / 2}" r="{CELL / 2 - pad}"/>'
    return ""


def differing_cells(a: object, b: object) -> frozenset[int]:
    """The cells where two boards differ (none when either isn't a board)."""
    left, right = parse(a), parse(b)
    if left is None or right is None:
        return frozenset()
    return frozenset(i for i, (p, q) in enumerate(zip(left, right)) if p != q)
