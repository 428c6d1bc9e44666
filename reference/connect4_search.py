"""The `connect4` lab's search, as the course writes it (seed 001), with what it reads and counts.

`SeedSearch` is the course's depth-limited alpha-beta with progressive
deepening, move ordering and a memo cache, step by step in the student API's
semantics (DESIGN.md, issue 16): the grader's expectations (values, cache
contents, `next_states` calls, deepening order, chosen moves) come from it.
Its cache is an explicit dict and its counters are attributes, so that a
caller can count and inspect them; nothing in it is random.

Parameterised by a `Variant`, the same class is also every accepted way of
writing the lab (`ACCEPTED`) and every classic bug the grader diagnoses
(`BUGS`), so that the grader can replay what each of them would read, count,
store and return.

The student API, in this class's terms
--------------------------------------
- `store_cache(State, limit, alpha, beta, value)`: key `(State, limit)`;
  flag `'≤'` when `value <= alpha` (an upper bound: the search failed low),
  `'='` when `alpha < value < beta`, `'≥'` when `value >= beta` (a lower
  bound: it failed high).
- `value_cache(State, limit)`: the stored value, whatever its flag, else 0.
- `evaluate(State, limit, f, alpha=-1, beta=1)`: the seed's memoised entry
  point: an exact entry is returned; a bound that already decides the window
  is returned; otherwise `f` searches (on the window narrowed by the bound
  where it lies inside) and the result is stored.
- `maxValue` / `minValue(State, limit, alpha=-1, beta=1)`: `utility` on a
  finished state, `heuristic` at limit 0; a state with one successor passes
  it the same `limit` (the singular-move extension); otherwise the
  successors are searched best first by their cached value one level down
  (`heapq` on `(priority, state)`, so ties go to the smaller state), with
  cut-offs at `value >= beta` / `value <= alpha`; `value` starts at `alpha` /
  `beta`.
- `pd_evaluate(State, time_limit, f) -> (value, limit)`: `evaluate` with
  limits 0, 1, 2, ... on the same cache, stopping after the first value of
  -1 or 1 or the first search that ends after `time_limit` seconds.
- `best_move(State, time_limit)`: for `gPlayers[0]` to move, as the seed.

What the seed's move ordering really reads
------------------------------------------
The seed's text says that the values of one deepening round order the moves
of the next, but its code asks for a successor's value at `limit - 1`, the
depth that successor is about to be searched to, while the previous round
stored it at `limit - 2`. So the ordering mostly reads the default 0 (ties:
the smaller state first) and only uses values found earlier in the same
round through transpositions or the singular-move extension (on the `solved`
positions about one lookup in six hits). The reference reproduces the code,
since students copy it; `Variant(order_depth=2)` is the text's reading,
listed among the accepted variants.

Decisions where the course is silent
------------------------------------
- The seed's `print` in `pd_evaluate` is left out; the clock is
  `time.perf_counter` (injectable), the seed's `time.time` measures the same.
- `best_move` is deterministic: it returns the first optimal successor in
  `next_states` order and the whole optimal set (the seed draws one at
  random). Optimal at the reached `limit` means a successor `s` whose
  `evaluate(s, limit - 1, minValue)` is the largest; this is the seed's
  "equal to the best value" whenever that set is not empty, and it also
  covers the seed's two empty cases (a single successor, which the seed
  searched at `limit`, and a deepening stopped at limit 0).
- `depth_limited_value` is the exact value the seed's search approximates: plain
  minimax to `limit` with the same leaves and the same singular-move
  extension; cache soundness and `evaluate`'s results are checked against it.
- The player to move in a cached state is the one `to_move` gives (for Connect
  Four the stones say it), which is what `f` is in a correct search.
"""

from __future__ import annotations

import heapq
import json
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import resources
from types import ModuleType
from typing import Any, NamedTuple

from reference.games import connect4

EXACT, UPPER, LOWER = "=", "≤", "≥"
# every spelling of a flag the lab accepts, mapped to the seed's
FLAG_SPELLINGS = {"=": EXACT, "≤": UPPER, "<=": UPPER, "≥": LOWER, ">=": LOWER}


