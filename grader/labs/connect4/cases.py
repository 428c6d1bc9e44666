"""The connect4 lab's spec cases, validated as they are read; each recomputes its own
expectations with `reference.connect4_search` (`abgrade specs verify`).

A case names a position by its move string (Pons' format: columns 1-7, 'X' first), and
its checks say which calls it makes:

- `value`, `bounds`, `cache`, `nodes` (with `limit`): `evaluate(State, limit, f)` on a cold
  cache; `nodes` adds the warm sequence evaluate(State, 0..limit) on one cache; `bounds`
  calls maxValue/minValue with windows below, around and above the value;
- `deepening` (with `time_limit`): `pd_evaluate(State, time_limit, f)`;
- `choice` (with `time_limit`; 'X' to move): `best_move(State, time_limit)`;
- `solved` (with `time_limit` and `positions`, move strings; default: the shipped
  positions): `pd_evaluate` on each.

The timed calls run on the virtual clock (clock.py); a case may set its rates with
`clock: {next_states: SECONDS, round: SECONDS}` (default 0.0001 and 0.001).
"""

from __future__ import annotations

import functools
import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

from reference.connect4_search import (
    ACCEPTED,
    SeedSearch,
    deepening_values,
    depth_limited_value,
    game_result,
    load_solved_positions,
    optimal_successors,
)
from reference.games import connect4

from ...checks.show import is_number
from ...spec import Spec
from ...spec.yaml_lines import LineDict
from ..kit.fields import expected_keys, read_header, require
from ..kit.messages import mismatch
from .clock import GUARD_SECONDS, VirtualClock

CASE_KINDS = ("value", "bounds", "cache", "nodes", "deepening", "choice", "solved")
SEARCH_KINDS = ("value", "bounds", "cache", "nodes")
FIELDS = {"moves", "limit", "time_limit", "positions", "max_limit", "clock"}
CLOCK_FIELDS = {"next_states": "per_call", "round": "per_round"}
EXPECT = {
    "value": ("value",),
    "bounds": ("value",),
    "cache": (),
    "nodes": ("cold", "warm"),
    "deepening": ("values",),
    "choice": ("limit", "moves_optimal"),
    "solved": ("results",),
}
DEFAULT_MAX_LIMIT = 12  # deepening: the grader stops a search past this limit


_LINE_MASKS = tuple(sum(1 << cell for cell in line) for line in connect4.LINES)
_STONES_OF = {mark: str.maketrans({m: "1" if m == mark else "0" for m in (connect4.EMPTY, *connect4.gPlayers)})
              for mark in connect4.gPlayers}  # fmt: skip


def bit_heuristic(State: tuple) -> float:
    """`connect4.heuristic`, the same float for every board, with each side's stones as
    the bits of one integer: the judges evaluate it on thousands of boards a grading."""
    board = connect4.cells(State)
    x = int(board.translate(_STONES_OF["X"])[::-1], 2)
    o = int(board.translate(_STONES_OF["O"])[::-1], 2)
    weight = connect4.WEIGHT
    score = 0
    for mask in _LINE_MASKS:
        if not o & mask:
            score += weight[(x & mask).bit_count()]
        elif not x & mask:
            score -= weight[(o & mask).bit_count()]
    return score / (abs(score) + 20)


class CachedGame:
    """Connect Four with its pure functions memoised: the grader replays and checks many
    searches over the same states (heuristic dominates otherwise). Same answers as
    `reference.games.connect4`; `next_states` hands out a fresh list each time."""

    gPlayers = connect4.gPlayers
    gStart = connect4.gStart
    EMPTY = connect4.EMPTY
    to_move = staticmethod(connect4.to_move)

    def __init__(self) -> None:
        self.heuristic = functools.lru_cache(maxsize=1 << 18)(bit_heuristic)
        self.finished = functools.lru_cache(maxsize=1 << 18)(connect4.finished)
        self.utility = functools.lru_cache(maxsize=1 << 18)(connect4.utility)
        self._next = functools.lru_cache(maxsize=1 << 16)(
            lambda State, player: tuple(connect4.next_states(State, player))
        )

    def next_states(self, State: tuple, player: str) -> list:
        return list(self._next(State, player))


GAME = CachedGame()


def state_of(moves: str) -> tuple:
    return connect4.from_moves(moves)


def maximizing(State: tuple) -> bool:
    return connect4.to_move(State) == connect4.gPlayers[0]


def f_name(State: tuple) -> str:
    return "maxValue" if maximizing(State) else "minValue"


def accepted_counts(State: tuple, limit: int, warm: bool) -> list[int]:
    """The distinct `next_states` counts of every accepted variant: `evaluate(State,
    limit, f)` on a cold cache, or (warm) after evaluate(State, 0..limit-1) on one cache."""
    return sorted(set(variant_counts(State, limit, warm, ACCEPTED).values()))


