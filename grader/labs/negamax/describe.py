"""Positions, states and games of the negamax lab as feedback text."""

from __future__ import annotations

from typing import Any

from reference.negamax import Game

from ...checks.show import show

OUTCOMES = {1: "can force a win", 0: "can force a draw at best", -1: "loses against perfect play"}


def drawn(description: str) -> str:
    """A game's description on its own indented lines (tic-tac-toe boards have three)."""
    return "".join(f"\n    {line}" for line in description.splitlines())


def one_line(game: Game, encoded: Any) -> str:
    """A state the student's search handed to `next_states`, on one line."""
    try:
        return game.describe(game.decode(encoded)).replace("\n", " / ")
    except (ValueError, TypeError):
        text = encoded.get("unencodable") if isinstance(encoded, dict) else None
        return f"{text or show(encoded)} (not a state of the game)"


def game_line(game: Game) -> str:
    """Which game a failure happened in, when the position alone does not say it."""
    if game.name == "nim":
        return f"\nThe game: Nim, started from heaps {' '.join(map(str, game.start[0]))}."
    if game.name == "tree":
        graph, leaves = game.module.graph, game.module.terminal_nodes
        return f"\nThe game: the tree graph = {graph}, terminal_nodes = {leaves} (leaf values for player 0)."
    return ""


def counted(n: int, noun: str) -> str:
    return f"{n:,} {noun}{'' if n == 1 else 's'}"


def difference(seen: int, expected: int) -> str:
    return f"{abs(seen - expected):,} {'more' if seen > expected else 'fewer'}"


def game_name(game: Game) -> str:
    return {"tictactoe": "tic-tac-toe", "nim": "Nim", "tree": "a game tree"}.get(game.name, game.name)
