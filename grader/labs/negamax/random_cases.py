"""Random (hidden) positions of tic-tac-toe, Nim and game trees, reproducible from the run's seed."""

from __future__ import annotations

import random
from dataclasses import replace
from typing import Any

from reference.games import GAMES, load_game
from reference.random_trees import random_tree

from ...checks.show import is_number
from ...spec import Spec
from ..kit.random_settings import Setting, int_range, read_settings, rng
from .cases import Position

RANDOM_SETTINGS = {
    "games": Setting(
        ["tictactoe", "nim", "tree"],  # cycled through, one game per random case
        lambda v: isinstance(v, list) and bool(v) and set(v) <= set(GAMES),
        f"must be a non-empty list drawn from {', '.join(GAMES)}",
    ),
    "tictactoe_moves": int_range([2, 6], 0, 8),  # random moves played from the start
    "nim_heaps": int_range([2, 3], 1, 6),  # number of heaps
    "nim_size": int_range([1, 3], 1, 6),  # objects per heap
    "tree_branching": int_range([1, 3], 1, 6),
    "tree_depth": int_range([2, 5], 1, 8),
    "tree_tie_rate": Setting(0.3, lambda v: is_number(v) and 0 <= v <= 1, "must be a number between 0 and 1"),
}


def random_positions(spec: Spec, seed: int) -> list[Position]:
    """The hidden positions of a grading run: reproducible from `seed`, never stored."""
    assert spec.random is not None
    settings = read_settings(spec, RANDOM_SETTINGS)
    games = settings["games"]
    positions = [random_position(games[i % len(games)], settings, rng(seed, i)) for i in range(spec.random.count)]
    return [replace(p, strict=spec.conventions.strict) for p in positions]


def random_position(name: str, settings: dict[str, Any], rng: random.Random) -> Position:
    if name == "tictactoe":
        game = load_game("tictactoe")
        while True:  # a full board needs 9 moves and the range stops at 8, so this ends
            state, player = game.start, game.players[0]
            for _ in range(rng.randint(*settings["tictactoe_moves"])):
                if game.finished(state):
                    break
                state, player = rng.choice(game.next_states(state, player)), game.other(player)
            if not game.finished(state):
                return Position(game, state, player)
    if name == "nim":
        heaps = [rng.randint(*settings["nim_size"]) for _ in range(rng.randint(*settings["nim_heaps"]))]
        player = rng.choice([0, 1])
        return Position(load_game("nim", heaps=heaps), (tuple(heaps), player), player)
    tree = random_tree(
        rng,
        branching=tuple(settings["tree_branching"]),
        depth=tuple(settings["tree_depth"]),
        values="int",
        value_range=(-1, 1),
        tie_rate=settings["tree_tie_rate"],
    )
    graph = {node: list(children) for node, children in tree.children.items()}
    game = load_game("tree", graph=graph, terminal_nodes=dict(tree.values), root=tree.root)
    return Position(game, tree.root, game.players[0])