def variant_counts(State: tuple, limit: int, warm: bool, variants: dict) -> dict[str, int]:
    return {name: replay(State, limit, variant).counts[1 if warm else 0] for name, variant in variants.items()}


class Replay:
    """What one search (a `Variant`) counts and stores on a case's calls: `evaluate(State,
    limit, f)` on an empty cache (cold), and after evaluate(State, 0..limit-1) on one cache
    (warm). The caches in the report's terms (`reported`) are worked out each time asked,
    not kept: they would double what the kept replays hold."""

    def __init__(self, counts: tuple[int, int], caches: tuple[dict, dict]) -> None:
        self.counts, self.caches = counts, caches

    def reported(self) -> tuple[dict, dict]:
        """The cold and warm caches keyed as the observer's report keys them: (the rows as
        strings, limit) (limit None for a key without one) -> (flag, value, State)."""
        return _as_reported(self.caches[0]), _as_reported(self.caches[1])


def _as_reported(cache: dict) -> dict:
    held = {}
    for key, (flag, value) in cache.items():
        State, limit = key if len(key) == 2 and isinstance(key[1], int) else (key, None)
        held[(tuple("".join(row) for row in State), limit)] = (flag, value, State)
    return held


@functools.lru_cache(maxsize=32)
def replay(State: tuple, limit: int, variant: Any) -> Replay:
    """`variant`'s counts and caches on `State` at `limit`, computed once a grading: the
    expected counts, the cache check and the count hints all read them. 32 replays: a
    correct submission's grading needs about 26 (the next student's grading reuses them);
    32 of them held under 2 MB here (a bug's grading, its shrinking included)."""
    cold = SeedSearch(game=GAME, variant=variant)
    cold.evaluate(State, limit, cold.maxValue if maximizing(State) else cold.minValue)
    warm = SeedSearch(game=GAME, variant=variant)
    f = warm.maxValue if maximizing(State) else warm.minValue
    for below in range(limit):
        warm.evaluate(State, below, f)
    before = warm.next_states_calls
    warm.evaluate(State, limit, f)
    return Replay((cold.next_states_calls, warm.next_states_calls - before), (cold.cache, warm.cache))


class _OverBudget(Exception):
    """A replayed deepening went past its budget of next_states calls."""


class _BudgetedGame:
    """The judges' game with a budget of next_states calls (a report can claim rounds no
    genuine search made in its time: replaying them must not keep the grader for minutes)."""

    gPlayers = connect4.gPlayers

    def __init__(self, budget: int) -> None:
        self.left = budget
        self.to_move, self.finished, self.utility, self.heuristic = (
            GAME.to_move,
            GAME.finished,
            GAME.utility,
            GAME.heuristic,
        )

    def next_states(self, State: tuple, player: str) -> list:
        self.left -= 1
        if self.left < 0:
            raise _OverBudget
        return GAME.next_states(State, player)


# (State, variant, budget) -> (the rounds' counts known, whether the next round is past the
# budget): a few integers each, kept for the gradings to come (the same cases every time)
_ROUNDS: OrderedDict[tuple, tuple[tuple[int, ...], bool]] = OrderedDict()
_ROUNDS_KEPT = 256
_ROUNDS_LOCK = threading.Lock()


def rounds_match(State: tuple, variant: Any, claimed: Sequence[int], budget: int) -> bool:
    """Whether `claimed[k]` is, for every k, the next_states calls of `variant`'s
    `evaluate(State, k, f)` after evaluate(State, 0..k-1, f) on one empty cache: what
    pd_evaluate's round at limit k calls (the warm count the nodes check replays). Worked out
    round by round, only as far as the counts agree and within `budget` calls in all (a
    genuine search's rounds fit in what the guard lets it run); memoised."""
    key = (State, variant, budget)
    with _ROUNDS_LOCK:
        known, exhausted = _ROUNDS.get(key, ((), False))
    verdict = _agrees(known, exhausted, claimed)
    if verdict is not None:
        return verdict
    known, exhausted = _replay_rounds(State, variant, claimed, budget)
    with _ROUNDS_LOCK:
        if len(known) >= len(_ROUNDS.get(key, ((), False))[0]):
            _ROUNDS[key] = (known, exhausted)
            _ROUNDS.move_to_end(key)
        while len(_ROUNDS) > _ROUNDS_KEPT:
            _ROUNDS.popitem(last=False)
    return bool(_agrees(known, exhausted, claimed))


