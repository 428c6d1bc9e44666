"""Tic-tac-toe boards as feedback text: drawn, side by side, and what a score means."""

from __future__ import annotations

import numpy as np

from reference.tictactoe import (
    draw_board,
    parse_board,
)

MARK = {1: "'o'", -1: "'x'"}


NOT_A_BOARD = "?"  # the observer's prefix for something that is not a board


def board_of(label: str) -> np.ndarray | None:
    """The board a label from the observer names, or None for anything that is not one."""
    try:
        return parse_board(label)
    except ValueError:
        return None


def drawn(label: str, indent: str = "    ") -> str:
    """A board (notation) drawn on its own indented lines; something else as text."""
    board = board_of(label)
    if board is None:
        return f"{indent}{label.removeprefix(NOT_A_BOARD)} (not a tic-tac-toe board)"
    return "\n".join(indent + line for line in draw_board(board).splitlines())


def side_by_side(*boards: tuple[str, str]) -> str:
    """Boards (title, notation) drawn next to each other under their titles."""
    columns = []
    for title, label in boards:
        lines = [title, *(drawn(label, "").splitlines())]
        width = max(len(line) for line in lines)
        columns.append([line.ljust(width) for line in lines])
    height = max(len(c) for c in columns)
    rows = zip(*(c + [" " * len(c[0])] * (height - len(c)) for c in columns))
    return "\n".join("    " + "     ".join(row).rstrip() for row in rows)


def outcome(points: int, player: int) -> str:
    """What a position's value means for `player` (depth 0: the move being chosen is move 1)."""
    if points > 0:
        moves = 10 - points
        when = "with its next move" if moves == 1 else f"{moves} moves from now (counting both sides' moves)"
        return f"{MARK[player]} can force a win {when}: score 10 - {moves} = {points}"
    if points < 0:
        moves = 10 + points
        return f"{MARK[player]} loses {moves} moves from now at best: score {moves} - 10 = {points}"
    return "best play on both sides ends in a draw: score 0"
