"""Random (hidden) positions, reproducible from the run's seed."""

from __future__ import annotations

from reference.tictactoe import (
    format_board,
    game_over,
    get_childs,
)
from reference.tictactoe_search import (
    random_position,
)

from ...spec import Spec
from ..kit.random_settings import Setting, read_settings, rng
from .cases import Position

RANDOM_SETTINGS = {
    "empties": Setting(
        (3, 6),
        lambda v: (
            isinstance(v, (list, tuple)) and len(v) == 2 and all(type(e) is int for e in v) and 1 <= v[0] <= v[1] <= 9
        ),
        "must be a range [low, high] of empty cells with 1 <= low <= high <= 9",
    )
}


def random_positions(spec: Spec, seed: int) -> list[tuple[Position, str]]:
    """The hidden positions of a grading run, each with a finished board that random play
    reaches from it (for game_over): reproducible from `seed`, never stored."""
    assert spec.random is not None
    low, high = read_settings(spec, RANDOM_SETTINGS)["empties"]
    positions = []
    for index in range(spec.random.count):
        draw = rng(seed, index)
        board, player = random_position(draw, low, high)
        end, turn = board, player
        while not game_over(end)[0]:
            end, turn = draw.choice(get_childs(end, turn)), -turn
        positions.append((Position(format_board(board), int(player)), format_board(end)))
    return positions
