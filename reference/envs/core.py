"""What the agents lab's environments share: the step counter, the illegal-move error and
the board-game base class.

The interface is the book chapter's (seed 003), gym-like: `reset()`, `step(action) ->
(state, reward, done, info)`, the attributes `turn` and `validinputs`, and copies made with
`copy.deepcopy`. The chapter uses its environments without defining them; where it is
silent, these are the course's decisions:

- `validinputs` is a list attribute (the chapter iterates over `env.validinputs`), in
  increasing order, emptied when the game ends (no move is legal on a finished board).
- `turn` passes to the other player after every legal move, the last one included: it
  always names the player to move, the one whose payoff the chapter's
  `maximized_payoff_ttt(env, reward, done, ...)` computes (on a won game, the loser). The
  book's own environments keep the winner's turn after a winning move; the chapter's
  searches return before reading `turn` once `done` is set, so the two agree on every
  search of the chapter.
- `reward` is +1 when the first player ("X", "red") has just won, -1 when the second has,
  0 otherwise (a tie, or a move that does not end the game); `done` is True once a player
  has won or the board is full. Both stay as attributes (`env.reward`, `env.done`).
- `state` holds 1 for the first player's pieces, -1 for the second's, 0 for empty cells
  (numpy, integer dtype). `step` returns a copy of it, so that a state kept by the caller
  never changes under it; `reset()` too.
- `info` is a new empty dict on every step (the chapter unpacks it and never reads it).
- An illegal move (not in `validinputs`, or any move once the game is over) raises
  `IllegalMoveError`, a `ValueError`, and changes nothing: the chapter's agents only ever
  play `validinputs`, and a move that silently did something would hide a student's bug.
- Counting: every environment holds a `StepCounter` in `env.counter`. `copy.deepcopy`
  copies the board, the turn and the lists but hands the *same* counter object to the
  copy, so every copy made from an environment, and every copy of a copy, adds its `step`
  calls to one count: `env.counter.count` (also `env.steps`) is the number of `step`
  calls made on the environment and all its copies, illegal calls included. A new
  environment gets a counter of its own unless one is passed (`TicTacToeEnv(counter=c)`);
  `pickle` and `copy.copy` are not counted copies (the chapter uses `deepcopy`).

This module and the two game modules import nothing from the project, so that
`reference.envs.bundle_source()` can ship them as text into a student's process.
"""

import copy

import numpy as np


class StepCounter:
    """The number of `step` calls made on an environment and on every deep copy of it."""

    __slots__ = ("count",)

    def __init__(self, count=0):
        self.count = count

    def reset(self):
        """Set the count to 0 and return what it was."""
        previous, self.count = self.count, 0
        return previous

    def __repr__(self):
        return f"StepCounter(count={self.count})"


class IllegalMoveError(ValueError):
    """A move that is not in `validinputs` (every move, once the game is over)."""


_SHARED_AS_IS = (str, int, float, bool, type(None))


class BoardEnv:
    """A two-player board game with the chapter's environment interface.

    A subclass sets `players` (first player first), `actions` (every move, increasing),
    `_empty_state()` and `_place(action) -> won`, which puts the mover's piece on the board,
    removes moves that became impossible from `validinputs` and says whether the mover has
    just won.
    """

    players = ("first", "second")
    actions: tuple[int, ...] = ()
    _flat_lists = frozenset({"validinputs"})  # lists of ints that a deep copy copies flat

    def __init__(self, counter=None):
        self.counter = counter if counter is not None else StepCounter()
        self.reset()

    @classmethod
    def from_moves(cls, moves, counter=None):
        """A new environment after `moves` (played in order from the start, uncounted)."""
        env = cls(counter=counter)
        for action in moves:
            env._play(action)
        return env

    @property
    def steps(self):
        """`step` calls so far on this environment and all its copies (`counter.count`)."""
        return self.counter.count

    @property
    def mark(self):
        """The number the player to move puts on the board: 1 (first player) or -1."""
        return 1 if self.turn == self.players[0] else -1

    def reset(self):
        self.state = self._empty_state()
        self.turn = self.players[0]
        self.validinputs = list(self.actions)
        self.done = False
        self.reward = 0
        return self.state.copy()

    def step(self, action):
        """Play `action` for the player to move: `(state, reward, done, info)`."""
        self.counter.count += 1
        self._play(action)
        return self.state.copy(), self.reward, self.done, {}

    def sample(self, rng=None):
        """A random legal move (from `rng`, a `random.Random`, else the `random` module)."""
        if rng is None:
            import random as rng
        return rng.choice(self.validinputs)

    def _play(self, action):
        """`step` without counting: the moves of `from_moves` and of the reference solver."""
        if action not in self.validinputs:
            if self.done:
                raise IllegalMoveError(f"move {action!r}: the game is over")
            raise IllegalMoveError(f"move {action!r} is not one of validinputs {self.validinputs}")
        first, second = self.players
        mover = self.turn
        if self._place(int(action)):
            self.done = True
            self.reward = 1 if mover == first else -1
            self.validinputs = []
        else:
            self.reward = 0
            if not self.validinputs:
                self.done = True
        self.turn = second if mover == first else first

    def __deepcopy__(self, memo):
        twin = object.__new__(type(self))
        memo[id(self)] = twin
        fields = {}
        for name, value in self.__dict__.items():
            if isinstance(value, _SHARED_AS_IS) or value is self.counter:
                fields[name] = value
            elif isinstance(value, np.ndarray):
                fields[name] = value.copy()
            elif name in self._flat_lists and type(value) is list:
                fields[name] = value[:]
            else:
                fields[name] = copy.deepcopy(value, memo)
        twin.__dict__.update(fields)
        return twin

    def _empty_state(self):
        raise NotImplementedError

    def _place(self, action):
        raise NotImplementedError

    def board(self):
        """The board as the chapter prints it."""
        raise NotImplementedError

    def __repr__(self):
        status = f"done, reward {self.reward}" if self.done else f"{self.turn} to move"
        return f"<{type(self).__name__} {status}\n{self.board()}>"
