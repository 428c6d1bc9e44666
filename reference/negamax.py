"""Negamax searches over the negamax lab's game interface, with the counts the lab grades.

A game is a self-contained module (see `reference.games`) that defines
`Players`, `Start`, `next_states`, `utility`, `finished`, `describe`,
`encode` and `decode`. `alphabeta_value` mirrors the course's `value` /
`alphaBeta` pair step by step, so that its call counts and its order of
expansions are the ones a correct student submission produces; the other
searches give the exact answers the grader judges against.
"""

from __future__ import annotations

import types
from dataclasses import dataclass, field
from typing import Any, Literal, cast

Fail = Literal["soft", "hard"]


@dataclass(frozen=True, eq=False)
class Game:
    """A game module's functions, executed in a namespace of their own.

    Each `Game` runs the module's source afresh, so that configuring one game
    (say Nim on other heaps) never changes another. `source` and `params` are
    what the grader ships to the student's process to build the same game
    there: run `source`, then `configure(**params)`.
    """

    name: str
    source: str
    params: dict[str, Any]
    module: types.ModuleType = field(repr=False)

    @classmethod
    def from_source(cls, name: str, source: str, **params: Any) -> Game:
        module = types.ModuleType(f"abgrade_game_{name}")
        exec(compile(source, f"<game {name}>", "exec"), module.__dict__)
        if params:
            configure = getattr(module, "configure", None)
            if configure is None:
                raise TypeError(f"game {name!r} takes no parameters, got {sorted(params)}")
            configure(**params)
        return cls(name, source, dict(params), module)

    @property
    def players(self) -> list:
        return list(self.module.Players)

    @property
    def start(self) -> Any:
        return self.module.Start

    def other(self, player: Any) -> Any:
        first, second = self.module.Players
        return second if player == first else first

    def next_states(self, state: Any, player: Any) -> list:
        return self.module.next_states(state, player)

    def utility(self, state: Any, player: Any) -> int | None:
        return self.module.utility(state, player)

    def finished(self, state: Any) -> bool:
        return self.module.finished(state)

    def describe(self, state: Any) -> str:
        return self.module.describe(state)

    def encode(self, state: Any) -> Any:
        return self.module.encode(state)

    def decode(self, obj: Any) -> Any:
        return self.module.decode(obj)

    def student_globals(self) -> dict[str, Any]:
        """The globals the grader sets in a student's module."""
        names = ("Players", "Start", "next_states", "utility", "finished")
        return {name: getattr(self.module, name) for name in names}


@dataclass(frozen=True)
class SearchResult:
    """What one search did: its result, how often it called `value`, and the
    states (encoded) on which it called `next_states`, in call order."""

    value: float
    calls: int
    trace: tuple

    @property
    def next_states_calls(self) -> int:
        return len(self.trace)


@dataclass
class _Recorder:
    """Counts `value` calls and records expansions during one search."""

    game: Game
    calls: int = 0
    expanded: list = field(default_factory=list)

    def next_states(self, state: Any, player: Any) -> list:
        self.expanded.append(self.game.encode(state))
        return self.game.next_states(state, player)

    def result(self, value: float) -> SearchResult:
        return SearchResult(value, self.calls, tuple(self.expanded))


def negamax_value(game: Game, state: Any, player: Any) -> SearchResult:
    """Plain minimax in negamax form: every call of `value` is counted and
    every position below `state` is visited."""
    recorder = _Recorder(game)

    def value(state: Any, player: Any) -> int:
        recorder.calls += 1
        if game.finished(state):
            return cast(int, game.utility(state, player))  # a finished state's utility is a number
        opponent = game.other(player)
        return max(-value(successor, opponent) for successor in recorder.next_states(state, player))

    return recorder.result(value(state, player))


def alphabeta_value(
    game: Game,
    state: Any,
    player: Any,
    alpha: float = -1,
    beta: float = 1,
    *,
    fail: Fail = "soft",
    start: float | None = None,
    strict: bool = False,
) -> SearchResult:
    """The course's alpha-beta: `value` counts the call and delegates to
    `alphaBeta`, which recurses through `value` with the window negated and
    swapped, and cuts off as soon as `val >= beta` (`strict`: only when
    `val > beta`, a course's `conventions: {cutoff: strict}`).

    `fail="soft"` is the course's code as written: results below the window
    come back as `alpha` from inner nodes (`val` starts at `alpha`), but a
    leaf's utility and a cut-off's `val` may lie outside the window.
    `fail="hard"` clamps every result into `[alpha, beta]`. Both satisfy the
    bound specification and visit exactly the same states.

    `start` is where `val` starts at an inner node: None for `alpha` (the
    course's code); a number such as -1 or -inf for the variants that start
    from the lowest value. Every variant meets the bound specification; for a
    window with alpha < beta they visit exactly the states the course's code
    visits (children always get alpha < beta too), with alpha == beta they may
    visit more, because the course's code then cuts off after one successor.
    """
    if fail not in ("soft", "hard"):
        raise ValueError(f"fail must be 'soft' or 'hard', not {fail!r}")
    hard = fail == "hard"
    recorder = _Recorder(game)

    def value(state: Any, player: Any, alpha: float, beta: float) -> float:
        recorder.calls += 1
        return alpha_beta(state, player, alpha, beta)

    def alpha_beta(state: Any, player: Any, alpha: float, beta: float) -> float:
        if game.finished(state):
            utility = cast(int, game.utility(state, player))  # a finished state's utility is a number
            return min(max(utility, alpha), beta) if hard else utility
        val = alpha if start is None else start
        opponent = game.other(player)
        for successor in recorder.next_states(state, player):
            val = max(val, -value(successor, opponent, -beta, -alpha))
            if val > beta or (val == beta and not strict):
                return beta if hard else val
            alpha = max(val, alpha)
        return val

    return recorder.result(value(state, player, alpha, beta))


def true_value(game: Game, state: Any, player: Any) -> int:
    """The exact game value of `state` for `player` (-1, 0 or 1)."""
    return _solve(game, state, player, {})


def optimal_successors(game: Game, state: Any, player: Any) -> list:
    """The successors, in `next_states` order, reached by an optimal move of
    `player`: those whose value for the opponent is minus the state's value.
    Empty for a finished state."""
    if game.finished(state):
        return []
    memo: dict = {}
    best = _solve(game, state, player, memo)
    opponent = game.other(player)
    return [
        successor for successor in game.next_states(state, player) if -_solve(game, successor, opponent, memo) == best
    ]


def _solve(game: Game, state: Any, player: Any, memo: dict) -> int:
    """Negamax with memoisation on (state, player), so that positions reached
    by many move orders are solved once."""
    key = (state, player)
    if key not in memo:
        if game.finished(state):
            memo[key] = game.utility(state, player)
        else:
            opponent = game.other(player)
            memo[key] = max(-_solve(game, successor, opponent, memo) for successor in game.next_states(state, player))
    return memo[key]
