"""Tic-tac-toe cases drawn as small boards: the position, and the first expansion where the
student's search and the reference's part.

Input is a test's `details` with `"view": "boards"`: `{"board": notation, "seen": [notations],
"expected": [notations]}`, a notation being three rows top to bottom, e.g. "xo./.x./..o".
Each board is an `<svg class="board">` of nine `cell` rects (`x`, `o` or `empty`); in the
two boards of the divergence, the cells where they differ also carry `differs`.
"""

from __future__ import annotations

from collections.abc import Mapping
from html import escape

from ...checks.expansions import first_divergence

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


def board_svg(notation: object, differs: frozenset[int] = frozenset()) -> str:
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


def _differing_cells(a: object, b: object) -> frozenset[int]:
    left, right = parse(a), parse(b)
    if left is None or right is None:
        return frozenset()
    return frozenset(i for i, (p, q) in enumerate(zip(left, right)) if p != q)


def _figure(title: str, notation: object, css: str, differs: frozenset[int] = frozenset()) -> str:
    return (
        f'<figure class="board-figure {css}">{board_svg(notation, differs)}'
        f"<figcaption>{escape(title)}</figcaption></figure>"
    )


def _total(details: Mapping, key: str, listed: list[str]) -> int:
    """The whole search's count (the listed boards stop at the first difference)."""
    total = details.get(key)
    return total if isinstance(total, int) and not isinstance(total, bool) and total >= len(listed) else len(listed)


def boards_html(details: Mapping) -> str:
    """The position and the first divergent expansion, side by side."""
    seen = [b for b in details.get("seen") or [] if isinstance(b, str)]
    expected = [b for b in details.get("expected") or [] if isinstance(b, str)]
    figures = [_figure("the position", details.get("board"), "position")]
    index = first_divergence(seen, expected)
    if index is None:
        note = (
            f"Your search expanded the same {_total(details, 'seen_total', seen):,} boards as the reference, "
            f"in the same order."
        )
    else:
        if index > 0:
            figures.append(_figure(f"expansion #{index}, the last one in common", seen[index - 1], "common"))
        yours = seen[index] if index < len(seen) else None
        theirs = expected[index] if index < len(expected) else None
        differs = _differing_cells(yours, theirs)
        if yours is not None:
            figures.append(_figure(f"your expansion #{index + 1}", yours, "student-only first-divergence", differs))
        if theirs is not None:
            figures.append(
                _figure(f"the reference's expansion #{index + 1}", theirs, "reference-only first-divergence", differs)
            )
        note = (
            f"Your search expanded {_total(details, 'seen_total', seen):,} boards, the reference "
            f"{_total(details, 'expected_total', expected):,}; they first differ at expansion #{index + 1:,}."
        )
    return (
        f'<div class="boards"><p class="boards-note">{escape(note)}</p>'
        f'<div class="board-row">{"".join(figures)}</div></div>'
    )