@dataclass(frozen=True)
class Variant:
    """One way of writing the lab; the default is the course's code.

    - `flags`: `'seed'`; `'swapped'` (`'≥'` stored for a low failure, `'≤'`
      for a high one); `'always_exact'` (`'='` stored for every value).
    - `key_with_limit`: False keys the cache by `State` alone.
    - `use_cache`: False makes `evaluate` call `f` and store nothing.
    - `ordering`: `'heapq'` (the seed: ascending `(priority, state)`, ties to
      the smaller state); `'sorted'` (a stable sort on the priority: ties
      keep `next_states` order); `'none'` (`next_states` order);
      `'reversed'` (the priorities' signs swapped: worst first).
    - `order_depth`: a successor's priority is its cached value at
      `limit - order_depth`: 1 is the seed's code; 2 is what the seed's text
      says (the values of the previous deepening round; module docstring).
    - `fail`: `'soft'` (the seed: leaf values and cut-off values as found,
      the best value starting at the window's bound); `'hard'` (every result
      clamped into `[alpha, beta]`); `'textbook'` (fail-soft as textbooks
      write it: the best value starts below every value, -inf, so a search
      that fails low returns what it found, below alpha, and a child's window
      is `(max(alpha, best), beta)`: the same cut-offs as the seed's, other
      values in the cache, and so another order one round later).
    - `finished_first`: False checks `limit == 0` before `finished`, so a
      finished state at the horizon gets the heuristic.
    - `singular_extension`: False searches a single successor at `limit - 1`
      like any other.
    - `deepening`: `'seed'`; `'ignores_time'` (stops only on a decided
      value); `'ignores_decided'` (stops only when the time is up).
    """

    flags: str = "seed"
    key_with_limit: bool = True
    use_cache: bool = True
    ordering: str = "heapq"
    order_depth: int = 1
    fail: str = "soft"
    finished_first: bool = True
    singular_extension: bool = True
    deepening: str = "seed"

    def __post_init__(self) -> None:
        choices = {
            "flags": ("seed", "swapped", "always_exact"),
            "ordering": ("heapq", "sorted", "none", "reversed"),
            "fail": ("soft", "hard", "textbook"),
            "deepening": ("seed", "ignores_time", "ignores_decided"),
        }
        for name, allowed in choices.items():
            if getattr(self, name) not in allowed:
                raise ValueError(f"{name} must be one of {allowed}, not {getattr(self, name)!r}")
        if self.order_depth not in (1, 2):
            raise ValueError(f"order_depth must be 1 or 2, not {self.order_depth!r}")


SEED = Variant()

# Correct ways of writing the lab: every one must get full marks.
ACCEPTED: dict[str, Variant] = {
    "seed": SEED,
    "sorted": Variant(ordering="sorted"),
    "fail_hard": Variant(fail="hard"),
    "sorted_fail_hard": Variant(ordering="sorted", fail="hard"),
    # the seed's text rather than its code: order by the previous round's values
    "previous_round_order": Variant(order_depth=2),
    # fail-soft from -inf (the contract accepts fail-soft; the seed starts at alpha)
    "textbook_fail_soft": Variant(fail="textbook"),
}

# Classic bugs: name -> (variant, one-line hint for the student).
BUGS: dict[str, tuple[Variant, str]] = {
    "flags_swapped": (
        Variant(flags="swapped"),
        "store_cache swaps the bounds: a value <= alpha is an upper bound ('≤'), a value >= beta a lower bound ('≥')",
    ),
    "always_exact": (
        Variant(flags="always_exact"),
        "store_cache stores '=' for every value, but a value outside the window is only a bound",
    ),
    "key_without_limit": (
        Variant(key_with_limit=False),
        "the cache is keyed by the state alone: a value searched to one depth is reused for another",
    ),
    "no_cache": (Variant(use_cache=False), "evaluate never stores or reads the cache"),
    "no_ordering": (
        Variant(ordering="none"),
        "successors are searched in next_states order, not best first by their cached values",
    ),
    "reversed_ordering": (
        Variant(ordering="reversed"),
        "move ordering sorts the wrong way: maxValue must try the highest cached value first, minValue the lowest",
    ),
    "heuristic_on_finished": (
        Variant(finished_first=False),
        "at limit 0 the heuristic is returned before checking finished(State): "
        "a finished game must return utility(State)",
    ),
    "no_singular_extension": (
        Variant(singular_extension=False),
        "a state with a single successor must pass it the same limit (the singular-move extension)",
    ),
    "deepening_ignores_time": (
        Variant(deepening="ignores_time"),
        "pd_evaluate keeps deepening after the time limit has passed",
    ),
    "deepening_ignores_decided": (
        Variant(deepening="ignores_decided"),
        "pd_evaluate keeps deepening after the value is decided (-1 or 1)",
    ),
}


