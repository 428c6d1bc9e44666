"""The agents lab's pictures: its positions drawn as boards (tic-tac-toe as the tic-tac-toe
lab draws them, Connect Four with red and yellow stones), and for a wrong move the move
played next to the optimal ones, the cells marked. Details are the kit's `"positions"` view
(kit/pictures/positions.py), built here from the grader's own positions."""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from typing import Any

from reference.envs import BoardEnv

from ..kit.pictures.positions import board_picture
from .cases import GAME_NAMES, Position

TTT_MARKS = {1: "x", -1: "o", 0: "."}
CONN_MARKS = {1: "X", -1: "O", 0: "."}
CONN_PIECES = {"X": "red", "O": "yellow"}


def state_of(game: str, env: BoardEnv) -> Any:
    """The board in the kit's form: a tic-tac-toe notation, or Connect Four rows top first."""
    if game == "ttt":
        cells = [TTT_MARKS.get(int(v), "?") for v in env.state]
        return "/".join("".join(cells[row : row + 3]) for row in (0, 3, 6))
    return ["".join(CONN_MARKS.get(int(v), "?") for v in row) for row in env.board()]


def cell_of(game: str, env: BoardEnv, action: Any) -> int | None:
    """Where `action` puts the mover's piece (a flat cell index), or None if it is no move."""
    if isinstance(action, bool) or not isinstance(action, int) or action not in env.validinputs:
        return None
    if game == "ttt":
        return action - 1
    heights = getattr(env, "heights", None)
    if not isinstance(heights, list):
        return None
    return (5 - heights[action - 1]) * 7 + action - 1


def caption(position: Position) -> str:
    env = position.env()
    status = f"game over, reward {env.reward}" if env.done else f"{env.turn} to move"
    return f"{GAME_NAMES[position.game]} after moves {list(position.moves)} ({status})"


def _view(position: Position, figures: list[dict], note: str = "") -> dict:
    details: dict = {"view": "positions", "game": "tictactoe" if position.game == "ttt" else "connect4"}
    if position.game == "conn":
        details["pieces"] = CONN_PIECES
    return {**details, "figures": figures, "note": note}


def position_details(position: Position) -> dict:
    """The position alone."""
    env = position.env()
    return _view(position, [{"state": state_of(position.game, env), "caption": caption(position), "role": "position"}])


def move_details(position: Position, played: Any, optimal: Iterable[int], note: str = "") -> dict:
    """The position; the board after the move the student's agent played, its cell marked;
    the board after an optimal move, every optimal move's cell marked."""
    env = position.env()
    best = sorted(optimal)
    cells = [c for c in (cell_of(position.game, env, a) for a in best) if c is not None]
    figures = [{"state": state_of(position.game, env), "caption": caption(position), "role": "position"}]
    mine = cell_of(position.game, env, played)
    if mine is not None:
        figures.append(
            {
                "state": state_of(position.game, after(env, played)),
                "caption": f"your move: {played}",
                "role": "yours",
                "marked": [mine],
                "divergence": True,
            }
        )
    if cells:
        figures.append(
            {
                "state": state_of(position.game, after(env, best[0])),
                "caption": f"optimal: {', '.join(map(str, best))}",
                "role": "reference",
                "marked": cells,
            }
        )
    return _view(position, figures, note)


def after(env: BoardEnv, action: int) -> BoardEnv:
    """A copy of `env` after `action` (a legal move), the grader's own: no step is counted."""
    child = copy.deepcopy(env)
    child._play(action)
    return child


def picture(details: Mapping[str, Any]) -> str:
    return board_picture(details)
