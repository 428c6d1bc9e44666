"""The connect4 lab's pictures: its positions drawn as Connect Four boards (the kit's
`"positions"` view, kit/pictures/positions.py): the position of a case; for a wrong move,
the move next to an optimal one, the stone each drops marked; for a wrong cache entry, the
state the entry is about."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from reference.games import connect4

from ..kit.pictures.connect4 import dropped_cell
from ..kit.pictures.positions import board_picture


def rows(encoded: Any) -> Any:
    """An encoded state (rows from the bottom, ' ' empty) as the kit draws it: rows from the
    top. Anything else is passed on as it is (the kit shows it as text)."""
    if isinstance(encoded, (list, tuple)) and all(isinstance(row, str) for row in encoded):
        return [row.replace(" ", ".") for row in reversed(encoded)]
    return encoded


def to_move(State: tuple) -> str:
    return f"{connect4.to_move(State)} to move"


def _view(figures: list[dict], note: str = "") -> dict:
    return {"view": "positions", "game": "connect4", "figures": figures, "note": note}


def _position(State: tuple, caption: str = "the position") -> dict:
    return {"state": rows(connect4.encode(State)), "caption": f"{caption} ({to_move(State)})", "role": "position"}


def position_details(State: tuple, note: str = "") -> dict:
    return _view([_position(State)], note)


def move_details(State: tuple, chosen: Any, optimal: Sequence[Any], limit: int) -> dict:
    """The position, the student's move and an optimal one (states encoded as the observer
    sends them), the stone each drops marked."""
    start = rows(connect4.encode(State))
    figures = [_position(State)]
    mine = dropped_cell(start, rows(chosen))
    figures.append(
        {
            "state": rows(chosen),
            "caption": "your move",
            "role": "yours",
            "marked": [] if mine is None else [mine],
            "divergence": True,
        }
    )
    if optimal:
        best = dropped_cell(start, rows(optimal[0]))
        more = f" (1 of {len(optimal)})" if len(optimal) > 1 else ""
        figures.append(
            {
                "state": rows(optimal[0]),
                "caption": f"an optimal move{more}",
                "role": "reference",
                "marked": [] if best is None else [best],
            }
        )
    return _view(figures, f"At limit {limit} your move is not one of the optimal ones.")


def entry_details(State: tuple, entry_state: Any, limit: Any, note: str) -> dict:
    """The position, and the state of a cache entry that does not hold."""
    figures = [
        _position(State),
        {
            "state": rows(entry_state),
            "caption": f"the entry's state, limit {limit}",
            "role": "yours",
            "divergence": True,
        },
    ]
    return _view(figures, note)


def picture(details: Mapping[str, Any]) -> str:
    return board_picture(details)
