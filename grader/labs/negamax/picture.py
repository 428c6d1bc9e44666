"""The negamax lab's pictures, one kind per game: an explicit tree is drawn as a tree (the
tree lab's drawer: the nodes each search expanded, i.e. called next_states on; its leaves
are not observed), tic-tac-toe states as boards and Nim states as heaps (the kit's
`"expansions"` view: the position and the first expansion where the searches part; the
`"positions"` view for a move). Built from the grader's own game and the observer's encoded
states; a state the student made up is shown as text."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from reference.negamax import Game

from ...checks.expansions import first_divergence
from ..kit.pictures.nim import heaps_of
from ..kit.pictures.positions import board_picture
from ..kit.pictures.tree import tree_figure
from .cases import Position

TTT_MARKS = {"X": "x", "O": "o", ".": "."}


def drawable(game: Game, encoded: Any) -> Any:
    """An encoded state as the kit draws it (a tic-tac-toe board as a notation); anything
    the kit can't draw is shown as text."""
    if game.name == "tictactoe" and isinstance(encoded, str) and len(encoded) == 9:
        mapped = "".join(TTT_MARKS.get(c, "?") for c in encoded)
        return "/".join(mapped[row : row + 3] for row in (0, 3, 6))
    return encoded  # Nim's [heaps, player to move] and a tree's node name are drawn as they are


def caption(game: Game, position: Position, what: str = "the state") -> str:
    return f"{what} (player = {position.player})"


def search_details(position: Position, seen: Sequence[Any], expected: Sequence[Any], totals: tuple[int, int]) -> dict:
    """What a report draws for a traced call of value: the states each search expanded."""
    game = position.game
    if game.name == "tree":
        graph, leaves = game.module.graph, game.module.terminal_nodes
        first, second = position.player, game.other(position.player)
        return {
            "view": "tree",
            "root": position.state,
            "graph": {node: list(kids) for node, kids in graph.items()},
            "terminal_nodes": dict(leaves),
            "seen": [s for s in seen if isinstance(s, str)],
            "expected": list(expected),
            "observed": "inner",
            "roles": [f"P{first}", f"P{second}"],
            "roles_note": "P0 / P1: the player to move at that depth; leaf values are for player 0",
        }
    index = first_divergence(list(seen), list(expected))
    start = 0 if index is None else max(index - 1, 0)  # the last state in common and the two that differ
    stop = 0 if index is None else index + 1
    return {
        "view": "expansions",
        "game": game.name,
        "noun": "states",
        "position": drawable(game, game.encode(position.state)),
        "offset": start,
        "seen": [drawable(game, s) for s in seen[start:stop]],
        "expected": [drawable(game, s) for s in expected[start:stop]],
        "seen_total": totals[0],
        "expected_total": totals[1],
    }


def move_details(position: Position, chosen: Any, optimal: Sequence[Any]) -> dict | None:
    """The position, the student's move and an optimal one (None for a tree: its picture
    is the search's)."""
    game = position.game
    if game.name == "tree":
        return None
    start = drawable(game, game.encode(position.state))
    figures: list[dict] = [{"state": start, "caption": caption(game, position), "role": "position"}]
    mine = drawable(game, chosen)
    figures.append(
        {"state": mine, "caption": "your move", "role": "yours", "divergence": True, **_change(game, start, mine)}
    )
    if optimal:
        best = drawable(game, optimal[0])
        more = f" (1 of {len(optimal)})" if len(optimal) > 1 else ""
        figures.append(
            {"state": best, "caption": f"an optimal move{more}", "role": "reference", **_change(game, start, best)}
        )
    return {"view": "positions", "game": game.name, "figures": figures}


def _change(game: Game, before: Any, after: Any) -> dict:
    """What a move changed: the cell it filled, or the tokens it took from a heap."""
    if game.name == "nim":
        old, new = heaps_of(before), heaps_of(after)
        if old is None or new is None or len(old) != len(new):
            return {}
        taken = [b - a if b > a else 0 for b, a in zip(old, new)]
        return {"taken": taken, "marked": [i for i, t in enumerate(taken) if t]}
    if isinstance(before, str) and isinstance(after, str) and len(before) == len(after):
        cells = before.replace("/", ""), after.replace("/", "")
        return {"marked": [i for i, (a, b) in enumerate(zip(*cells)) if a != b]}
    return {}


def position_details(position: Position) -> dict | None:
    """The position alone (None for a tree)."""
    game = position.game
    if game.name == "tree":
        return None
    start = drawable(game, game.encode(position.state))
    return {
        "view": "positions",
        "game": game.name,
        "figures": [{"state": start, "caption": caption(game, position), "role": "position"}],
    }


def picture(details: Mapping[str, Any]) -> str:
    if details.get("view") == "tree":
        return tree_figure(details)
    return board_picture(details)