def _agrees(known: tuple[int, ...], exhausted: bool, claimed: Sequence[int]) -> bool | None:
    """Whether the claimed counts are the known ones; None when more rounds must be replayed."""
    for index, count in enumerate(claimed):
        if index >= len(known):
            return False if exhausted else None
        if known[index] != count:
            return False
    return True


def _replay_rounds(State: tuple, variant: Any, claimed: Sequence[int], budget: int) -> tuple[tuple[int, ...], bool]:
    """`variant`'s rounds on `State` up to the first that differs from `claimed` (or all of
    them), and whether the budget ran out before the next."""
    search = SeedSearch(game=_BudgetedGame(budget), variant=variant)
    f = search.maxValue if maximizing(State) else search.minValue
    found: list[int] = []
    try:
        for limit, count in enumerate(claimed):
            before = search.next_states_calls
            search.evaluate(State, limit, f)
            search.expanded.clear()  # the states it expanded: not needed, and they add up
            found.append(search.next_states_calls - before)
            if found[-1] != count:
                break
    except _OverBudget:
        return tuple(found), True
    return tuple(found), False


def timed_search(variant: Any, clock: VirtualClock, game: Any = GAME) -> SeedSearch:
    """A search of `variant` whose deepening reads the virtual clock, as the student's does."""
    search = SeedSearch(game=game, variant=variant)
    search.clock = lambda: clock.seconds(search.next_states_calls, len(search.deepening))
    return search


def choice_limit(State: tuple, time_limit: float, max_limit: int, clock: VirtualClock) -> int:
    """Where the seed's best_move stops deepening on the virtual clock (decided, or out of time)."""
    return timed_search(ACCEPTED["seed"], clock).best_move(State, time_limit, max_limit=max_limit).limit


@functools.lru_cache(maxsize=64)
def reached_limit(
    State: tuple, variant: Any, time_limit: float, max_limit: int, clock: VirtualClock, budget: int
) -> tuple[int, str] | None:
    """Where `variant`'s deepening on `State` stops on the virtual clock, counted from its
    first round (the limit, and why: 'decided', 'time' or 'max_limit'); None when it takes
    more than `budget` next_states calls. Memoised: the same fixed cases every grading."""
    search = timed_search(variant, clock, _BudgetedGame(budget))
    f = search.maxValue if maximizing(State) else search.minValue
    try:
        _value, limit = search.pd_evaluate(State, time_limit, f, max_limit=max_limit)
    except _OverBudget:
        return None
    return limit, str(search.stopped_by)


def read_clock(spec: Spec, raw: LineDict, where: str) -> VirtualClock:
    """A case's `clock` rates (clock.py), or the default."""
    node = raw.get("clock")
    if node is None:
        return VirtualClock()
    if not isinstance(node, dict) or not node or set(node) - set(CLOCK_FIELDS):
        raise spec.error(raw, "clock", f"{where}.clock", "must be a mapping with next_states and/or round (seconds)")
    rates = {}
    for key, value in node.items():
        if not isinstance(value, (int, float)) or isinstance(value, bool) or not 0 < value <= 1:
            raise spec.error(
                node, key, f"{where}.clock.{key}", f"must be seconds, more than 0 and at most 1, got {value!r}"
            )
        rates[CLOCK_FIELDS[key]] = float(value)
    return VirtualClock(**rates)