class Choice(NamedTuple):
    """What `best_move` found: the value at the reached depth, the move chosen
    (the first optimal successor in `next_states` order), every optimal
    successor, and the depth reached."""

    value: float
    state: tuple
    optimal: tuple
    limit: int


@dataclass
class SeedSearch:
    """The seed's search over one cache, with counters (module docstring).

    `game` is a module (or namespace) with `gPlayers`, `next_states`,
    `finished`, `utility` and `heuristic` (default: Connect Four). The cache
    and the counters persist between calls (a warm cache) until `reset()`.

    Counters: `next_states_calls` (every call, `best_move`'s own included),
    `expanded` (the states passed to `next_states`, in call order),
    `deepening` (the `(limit, value)` of each `evaluate` that `pd_evaluate`
    made, in order) and `stopped_by` (why the last `pd_evaluate` stopped:
    `'decided'`, `'time'` or `'max_limit'`).
    """

    game: Any = connect4
    variant: Variant = SEED
    clock: Callable[[], float] = time.perf_counter
    cache: dict = field(default_factory=dict)
    next_states_calls: int = 0
    expanded: list = field(default_factory=list)
    deepening: list = field(default_factory=list)
    stopped_by: str | None = None

    def reset(self) -> None:
        """Empty the cache and zero the counters (a cold start)."""
        self.cache = {}
        self.next_states_calls = 0
        self.expanded = []
        self.deepening = []
        self.stopped_by = None

    # -- the game, counted -------------------------------------------------

    def next_states(self, State: tuple, player: Any) -> list:
        self.next_states_calls += 1
        self.expanded.append(State)
        return self.game.next_states(State, player)

    # -- the cache -----------------------------------------------------------

    def _key(self, State: tuple, limit: int) -> Any:
        return (State, limit) if self.variant.key_with_limit else State

    def store_cache(self, State: tuple, limit: int, alpha: float, beta: float, value: float) -> None:
        """Store `value`, found on the window `(alpha, beta)`, with its flag."""
        if not self.variant.use_cache:
            return
        if value <= alpha:
            flag = UPPER
        elif value < beta:
            flag = EXACT
        else:
            flag = LOWER
        if self.variant.flags == "swapped":
            flag = {UPPER: LOWER, EXACT: EXACT, LOWER: UPPER}[flag]
        elif self.variant.flags == "always_exact":
            flag = EXACT
        self.cache[self._key(State, limit)] = (flag, value)

    def value_cache(self, State: tuple, limit: int) -> float:
        """The cached value of `State` at `limit`, whatever its flag; 0 if none."""
        flag, value = self.cache.get(self._key(State, limit), (EXACT, 0))
        return value

    def evaluate(self, State: tuple, limit: int, f: Callable, alpha: float = -1, beta: float = 1) -> float:
        """The seed's memoised evaluation (module docstring)."""
        key = self._key(State, limit)
        if not self.variant.use_cache or key not in self.cache:
            value = f(State, limit, alpha, beta)
            self.store_cache(State, limit, alpha, beta, value)
            return value
        flag, v = self.cache[key]
        if flag == EXACT:
            return v
        if flag == UPPER:
            if v <= alpha:
                return v
            low, high = (alpha, v) if v < beta else (alpha, beta)
        else:  # LOWER
            if beta <= v:
                return v
            low, high = (v, beta) if alpha < v else (alpha, beta)
        w = f(State, limit, low, high)
        self.store_cache(State, limit, low, high, w)
        return w

    # -- the search ----------------------------------------------------------

    def maxValue(self, State: tuple, limit: int, alpha: float = -1, beta: float = 1) -> float:
        return self._value(State, limit, alpha, beta, True)

    def minValue(self, State: tuple, limit: int, alpha: float = -1, beta: float = 1) -> float:
        return self._value(State, limit, alpha, beta, False)

    def _value(self, State: tuple, limit: int, alpha: float, beta: float, maximizing: bool) -> float:
        game, variant = self.game, self.variant
        hard = variant.fail == "hard"
        if variant.finished_first:
            if game.finished(State):
                return _clamp(game.utility(State), alpha, beta) if hard else game.utility(State)
            if limit == 0:
                return _clamp(game.heuristic(State), alpha, beta) if hard else game.heuristic(State)
        else:
            if limit == 0:
                return _clamp(game.heuristic(State), alpha, beta) if hard else game.heuristic(State)
            if game.finished(State):
                return _clamp(game.utility(State), alpha, beta) if hard else game.utility(State)
        player = game.gPlayers[0] if maximizing else game.gPlayers[1]
        reply = self.minValue if maximizing else self.maxValue
        NextStates = self.next_states(State, player)
        if len(NextStates) == 1 and variant.singular_extension:
            return self.evaluate(NextStates[0], limit, reply, alpha, beta)
        if variant.fail == "textbook":
            return self._textbook_value(State, NextStates, limit, alpha, beta, maximizing)
        value = alpha if maximizing else beta
        for ns in self._ordered(NextStates, limit - variant.order_depth, maximizing):
            if maximizing:
                value = max(value, self.evaluate(ns, limit - 1, reply, value, beta))
                if value >= beta:
                    return beta if hard else value
            else:
                value = min(value, self.evaluate(ns, limit - 1, reply, alpha, value))
                if value <= alpha:
                    return alpha if hard else value
        return value

    def _textbook_value(
        self, State: tuple, NextStates: list, limit: int, alpha: float, beta: float, maximizing: bool
    ) -> float:
        """The loop over the successors as textbooks write fail-soft alpha-beta: the best
        value starts at -inf (+inf), the window narrows to it only where it is inside."""
        reply = self.minValue if maximizing else self.maxValue
        best = -math.inf if maximizing else math.inf
        for ns in self._ordered(NextStates, limit - self.variant.order_depth, maximizing):
            if maximizing:
                best = max(best, self.evaluate(ns, limit - 1, reply, max(alpha, best), beta))
                if best >= beta:
                    return best
            else:
                best = min(best, self.evaluate(ns, limit - 1, reply, alpha, min(beta, best)))
                if best <= alpha:
                    return best
        return best

    def _ordered(self, NextStates: list, limit: int, maximizing: bool) -> list:
        """The successors in the order the variant searches them, by their
        cached values at `limit`."""
        ordering = self.variant.ordering
        if ordering == "none":
            return NextStates
        # the priority heapq pops first: the best for the player to move
        sign = -1 if maximizing else 1
        if ordering == "reversed":
            sign = -sign
        if ordering == "sorted":
            return sorted(NextStates, key=lambda ns: sign * self.value_cache(ns, limit))
        Moves: list = []
        for ns in NextStates:
            heapq.heappush(Moves, (sign * self.value_cache(ns, limit), ns))
        return [heapq.heappop(Moves)[1] for _ in range(len(Moves))]

    # -- deepening and the move --------------------------------------------

    def pd_evaluate(
        self, State: tuple, time_limit: float, f: Callable, *, max_limit: int | None = None
    ) -> tuple[float, int]:
        """Deepen from limit 0 up (module docstring) -> (value, limit).

        `max_limit` (not in the student API) stops after that limit whatever
        the variant, so that a search that would never stop can be replayed.
        """
        variant = self.variant
        self.deepening = []
        start = self.clock()
        limit = 0
        while True:
            value = self.evaluate(State, limit, f)
            self.deepening.append((limit, value))
            time_up = self.clock() - start > time_limit
            decided = value in (-1, 1)
            if decided and variant.deepening != "ignores_decided":
                self.stopped_by = "decided"
                return value, limit
            if time_up and variant.deepening != "ignores_time":
                self.stopped_by = "time"
                return value, limit
            if max_limit is not None and limit >= max_limit:
                self.stopped_by = "max_limit"
                return value, limit
            limit += 1

    def best_move(self, State: tuple, time_limit: float, *, max_limit: int | None = None) -> Choice:
        """The seed's `best_move` for `gPlayers[0]` to move, made deterministic
        (module docstring)."""
        NextStates = self.next_states(State, self.game.gPlayers[0])
        value, limit = self.pd_evaluate(State, time_limit, self.maxValue, max_limit=max_limit)
        below = max(limit - 1, 0)
        values = [self.evaluate(ns, below, self.minValue) for ns in NextStates]
        best = max(values)
        optimal = tuple(ns for ns, v in zip(NextStates, values) if v == best)
        return Choice(value, optimal[0], optimal, limit)


