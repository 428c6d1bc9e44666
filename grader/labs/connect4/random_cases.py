"""Random (hidden) positions, reproducible from the run's seed: random legal games from the
start, stopped before the end, searched to a random limit."""

from __future__ import annotations

import random

from reference.games import connect4

from ...spec import Spec
from ..kit.random_settings import int_range, read_settings, rng

RANDOM_SETTINGS = {
    "moves": int_range([6, 20], 0, 36),  # random moves played from the start
    "limit": int_range([2, 4], 0, 6),  # the search depth
}


def random_positions(spec: Spec, seed: int) -> list[tuple[str, int]]:
    """(move string, limit) of each hidden case of a run."""
    assert spec.random is not None
    settings = read_settings(spec, RANDOM_SETTINGS)
    return [random_position(settings, rng(seed, i)) for i in range(spec.random.count)]


def random_position(settings: dict, rng: random.Random) -> tuple[str, int]:
    wanted = rng.randint(*settings["moves"])
    while True:
        State, moves = connect4.gStart, ""
        while len(moves) < wanted:
            col = rng.choice([c for c in range(7) if State[5][c] == connect4.EMPTY])
            after = connect4.drop(State, col, connect4.to_move(State))
            if connect4.finished(after):
                break
            State, moves = after, moves + str(col + 1)
        if len(moves) == wanted:
            return moves, rng.randint(*settings["limit"])