class Connect4Case:
    """A fixed case of the connect4 spec (module docstring)."""

    def __init__(self, spec: Spec, index: int, raw: LineDict, names: set[str]) -> None:
        self.header = read_header(spec, index, raw, CASE_KINDS, FIELDS, names)
        where, expect = self.header.where, self.header.expect
        self.where, self.expect, self.name = where, expect, self.header.name
        checks = set(self.header.checks)
        self.positions: list[str] = []
        self.moves = ""
        if "solved" in checks:
            if checks != {"solved"}:
                raise spec.error(raw, "checks", f"{where}.checks", "a solved case checks only solved")
            listed = raw.get("positions", [p["moves"] for p in load_solved_positions()])
            if not isinstance(listed, list) or not listed or not all(isinstance(m, str) for m in listed):
                raise spec.error(raw, "positions", f"{where}.positions", "must be a list of move strings")
            self.positions = list(listed)
            for number, moves in enumerate(self.positions):
                self._read_state(spec, listed, number, f"{where}.positions[{number}]", moves)
        else:
            self.moves = require(spec, raw, "moves", f"{where}.moves", str, "a move string (columns 1-7, X first)")
            self.state = self._read_state(spec, raw, "moves", f"{where}.moves", self.moves)
        self.limit = 0
        if checks & set(SEARCH_KINDS):
            self.limit = require(spec, raw, "limit", f"{where}.limit", int, "the search depth (a whole number)")
            if not 0 <= self.limit <= 12:
                raise spec.error(raw, "limit", f"{where}.limit", "must be between 0 and 12")
        self.time_limit = 0.0
        if checks & {"deepening", "choice", "solved"}:
            self.time_limit = require(spec, raw, "time_limit", f"{where}.time_limit", (int, float), "seconds")
            if not 0 <= self.time_limit <= 10:
                raise spec.error(raw, "time_limit", f"{where}.time_limit", "must be between 0 and 10 seconds")
        self.clock = read_clock(spec, raw, where)
        self.time_limit_line = raw.lines.get("time_limit", raw.line)
        self.max_limit = raw.get("max_limit", DEFAULT_MAX_LIMIT)
        if type(self.max_limit) is not int or not 1 <= self.max_limit <= 30:
            raise spec.error(raw, "max_limit", f"{where}.max_limit", "must be a whole number 1-30")
        if "choice" in checks and not self.positions and not maximizing(self.state):
            raise spec.error(raw, "moves", f"{where}.moves", "best_move is for 'X' to move: give an even move string")
        needed = expected_keys(spec, self.header, EXPECT)
        for key in sorted(needed):
            require(spec, expect, key, f"{where}.expect.{key}", (int, float, list), "the stored expectation")

    @staticmethod
    def _read_state(spec: Spec, node: Any, key: Any, where: str, moves: str) -> tuple:
        try:
            State = state_of(moves)
        except ValueError as exc:
            raise spec.error(node, key, where, str(exc)) from None
        if connect4.finished(State):
            raise spec.error(node, key, where, "the game is already over in this position")
        return State

    def computed(self) -> dict[str, Any]:
        """Every stored expectation, computed by the reference."""
        actual: dict[str, Any] = {}
        keys = set(self.expect)
        if "value" in keys:
            actual["value"] = depth_limited_value(self.state, self.limit)
        if "cold" in keys:
            actual["cold"] = accepted_counts(self.state, self.limit, warm=False)
        if "warm" in keys:
            actual["warm"] = accepted_counts(self.state, self.limit, warm=True)
        if "values" in keys:
            actual["values"] = [v for _, v in deepening_values(self.state, self.max_limit)]
        if "limit" in keys or "moves_optimal" in keys:
            limit = choice_limit(self.state, self.time_limit, self.max_limit, self.clock)
            actual["limit"] = limit
            actual["moves_optimal"] = [connect4.encode(s) for s in optimal_successors(self.state, limit)]
        if "results" in keys:
            actual["results"] = [game_result(state_of(m)) for m in self.positions]
        return actual

    def verify(self, path: str) -> list[str]:
        problems = []
        for key, value in self.computed().items():
            stored = self.expect[key]
            same = stored == value or (is_number(stored) and is_number(value) and abs(stored - value) < 1e-12)
            if not same:
                line = self.expect.lines.get(key, self.expect.line)
                problems.append(mismatch(path, line, f"{self.where}.expect.{key}", stored, value))
        return problems + self.timing_problems(path)

    def timing_problems(self, path: str) -> list[str]:
        """Whether every accepted variant passes this case on its virtual clock: a timed
        deepening stops by itself (decided, or out of time) within `max_limit` and before
        the guard; a solved position gets its result within the time limit."""
        checks = set(self.header.checks)
        if not checks & {"deepening", "choice", "solved"}:
            return []
        line = self.time_limit_line
        states = [state_of(m) for m in self.positions] if self.positions else [self.state]
        results = self.expect.get("results", [None] * len(states))
        problems = []
        for name, variant in ACCEPTED.items():
            for number, (State, result) in enumerate(zip(states, results)):
                search = timed_search(variant, self.clock)
                f = search.maxValue if maximizing(State) else search.minValue
                value, limit = search.pd_evaluate(State, self.time_limit, f, max_limit=self.max_limit)
                seconds = self.clock.seconds(search.next_states_calls, len(search.deepening))
                where = f"{path}:{line}: {self.where}" + (f".positions[{number}]" if self.positions else "")
                if "solved" in checks and value != result:
                    problems.append(
                        f"{where}: the accepted variant {name!r} returns {value!r} by its virtual clock's time "
                        f"limit, not the result {result!r}: raise time_limit"
                    )
                elif "solved" not in checks and (
                    search.stopped_by == "max_limit" or seconds > self.time_limit + GUARD_SECONDS
                ):
                    problems.append(
                        f"{where}: the accepted variant {name!r} is still deepening at limit {limit} "
                        f"({seconds:.3f} s on its virtual clock): raise max_limit or lower time_limit"
                    )
        return problems


def read_cases(spec: Spec) -> list[Connect4Case]:
    names: set[str] = set()
    return [Connect4Case(spec, index, raw, names) for index, raw in enumerate(spec.cases)]