def _clamp(value: float, alpha: float, beta: float) -> float:
    return min(max(value, alpha), beta)


# -- exact values ----------------------------------------------------------------


def depth_limited_value(
    State: tuple, limit: int, maximizing: bool | None = None, *, game: Any = connect4, memo: dict | None = None
) -> float:
    """The exact value the seed's search approximates: minimax to `limit` with
    the seed's leaves and its singular-move extension (`utility` on a finished
    state, `heuristic` at limit 0, the same `limit` for a single successor,
    `limit - 1` otherwise).

    `maximizing` says whether `gPlayers[0]` is to move; None asks
    `game.to_move`. Computed by a fail-soft alpha-beta that keeps, per
    `(State, limit, maximizing)`, the bounds `(low, high)` it has proved
    (`memo`, which may be shared between calls on the same game), so that
    checking every entry of a large cache stays cheap; the value is the plain
    minimax value all the same (tests compare the two).
    """
    if maximizing is None:
        maximizing = game.to_move(State) == game.gPlayers[0]
    if memo is None:
        memo = {}
    return _bounded_value(State, limit, maximizing, -_INF, _INF, game, memo)


_INF = float("inf")


def _bounded_value(S: tuple, limit: int, maxing: bool, alpha: float, beta: float, game: Any, memo: dict) -> float:
    """Fail-soft alpha-beta: a result `v <= alpha` is an upper bound of the
    value, `v >= beta` a lower bound, anything between is exact."""
    key = (S, limit, maxing)
    low, high = memo.get(key, (-_INF, _INF))
    if low == high or low >= beta:
        return low
    if high <= alpha:
        return high
    alpha, beta = max(alpha, low), min(beta, high)
    if game.finished(S):
        value = game.utility(S)
    elif limit == 0:
        value = game.heuristic(S)
    else:
        successors = game.next_states(S, game.gPlayers[0 if maxing else 1])
        if len(successors) == 1:
            value = _bounded_value(successors[0], limit, not maxing, alpha, beta, game, memo)
        elif maxing:
            value = -_INF
            for s in successors:
                value = max(value, _bounded_value(s, limit - 1, False, max(alpha, value), beta, game, memo))
                if value >= beta:
                    break
        else:
            value = _INF
            for s in successors:
                value = min(value, _bounded_value(s, limit - 1, True, alpha, min(beta, value), game, memo))
                if value <= alpha:
                    break
    if value <= alpha:
        high = value
    elif value >= beta:
        low = value
    else:
        low = high = value
    memo[key] = (low, high)
    return value


