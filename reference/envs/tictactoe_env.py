"""Tic-tac-toe with the chapter's environment interface (`utils.ttt_simple_env.ttt` in the
book; `ttt` here is the same class as `TicTacToeEnv`).

Cells are numbered 1-9 row by row from the top left, so cell `k` is `state[k - 1]` and
`state.reshape(3, 3)` shows the board as the chapter prints it. "X" moves first and is 1 on
the board, "O" is -1. `step` returns `reward` +1 when X has just won, -1 when O has, else 0.
The conventions shared with Connect Four (turn, validinputs, illegal moves, the step
counter shared by deep copies) are in `reference.envs.core`.
"""

import numpy as np

from reference.envs.core import BoardEnv

# For each cell index, the pairs of other cell indices that complete a line through it.
_LINES = ((0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6))
_PARTNERS = tuple(tuple(tuple(c for c in line if c != cell) for line in _LINES if cell in line) for cell in range(9))


class TicTacToeEnv(BoardEnv):
    players = ("X", "O")
    actions = tuple(range(1, 10))

    def _empty_state(self):
        return np.zeros(9, dtype=int)

    def _place(self, action):
        cell = action - 1
        mark = self.mark
        state = self.state
        state[cell] = mark
        self.validinputs.remove(action)
        return any(state[a] == mark and state[b] == mark for a, b in _PARTNERS[cell])

    def board(self):
        return self.state.reshape(3, 3)


ttt = TicTacToeEnv
