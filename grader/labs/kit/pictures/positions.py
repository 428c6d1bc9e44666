"""Board pictures of the labs' cases, from plain `details` (JSON: they are kept in the
gradebook). Two views:

- `"positions"`: captioned positions side by side, e.g. the position, your move and an
  optimal one: `{"view": "positions", "game": GAME, "note": str, "figures": [{"state",
  "caption", "role", "marked": [indices], "divergence": bool, "taken": [per heap]}]}`;
- `"expansions"`: the position, then the first expansion where the student's search and
  the reference's part (the last one in common, yours, the reference's, the cells where
  those two differ marked): `{"view": "expansions", "game": GAME, "position", "seen",
  "expected", "seen_total", "expected_total", "noun", "offset"}`; `seen` and `expected` may
  be cut to the few states the picture shows, `offset` saying how many were left out
  before them (the same ones in both).

GAME says how a state is drawn: `tictactoe` (a notation, "xo./.x./..o"), `connect4` (six
rows top to bottom, 'X' / 'O' stones, or the pieces that `"pieces"` names) or `nim` (the
heap sizes). `role` is one of ROLES; `marked` are cells (row-major) or heaps."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ....checks.expansions import first_divergence
from .connect4 import PIECES, connect4_svg, rows_of
from .figures import boards_row, figure
from .nim import heaps_of, heaps_svg
from .tictactoe import board_svg, differing_cells

ROLES = {  # a figure's role -> its classes
    "position": "position",
    "common": "common",
    "yours": "student-only",
    "reference": "reference-only",
}


def _indices(value: object) -> frozenset[int]:
    items = value if isinstance(value, (list, tuple)) else ()
    return frozenset(i for i in items if type(i) is int)


def _pieces(details: Mapping) -> Mapping[str, tuple[str, str]]:
    """The stones of a Connect Four picture: character -> (first|second, label)."""
    given = details.get("pieces")
    if not isinstance(given, Mapping):
        return PIECES
    pieces = {}
    for char, side in (("X", "first"), ("O", "second")):
        name = given.get(char)
        if isinstance(name, str) and name:
            pieces[char] = (side, name)
    return pieces or PIECES


def draw(
    game: object,
    state: object,
    marked: frozenset[int] = frozenset(),
    details: Mapping | None = None,
    taken: object = (),
) -> str:
    """One state of `game` as SVG (text when it can't be drawn)."""
    if game == "connect4":
        return connect4_svg(state, marked, _pieces(details or {}))
    if game == "nim":
        return heaps_svg(state, list(taken) if isinstance(taken, (list, tuple)) else (), marked)
    return board_svg(state, marked)


def differs(game: object, a: object, b: object) -> frozenset[int]:
    """Where two states of `game` differ: cells, or heaps."""
    if game == "connect4":
        left, right = rows_of(a), rows_of(b)
        if left is None or right is None:
            return frozenset()
        return frozenset(r * 7 + c for r in range(6) for c in range(7) if left[r][c] != right[r][c])
    if game == "nim":
        x, y = heaps_of(a), heaps_of(b)
        if x is None or y is None or len(x) != len(y):
            return frozenset()
        return frozenset(i for i, (p, q) in enumerate(zip(x, y)) if p != q)
    return differing_cells(a, b)


def positions_html(details: Mapping) -> str:
    """The figures of a `"positions"` view, side by side."""
    game = details.get("game")
    listed = details.get("figures")
    figures = []
    for item in listed if isinstance(listed, list) else []:
        if not isinstance(item, Mapping):
            continue
        classes = ROLES.get(str(item.get("role")), "position") + (" first-divergence" if item.get("divergence") else "")
        svg = draw(game, item.get("state"), _indices(item.get("marked")), details, item.get("taken") or ())
        figures.append(figure(svg, str(item.get("caption", "")), classes))
    note = details.get("note")
    return boards_row(figures, note if isinstance(note, str) else "")


def _total(details: Mapping, key: str, listed: Sequence, offset: int = 0) -> int:
    """The whole search's count (the listed states stop at the first difference)."""
    total = details.get(key)
    least = offset + len(listed)
    return total if isinstance(total, int) and not isinstance(total, bool) and total >= least else least


def expansions_html(details: Mapping, game: object = None, position: object = None) -> str:
    """The position and the first expansion where the two searches part, side by side."""
    game = details.get("game") if game is None else game
    noun = details.get("noun") if details.get("noun") in ("boards", "states", "positions") else "boards"
    seen = [s for s in details.get("seen") or [] if s is not None]
    expected = [s for s in details.get("expected") or [] if s is not None]
    offset = details.get("offset")
    offset = offset if type(offset) is int and offset >= 0 else 0

    def drawn(state: object, marked: frozenset[int] = frozenset()) -> str:
        return draw(game, state, marked, details)

    start = details.get("position") if position is None else position
    figures = [figure(drawn(start), "the position", "position")]
    index = first_divergence(seen, expected)
    mine = _total(details, "seen_total", seen, offset)
    theirs = _total(details, "expected_total", expected, offset)
    if index is None:
        note = f"Your search expanded the same {mine:,} {noun} as the reference, in the same order."
        if mine != theirs:  # the lists were cut before the searches part
            compared = offset + len(seen)
            note = (
                f"Your search expanded {mine:,} {noun}, the reference {theirs:,}; the first {compared:,} are the same."
            )
        return boards_row(figures, note)
    if index > 0:
        caption = f"expansion #{offset + index:,}, the last one in common"
        figures.append(figure(drawn(seen[index - 1]), caption, "common"))
    yours = seen[index] if index < len(seen) else None
    reference = expected[index] if index < len(expected) else None
    marked = differs(game, yours, reference)
    if yours is not None:
        caption = f"your expansion #{offset + index + 1:,}"
        figures.append(figure(drawn(yours, marked), caption, "student-only first-divergence"))
    if reference is not None:
        caption = f"the reference's expansion #{offset + index + 1:,}"
        figures.append(figure(drawn(reference, marked), caption, "reference-only first-divergence"))
    note = (
        f"Your search expanded {mine:,} {noun}, the reference {theirs:,}; "
        f"they first differ at expansion #{offset + index + 1:,}."
    )
    return boards_row(figures, note)


Picture = Callable[[Mapping[str, Any]], str]
VIEWS: dict[str, Picture] = {"positions": positions_html, "expansions": expansions_html}


def board_picture(details: Mapping[str, Any]) -> str:
    """A `"positions"` or `"expansions"` picture; '' for another view."""
    view = VIEWS.get(str(details.get("view")))
    return view(details) if view else ""