def optimal_successors(State: tuple, limit: int, *, game: Any = connect4, memo: dict | None = None) -> list:
    """The successors (in `next_states` order) of `State`, for the player to
    move, whose depth-limited value at `max(limit - 1, 0)` is the best for
    that player: the moves `best_move` may return after deepening to `limit`."""
    maximizing = game.to_move(State) == game.gPlayers[0]
    player = game.gPlayers[0 if maximizing else 1]
    memo = {} if memo is None else memo
    successors = game.next_states(State, player)
    values = [depth_limited_value(s, max(limit - 1, 0), not maximizing, game=game, memo=memo) for s in successors]
    best = max(values) if maximizing else min(values)
    return [s for s, v in zip(successors, values) if v == best]


def deepening_values(
    State: tuple, max_limit: int, *, game: Any = connect4, memo: dict | None = None
) -> list[tuple[int, float]]:
    """`(limit, value)` for limits 0, 1, ... up to `max_limit`, stopping after
    the first decided value (-1 or 1): what a correct `pd_evaluate` computes
    when the time is not up first."""
    memo = {} if memo is None else memo
    steps = []
    for limit in range(max_limit + 1):
        value = depth_limited_value(State, limit, game=game, memo=memo)
        steps.append((limit, value))
        if value in (-1, 1):
            break
    return steps


