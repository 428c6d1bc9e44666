"""The games of the negamax lab.

Each game is a self-contained module (standard library only) because the
grader ships its source text into the student's process to provide the game
globals there. `load_game` runs that same source in a fresh namespace.
"""

from importlib import resources
from typing import Any

from reference.negamax import Game

GAMES: dict[str, str] = {
    "tictactoe": "tictactoe_states",
    "nim": "nim",
    "tree": "tree_game",
}


def load_game(name: str, **params: Any) -> Game:
    """The game `name` (a key of `GAMES`), configured with `params`."""
    if name not in GAMES:
        raise ValueError(f"unknown game {name!r}; known games: {', '.join(GAMES)}")
    source = resources.files(__name__).joinpath(f"{GAMES[name]}.py").read_text(encoding="utf-8")
    return Game.from_source(name, source, **params)
