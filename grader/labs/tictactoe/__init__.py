"""The `tictactoe` lab: `game_over`, `maximize`, `minimize` and `minimax` on 3x3 numpy
boards (DESIGN.md). The observer calls them on boards sent in notation ("xo./.x./..o")
and records every board `get_childs` is called on; this package plans those calls and
judges what comes back against `reference.tictactoe_search`.

A spec case is either
- a game_over case: `boards`, each judged against its stored `(finished, status)`; or
- a position case: a `board` and the `player` to move. `minimax(board, player)` is judged
  by `value` (points), `nodes` (nodes_visited), `pruned` (the boards expanded, in order)
  and `choice` (any optimal move); `bounds` calls `maximize(board, player, player, 2, ...)`
  and `minimize(board, player, -player, 1, ...)` directly with windows around the true
  value at that depth.
Random cases are legal unfinished positions drawn at grading time, judged on all of it.
"""

from .adapter import TicTacToeLab

__all__ = ["TicTacToeLab"]