def next_states_counts(
    State: tuple,
    variants: dict[str, Variant],
    *,
    limit: int | None = None,
    max_limit: int | None = None,
    game: Any = connect4,
) -> dict[str, int]:
    """`next_states` calls of each variant on a cold cache, with `f` for the
    player to move: `evaluate(State, limit, f)` when `limit` is given, else
    `pd_evaluate` without a time limit, stopped at `max_limit` (default: the
    number of empty cells). For picking `nodes` cases on which a bug's count
    differs from every accepted variant's (with the seed's ordering, which
    mostly reads the default 0, `no_ordering` and `sorted` often agree)."""
    counts = {}
    for name, variant in variants.items():
        search = SeedSearch(game=game, variant=variant)
        f = search.maxValue if game.to_move(State) == game.gPlayers[0] else search.minValue
        if limit is not None:
            search.evaluate(State, limit, f)
        else:
            empty = sum(row.count(connect4.EMPTY) for row in State)
            search.pd_evaluate(State, _INF, f, max_limit=empty if max_limit is None else max_limit)
        counts[name] = search.next_states_calls
    return counts


def entry_is_sound(flag: str, value: float, true_value: float) -> bool:
    """Whether a cache entry `(flag, value)` holds for a state whose
    depth-limited value is `true_value` (any accepted spelling of the flag)."""
    canonical = FLAG_SPELLINGS.get(flag)
    if canonical == EXACT:
        return value == true_value
    if canonical == UPPER:
        return true_value <= value
    if canonical == LOWER:
        return true_value >= value
    return False


def entry_holds(
    State: tuple, limit: int, flag: str, value: float, *, game: Any = connect4, memo: dict | None = None
) -> bool:
    """`entry_is_sound(flag, value, depth_limited_value(State, limit))`, proved with one
    or two null-window searches instead of the exact value: "the value is at most
    `value`" needs only a search with the window (value, next float up), which cuts off
    far more. Judging a cache of 18,000 entries this way costs a fraction of the exact
    values. `memo` holds proven bounds and may be shared with depth_limited_value."""
    canonical = FLAG_SPELLINGS.get(flag)
    if canonical is None:
        return False
    maximizing = game.to_move(State) == game.gPlayers[0]
    memo = {} if memo is None else memo
    value = float(value)
    if value != value:  # NaN holds no bound
        return False
    above = math.nextafter(value, _INF)  # no float lies between value and these two
    below = math.nextafter(value, -_INF)
    if canonical in (EXACT, UPPER) and _bounded_value(State, limit, maximizing, value, above, game, memo) > value:
        return False  # the value is above `value`
    return not (
        canonical in (EXACT, LOWER) and _bounded_value(State, limit, maximizing, below, value, game, memo) < value
    )  # else the value is below `value`


def unsound_entries(cache: dict, *, game: Any = connect4, memo: dict | None = None) -> list:
    """The entries of a seed-style cache (keys `(State, limit)`) that do not
    hold: `(State, limit, flag, value, true_value)` in the cache's order.
    A key that is not a `(State, limit)` pair is reported with `limit` None and
    `true_value` None."""
    memo = {} if memo is None else memo
    wrong: list[tuple] = []
    for key, (flag, value) in cache.items():
        if not (isinstance(key, tuple) and len(key) == 2 and isinstance(key[1], int) and isinstance(key[0], tuple)):
            wrong.append((key, None, flag, value, None))
            continue
        State, limit = key
        true_value = depth_limited_value(State, limit, game=game, memo=memo)
        if not entry_is_sound(flag, value, true_value):
            wrong.append((State, limit, flag, value, true_value))
    return wrong


# -- game-theoretic results and the `solved` positions --------------------------

SOLVED_CRITERION = (
    "Positions of Pons' Test_L3_R1, in file order. Decided ones: the seed's pd_evaluate "
    "(SeedSearch on a cold cache, f = maxValue when X is to move, else minValue, no time "
    "limit) stops by itself on the game-theoretic result (-1 or 1 for X, as the solver "
    "says) at a limit of at least {min_limit} after at most {max_calls} next_states calls; "
    "the first {per_kind} of each kind (X or O to move, X wins or loses). Draws: the "
    "first {draws} with at least {min_empty} empty cells whose exact search "
    "(evaluate at limit = empty cells, cold cache) makes at most {max_calls} next_states "
    "calls, so that pd_evaluate with a generous time limit gets past that depth and "
    "returns 0 (it never stops by itself on a draw)."
)
SOLVED_PARAMS = {"min_limit": 5, "max_calls": 3000, "per_kind": 3, "draws": 3, "min_empty": 6}


