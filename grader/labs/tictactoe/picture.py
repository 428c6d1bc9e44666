"""Tic-tac-toe cases drawn as small boards: the position, and the first expansion where the
student's search and the reference's part.

Input is a test's `details` with `"view": "boards"`: `{"board": notation, "seen": [notations],
"expected": [notations]}`, a notation being three rows top to bottom, e.g. "xo./.x./..o".
The kit draws it (`kit/pictures/positions.py`, the `"expansions"` view): each board an
`<svg class="board">`; in the two boards of the divergence, the cells where they differ
also carry `differs`.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..kit.pictures.positions import expansions_html


def boards_html(details: Mapping) -> str:
    """The position and the first divergent expansion, side by side."""
    return expansions_html(details, game="tictactoe", position=details.get("board"))
