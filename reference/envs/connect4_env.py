"""Connect Four with the chapter's environment interface (`utils.conn_env.conn` in the book;
`conn` here is the same class as `ConnectFourEnv`).

Columns are numbered 1-7 from the left. `state` is a 7x6 integer array indexed
`state[column - 1][row]` with row 0 at the bottom, so `state.T[::-1]` shows the board as
the chapter prints it (top row first). "red" moves first and is 1 on the board, "yellow"
is -1; `reward` is +1 when red has just connected four, -1 when yellow has, else 0. A
column leaves `validinputs` when it holds six pieces; the game is a tie when every column
is full. The conventions shared with tic-tac-toe are in `reference.envs.core`.
"""

import numpy as np

from reference.envs.core import BoardEnv

_COLUMNS, _ROWS = 7, 6
_DIRECTIONS = ((1, 0), (0, 1), (1, 1), (1, -1))  # across, up, rising, falling


class ConnectFourEnv(BoardEnv):
    players = ("red", "yellow")
    actions = tuple(range(1, _COLUMNS + 1))
    _flat_lists = frozenset({"validinputs", "heights"})

    def reset(self):
        self.heights = [0] * _COLUMNS
        return super().reset()

    def _empty_state(self):
        return np.zeros((_COLUMNS, _ROWS), dtype=int)

    def _place(self, action):
        column = action - 1
        row = self.heights[column]
        mark = self.mark
        state = self.state
        state[column, row] = mark
        self.heights[column] = row + 1
        if row + 1 == _ROWS:
            self.validinputs.remove(action)
        for dx, dy in _DIRECTIONS:
            run = 1
            for sign in (1, -1):
                x, y = column + sign * dx, row + sign * dy
                while 0 <= x < _COLUMNS and 0 <= y < _ROWS and state[x, y] == mark:
                    run += 1
                    x, y = x + sign * dx, y + sign * dy
            if run >= 4:
                return True
        return False

    def board(self):
        return self.state.T[::-1]


conn = ConnectFourEnv