def pick_solved_positions(**params: int) -> dict:
    """Pick the `solved` check's positions from Test_L3_R1 (`SOLVED_CRITERION`,
    with `SOLVED_PARAMS` updated by `params`) -> the content of
    `reference/data/connect4/solved_positions.json`. Deterministic (counts,
    not times); takes about a second."""
    from reference.connect4_solver import load_test_set

    settings = {**SOLVED_PARAMS, **params}
    picked: dict[tuple, list] = {}
    draws: list = []
    for moves, score in load_test_set("Test_L3_R1"):
        State = connect4.from_moves(moves)
        mover = connect4.to_move(State)
        empty = connect4.ROWS * connect4.COLS - len(moves)
        if score == 0:
            if len(draws) >= settings["draws"] or empty < settings["min_empty"]:
                continue
            search = SeedSearch()
            f = search.maxValue if mover == connect4.gPlayers[0] else search.minValue
            value = search.evaluate(State, empty, f)
            if value == 0 and search.next_states_calls <= settings["max_calls"]:
                draws.append(
                    {
                        "moves": moves,
                        "to_move": mover,
                        "result": 0,
                        "limit": empty,
                        "next_states_calls": search.next_states_calls,
                    }
                )
            continue
        result = (1 if score > 0 else -1) * (1 if mover == connect4.gPlayers[0] else -1)
        kind = (mover, result)
        if len(picked.setdefault(kind, [])) >= settings["per_kind"]:
            continue
        value, limit, search = solve_with_seed(State, float("inf"), max_limit=empty)
        if (
            search.stopped_by == "decided"
            and value == result
            and limit >= settings["min_limit"]
            and search.next_states_calls <= settings["max_calls"]
        ):
            picked[kind].append(
                {
                    "moves": moves,
                    "to_move": mover,
                    "result": result,
                    "limit": limit,
                    "next_states_calls": search.next_states_calls,
                }
            )
    decided = [entry for kind in sorted(picked) for entry in picked[kind]]
    return {
        "source": "Pascal Pons, 'Solving Connect 4', part 2, test set Test_L3_R1 "
        "(http://blog.gamesolver.org/solving-connect-four/02-test-protocol/)",
        "criterion": SOLVED_CRITERION.format(**settings),
        "fields": "moves: Pons' format; to_move: X or O; result: game-theoretic result for X; "
        "limit: the depth where the seed's pd_evaluate decides (draws: the exact "
        "depth, the number of empty cells); next_states_calls: what the seed's "
        "search made to get there on a cold cache",
        "positions": decided + draws,
    }


def game_result(State: tuple) -> int:
    """The game-theoretic result for the maximiser 'X': 1, 0 or -1 (via the
    bitboard solver)."""
    from reference.connect4_solver import game_result as solve_result

    return solve_result(State)


def load_solved_positions() -> list[dict]:
    """The `solved` check's positions (`reference/data/connect4/solved_positions.json`):
    dicts with `moves`, `to_move`, `result` (for 'X') and what the seed's
    search needed: `limit`, `next_states_calls`."""
    text = (resources.files("reference") / "data" / "connect4" / "solved_positions.json").read_text(encoding="utf-8")
    return json.loads(text)["positions"]


def solve_with_seed(
    State: tuple,
    time_limit: float,
    *,
    game: ModuleType = connect4,
    variant: Variant = SEED,
    max_limit: int | None = None,
) -> tuple[float, int, SeedSearch]:
    """`pd_evaluate` on a cold cache with the `f` of the player to move ->
    (value, limit, the search with its counters)."""
    search = SeedSearch(game=game, variant=variant)
    maximizing = game.to_move(State) == game.gPlayers[0]
    f = search.maxValue if maximizing else search.minValue
    value, limit = search.pd_evaluate(State, time_limit, f, max_limit=max_limit)
    return value, limit, search


if __name__ == "__main__":
    # python -m reference.connect4_search > reference/data/connect4/solved_positions.json
    print(json.dumps(pick_solved_positions(), indent=1, ensure_ascii=False))
