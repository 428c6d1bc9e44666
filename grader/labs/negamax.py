"""The `negamax` lab: `value` / `alphaBeta` / `best_move` on a game interface (DESIGN.md).

The observer builds the case's game in the student process (the game module's source is
shipped with the probe), sets the game globals, and reports what each call returned, the
student's `num_value_call` afterwards and the states `next_states` was called on. This
module plans those calls and judges them against `reference.negamax`.

Counts are compared exactly with the course's search. The accepted variants (fail-hard,
`val` starting from -1 or -inf instead of alpha) visit exactly the same states for every
window with alpha < beta, and only such windows are measured: `value(state, player)` with
its default window (-1, 1), or a window around [-1, 1]. With alpha == beta they may differ,
so those windows appear only in the `bounds` check, which judges results, not counts.
"""
from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from math import inf
from typing import Any

from reference.games import GAMES, load_game
from reference.negamax import Game, alphabeta_value, optimal_successors, true_value
from reference.random_trees import random_tree

from ..checks import Verdict
from ..checks.bounds import BoundProbe, bound_requirement, meets_bound
from ..checks.expansions import first_divergence
from ..checks.show import describe_error, is_number, show
from ..checks.value import check_value
from ..sandbox.session import ProbeSetup
from ..spec import Spec
from ..spec.yaml_lines import LineDict
from .base import CasePlan, Judgement, Lab
from .casefields import read_header, require

POSITION_KINDS = ("value", "nodes", "choice")
POSITION_FIELDS = {"game", "params", "state", "player", "window"}
BOUNDS_FIELDS = {"game", "params", "positions"}
# Windows with alpha < beta, as in the tree lab: with alpha == beta the textbook fail-soft
# loop (raise alpha, cut on alpha >= beta) stops after one successor, and the contract
# accepts fail-soft submissions.
BOUND_WINDOWS = [(a, b) for a in (-1, 0, 1) for b in (-1, 0, 1) if a < b] + [(-inf, inf)]
SHOWN_FAILURES = 5
RANDOM_SETTINGS: dict[str, Any] = {
    "games": ["tictactoe", "nim", "tree"],  # cycled through, one game per random case
    "tictactoe_moves": [2, 6],              # random moves played from the start
    "nim_heaps": [2, 3],                    # number of heaps
    "nim_size": [1, 3],                     # objects per heap
    "tree_branching": [1, 3],
    "tree_depth": [2, 5],
    "tree_tie_rate": 0.3,
}
OUTCOMES = {1: "can force a win", 0: "can force a draw at best", -1: "loses against perfect play"}


def _game_modules() -> tuple[tuple[str, str], ...]:
    return tuple((f"_abgrade_game_{name}", load_game(name).source) for name in GAMES)


SIGN_HINTS = {  # sign errors, recognised by replaying the course's search with each one
    "value_not_negated": ("a sign error: the value of each successor is not negated. A successor's value is from "
                          "the other player's side, so its sign must flip: "
                          "val = max(val, -value(ns, other(player), -beta, -alpha))."),
    "utility_negated": ("a sign error: the utility of a finished state is negated. Return utility(State, player) "
                        "as it is (it is already from the point of view of `player`); the minus belongs before "
                        "the recursive value(...)."),
}


class NegamaxLab(Lab):
    name = "negamax"
    bug_hints = SIGN_HINTS
    probe = ProbeSetup("negamax", {"value": 4, "alphaBeta": 4, "best_move": 2}, _game_modules())
    api = {
        "value": "value(State, player, alpha=-1, beta=1)",
        "alphaBeta": "alphaBeta(State, player, alpha, beta)",
        "best_move": "best_move(State, player)",
    }

    def fixed_plans(self, spec: Spec) -> list[CasePlan]:
        return [plan for case in _fixed_cases(spec) for plan in case.plans()]

    def random_plans(self, spec: Spec, seed: int) -> list[CasePlan]:
        return [_random_plan(index + 1, position) for index, position in enumerate(random_positions(spec, seed))]

    def verify(self, spec: Spec) -> list[str]:
        problems = [problem for case in _fixed_cases(spec) for problem in case.verify(spec.path)]
        if spec.random:
            random_positions(spec, 0)  # the generator settings must work
        return problems


# --- positions and how they are written in feedback -----------------------------------

@dataclass(frozen=True)
class Position:
    """A state of a game and the player to move: what every call is about."""

    game: Game
    state: Any
    player: int

    @property
    def text(self) -> str:
        """The state as the student's code receives it (`Start` when it is the start)."""
        return "Start" if self.state == self.game.start else repr(self.state)

    def call(self, function: str, *window: float) -> str:
        return f"{function}({', '.join([self.text, repr(self.player), *map(show, window)])})"

    def drawing(self) -> str:
        return f"The state (player = {self.player}):{_drawn(self.game.describe(self.state))}"

    def request_call(self, function: str, *window: float, trace: bool = False) -> dict:
        return {"function": function, "state": self.game.encode(self.state),
                "args": [self.player, *window], "trace": trace}

    def successors(self) -> list:
        return self.game.next_states(self.state, self.player)


def _drawn(description: str) -> str:
    """A game's description on its own indented lines (tic-tac-toe boards have three)."""
    return "".join(f"\n    {line}" for line in description.splitlines())


def _one_line(game: Game, encoded: Any) -> str:
    """A state the student's search handed to `next_states`, on one line."""
    try:
        return game.describe(game.decode(encoded)).replace("\n", " / ")
    except (ValueError, TypeError):
        text = encoded.get("unencodable") if isinstance(encoded, dict) else None
        return f"{text or show(encoded)} (not a state of the game)"


def _game_line(game: Game) -> str:
    """Which game a failure happened in, when the position alone does not say it."""
    if game.name == "nim":
        return f"\nThe game: Nim, started from heaps {' '.join(map(str, game.start[0]))}."
    if game.name == "tree":
        graph, leaves = game.module.graph, game.module.terminal_nodes
        return f"\nThe game: the tree graph = {graph}, terminal_nodes = {leaves} (leaf values for player 0)."
    return ""


def _request(case_id: str, game: Game, calls: list[dict]) -> dict:
    return {"id": case_id, "game": game.name, "params": game.params, "calls": calls}


NO_ANSWER = {"type": "NoAnswer", "message": "nothing came back for this call (an earlier call ended the process)"}


def _first(calls: list[dict]) -> dict:
    return calls[0] if calls and isinstance(calls[0], dict) else {"error": NO_ANSWER}


def _raised(observed: dict, call: str, position: Position) -> Verdict:
    return Verdict.fail(f"{call} raised {describe_error(observed['error'])}\n{position.drawing()}")


def _with_game(verdict: Verdict, game: Game) -> Verdict:
    return verdict if verdict.passed else Verdict.fail(verdict.message + _game_line(game), verdict.diagnoses)


def _counted(n: int, noun: str) -> str:
    return f"{n:,} {noun}{'' if n == 1 else 's'}"


def _once(compute: Callable[[], frozenset[str]]) -> Callable[[], frozenset[str]]:
    """`compute`, run at most once (value and nodes share one replay)."""
    memo: list = []
    return lambda: memo[0] if memo else (memo.append(compute()) or memo[0])


def _difference(seen: int, expected: int) -> str:
    return f"{abs(seen - expected):,} {'more' if seen > expected else 'fewer'}"


# --- sign errors -------------------------------------------------------------------------



def _signed_search(game: Game, state: Any, player: Any, alpha: float, beta: float, bug: str,
                   start: float | None) -> tuple[float, tuple]:
    """The course's alpha-beta with one sign error (`bug`: a SIGN_HINTS name):
    its result and the states it expands, in order, as the observer encodes them."""
    trace: list = []

    def value(state: Any, player: Any, alpha: float, beta: float) -> float:
        if game.finished(state):
            utility = game.utility(state, player)
            return -utility if bug == "utility_negated" else utility
        val = alpha if start is None else start
        trace.append(game.encode(state))
        for successor in game.next_states(state, player):
            child = value(successor, game.other(player), -beta, -alpha)
            val = max(val, child if bug == "value_not_negated" else -child)
            if val >= beta:
                return val
            alpha = max(val, alpha)
        return val

    return value(state, player, alpha, beta), tuple(trace)


def sign_error(observed: dict, position: Position, window: tuple[float, ...] = ()) -> frozenset[str]:
    """The sign errors (SIGN_HINTS names) whose search expands exactly the states the
    student's did and returns exactly its value on this call. Replayed only when some
    check failed; the pipeline keeps a name only if it explains every case."""
    seen = observed.get("expanded") if isinstance(observed.get("expanded"), list) else []
    expansions = observed.get("expansions") if isinstance(observed.get("expansions"), int) else len(seen)
    if observed.get("error"):
        return frozenset()
    alpha, beta = tuple(window[:2]) if len(window) >= 2 else (-1, 1)  # value's own defaults
    found = set()
    for bug in SIGN_HINTS:
        for start in (None, -inf):
            returned, trace = _signed_search(position.game, position.state, position.player, alpha, beta, bug, start)
            if expansions == len(trace) and tuple(seen) == trace[:len(seen)] and observed.get("returned") == returned:
                found.add(bug)
                break
    return frozenset(found)


# --- judging ----------------------------------------------------------------------------

def judge_value(observed: dict, expected: int, position: Position, call: str,
                sign_bugs: Callable[[], frozenset[str]] | None = None) -> Verdict:
    """`sign_bugs`: worked out only when the value is wrong (see sign_error); named as
    diagnoses, so the hint shows only when the error explains every case."""
    if observed.get("error"):
        return _raised(observed, call, position)
    verdict = check_value(observed.get("returned"), expected, call)
    if verdict.passed:
        return verdict
    meaning = f"Player {position.player} {OUTCOMES.get(expected, 'gets this value')} from here."
    bugs = tuple(sorted(sign_bugs())) if sign_bugs else ()
    return Verdict.fail(f"{verdict.message} {meaning}\n{position.drawing()}", bugs)


@dataclass(frozen=True)
class Counts:
    """What the reference's search did for one measured call of `value`."""

    calls: int
    expansions: int
    trace: tuple


def judge_nodes(observed: dict, expected: Counts, position: Position, call: str,
                sign_bugs: Callable[[], frozenset[str]] | None = None) -> Verdict:
    """`num_value_call` against the reference's count, and the states `next_states` was
    called on against the reference's, each reported on its own. When a sign error reads
    exactly these states (`sign_bugs`), the hint about pruning and order would mislead: it
    is left out, and the sign error is named as a diagnosis instead."""
    if observed.get("error"):
        return _raised(observed, call, position)
    counter_ok, counter_line = _judge_counter(observed.get("counter"), expected.calls, call)
    seen = observed.get("expanded") if isinstance(observed.get("expanded"), list) else []
    expansions = observed.get("expansions") if isinstance(observed.get("expansions"), int) else len(seen)
    divergence = _divergence(position.game, seen, expansions, expected.trace)
    if divergence is None and expansions == expected.expansions:
        states_line = ("next_states was never called, as in the reference." if expansions == 0 else
                       f"next_states was called {_counted(expansions, 'time')}, on the same states in the same "
                       f"order as in the reference.")
        if counter_ok:
            return Verdict.ok(f"{counter_line} {states_line}")
        hint = _count_hint(observed.get("counter"), expected.calls)
        return Verdict.fail("\n".join(line for line in (counter_line, states_line, hint) if line))
    off = f" ({_difference(expansions, expected.expansions)})" if expansions != expected.expansions else ""
    states_line = (f"next_states was called {_counted(expansions, 'time')}; the reference calls it "
                   f"{_counted(expected.expansions, 'time')}{off}.")
    if expansions > expected.expansions:
        hint = ("Your search prunes less than the reference: return as soon as val >= beta, raise alpha to val "
                "after each successor, and pass the window negated and swapped: "
                "value(ns, other(player), -beta, -alpha).")
    else:
        hint = ("Your search skips or reorders states the reference searches: go through next_states(State, player) "
                "in order, cut off only when val >= beta, pass the window negated and swapped: "
                "value(ns, other(player), -beta, -alpha), and return utility(State, player) at a finished state.")
    bugs = tuple(sorted(sign_bugs())) if sign_bugs else ()
    lines = [counter_line, states_line, divergence or "", "" if bugs else hint, position.drawing()]
    return Verdict.fail("\n".join(line for line in lines if line), bugs)


def _count_hint(counter: Any, expected: int) -> str:
    """Why the count is off when the search expanded exactly the reference's states."""
    if not is_number(counter) or counter == 0:
        return ""
    if counter < expected:
        return ("Your search expanded exactly the states the reference expands, so calls of value are missing "
                "from the count: add 1 in value, once per call, and let alphaBeta recurse through value "
                "(never through alphaBeta itself).")
    return ("Your search expanded exactly the states the reference expands, so the extra calls are counted twice "
            "or made on finished states that the reference prunes: count once per call of value, and return as "
            "soon as val >= beta (a successor worth exactly beta must stop the loop too).")


def _judge_counter(counter: Any, expected: int, call: str) -> tuple[bool, str]:
    if not is_number(counter):
        return False, (f"After {call}, num_value_call is {show(counter)}, not a number: value must count "
                       f"its calls in it ({expected:,} here).")
    if counter == expected:
        return True, f"{call} called value {_counted(expected, 'time')}, as expected."
    if counter == 0:
        return False, (f"After {call}, num_value_call is still 0: value never incremented it. The reference's "
                       f"value is called {_counted(expected, 'time')} here. Begin value with "
                       f"`global num_value_call` and `num_value_call += 1`.")
    return False, (f"After {call}, num_value_call is {counter:,}; the reference's value is called "
                   f"{_counted(expected, 'time')} ({_difference(int(counter), expected)}).")


def _divergence(game: Game, seen: list, expansions: int, expected: tuple) -> str | None:
    """Where the student's calls of `next_states` first part from the reference's, or None.
    The observer keeps a prefix of very long traces; then only that prefix is compared."""
    reference = list(expected)
    if expansions > len(seen):
        reference = reference[:len(seen)]
    index = first_divergence(seen, reference)
    if index is None:
        return None
    if index < len(seen) and index < len(reference):
        return (f"First difference at next_states call #{index + 1}: yours was on {_one_line(game, seen[index])}, "
                f"the reference's on {_one_line(game, reference[index])}.")
    if index >= len(seen):
        return (f"Your search stopped after {_counted(len(seen), 'call')} of next_states; the reference goes on "
                f"with {_one_line(game, reference[index])}.")
    return (f"After the reference's last call of next_states, your search went on with "
            f"{_one_line(game, seen[index])}.")


def judge_choice(observed: dict, position: Position, expected: int, optimal: list, call: str) -> Verdict:
    """Any optimal successor passes, with the position's value next to it."""
    if observed.get("error"):
        return _raised(observed, call, position)
    returned, move = observed.get("returned"), observed.get("move")
    if not isinstance(move, dict):
        return Verdict.fail(f"{call} returned {show(returned)}; it must return a pair (value, next_state).\n"
                            f"{position.drawing()}")
    game = position.game
    successors = [game.encode(s) for s in position.successors()]
    problems = []
    if move.get("state") not in successors:
        problems.append(f"Its second item is not one of the {len(successors)} states "
                        f"next_states({position.text}, {position.player}) returns.")
    elif move["state"] not in optimal:
        chosen = game.decode(move["state"])
        worth = -true_value(game, chosen, game.other(position.player))
        best = game.decode(optimal[0])
        more = f" (the first of {len(optimal)} optimal moves)" if len(optimal) > 1 else ""
        problems.append(f"That move is worth {worth} to player {position.player}, but the state is worth "
                        f"{expected}: it is not optimal. Your move leads to:{_drawn(game.describe(chosen))}\n"
                        f"An optimal move{more} leads to:{_drawn(game.describe(best))}")
    if not (is_number(move.get("value")) and move["value"] == expected):
        problems.append(f"Its value is {show(move.get('value'))}, but the state is worth {expected} "
                        f"to player {position.player}.")
    if problems:
        return Verdict.fail(f"{call} returned {show(returned)}.\n" + "\n".join(problems) + f"\n{position.drawing()}")
    return Verdict.ok(f"{call} returned the value {expected} and an optimal move "
                      f"({len(optimal)} of the {len(successors)} moves are optimal).")


def bound_calls(positions: list[Position], values: list[int]) -> list[tuple[dict, BoundProbe, Position]]:
    """`alphaBeta` at each position with every window over {-1, 0, 1} and the full one."""
    return [(position.request_call("alphaBeta", alpha, beta),
             BoundProbe(position.call("alphaBeta", alpha, beta), alpha, beta, value), position)
            for position, value in zip(positions, values) for alpha, beta in BOUND_WINDOWS]


def judge_bounds(probes: list[tuple[BoundProbe, Position]], observed: list[dict]) -> Verdict:
    """Every call against the bound specification; failures are listed with their state."""
    results = []  # (probe, position, returned, what went wrong instead of returning)
    for (probe, position), call in zip(probes, observed):
        error = f"raised {describe_error(call['error'])}" if call.get("error") else None
        results.append((probe, position, call.get("returned"), error))
    if len(observed) < len(probes):
        probe, position = probes[len(observed)]
        results.append((probe, position, None, "got no answer: an earlier call ended the process"))
    failures = [r for r in results if r[3] is not None or not meets_bound(r[2], r[0])]
    if not failures:
        return Verdict.ok(f"all {len(results)} calls of alphaBeta with narrowed windows met the bound specification.")
    lines = [f"{len(failures)} of {len(results)} calls of alphaBeta broke the bound specification "
             f"(v is the true value of the state for the player; alpha <= v <= beta: return exactly v; "
             f"v < alpha: return at most alpha; v > beta: return at least beta)."]
    for probe, position, returned, error in failures[:SHOWN_FAILURES]:
        outcome = error or f"returned {show(returned)}, but {bound_requirement(probe)}"
        lines.append(f"{probe.call} {outcome}.\n{position.drawing()}")
    if len(failures) > SHOWN_FAILURES:
        windows: dict[str, int] = {}
        for probe, *_ in failures:
            key = f"({show(probe.alpha)}, {show(probe.beta)})"
            windows[key] = windows.get(key, 0) + 1
        tally = ", ".join(f"{key} {count}x" for key, count in windows.items())
        lines.append(f"... and {len(failures) - SHOWN_FAILURES} more. Failing calls by window: {tally}.")
    return Verdict.fail("\n".join(lines))


# --- fixed cases ----------------------------------------------------------------------

def _read_game(spec: Spec, raw: LineDict, where: str) -> Game:
    name = require(spec, raw, "game", f"{where}.game", str, f"one of {', '.join(GAMES)}")
    if name not in GAMES:
        raise spec.error(raw, "game", f"{where}.game", f"unknown game {name!r}; expected one of {', '.join(GAMES)}")
    params = raw.get("params", {})
    if not isinstance(params, dict):
        raise spec.error(raw, "params", f"{where}.params", "must be a mapping of the game's settings")
    try:
        return load_game(name, **params)
    except (TypeError, ValueError) as exc:
        raise spec.error(raw, "params", f"{where}.params", f"bad settings for {name}: {exc}") from None


def _read_position(spec: Spec, game: Game, node: LineDict, where: str) -> Position:
    try:
        state = game.decode(node["state"]) if "state" in node else game.start
    except (TypeError, ValueError) as exc:
        raise spec.error(node, "state", f"{where}.state", str(exc)) from None
    player = node.get("player", game.players[0])
    if player not in game.players or isinstance(player, bool):
        raise spec.error(node, "player", f"{where}.player", f"must be one of the players {game.players}")
    return Position(game, state, player)


class PositionCase:
    """Calls at one position: `value` (judged by `value` and `nodes`) and `best_move` (`choice`)."""

    EXPECT = {"value": ("value",), "nodes": ("calls", "expansions"), "choice": ("value", "moves")}
    EXPECT_TYPES = {
        "value": (int, "the true value -1, 0 or 1 for the player"),
        "calls": (int, "the number of calls of value the reference makes"),
        "expansions": (int, "the number of calls of next_states the reference makes"),
        "moves": (list, "the list of optimal successors (encoded states)"),
    }

    def __init__(self, spec: Spec, index: int, raw: LineDict, names: set[str]) -> None:
        self.header = read_header(spec, index, raw, POSITION_KINDS, POSITION_FIELDS, names)
        where, expect = self.header.where, self.header.expect
        self.where, self.expect = where, expect
        self.position = _read_position(spec, _read_game(spec, raw, where), raw, where)
        self.window = self._read_window(spec, raw, where)
        needed = {key for kind in self.header.checks for key in self.EXPECT[kind]}
        for key in expect:
            if key not in needed:
                raise spec.error(expect, key, f"{where}.expect.{key}",
                                 f"not used by this case's checks; expected {', '.join(sorted(needed))}")
        for key in sorted(needed):
            kind, what = self.EXPECT_TYPES[key]
            require(spec, expect, key, f"{where}.expect.{key}", kind, what)
        if "moves" in expect:
            successors = [self.position.game.encode(s) for s in self.position.successors()]
            for number, move in enumerate(expect["moves"]):
                if move not in successors:
                    raise spec.error(expect, "moves", f"{where}.expect.moves[{number}]",
                                     f"{move!r} is not a successor of the case's state")

    @staticmethod
    def _read_window(spec: Spec, raw: LineDict, where: str) -> tuple[float, ...]:
        """A window for the measured `value` call: it must hold all of [-1, 1], so that
        the result is the exact value and every accepted variant makes the same calls."""
        if "window" not in raw:
            return ()
        window = raw["window"]
        if not (isinstance(window, list) and len(window) == 2 and all(is_number(w) for w in window)
                and window[0] <= -1 and window[1] >= 1):
            raise spec.error(raw, "window", f"{where}.window",
                             "must be [alpha, beta] with alpha <= -1 and beta >= 1 (e.g. [-.inf, .inf])")
        return tuple(window)

    def plans(self) -> list[CasePlan]:
        header, position, window = self.header, self.position, self.window
        plans = []
        search_kinds = tuple(k for k in header.checks if k in ("value", "nodes"))
        if search_kinds:
            call_text = position.call("value", *window)
            expect = self.expect

            def judge_search(calls: list[dict]) -> Judgement:
                observed = _first(calls)
                hint = _once(lambda: sign_error(observed, position, window))
                verdicts = {}
                if "value" in search_kinds:
                    verdicts["value"] = judge_value(observed, expect["value"], position, call_text, hint)
                if "nodes" in search_kinds:
                    search = alphabeta_value(position.game, position.state, position.player, *window)
                    counts = Counts(expect["calls"], expect["expansions"], search.trace)
                    verdicts["nodes"] = judge_nodes(observed, counts, position, call_text, hint)
                return Judgement({k: _with_game(v, position.game) for k, v in verdicts.items()}, hint)

            request = _request(f"{header.name}/value", position.game,
                               [position.request_call("value", *window, trace="nodes" in search_kinds)])
            plans.append(CasePlan(header.name, request, search_kinds, judge_search, header.visibility, header.points))
        if "choice" in header.checks:
            value, moves = self.expect["value"], list(self.expect["moves"])

            def judge_move(calls: list[dict]) -> Judgement:
                verdict = judge_choice(_first(calls), position, value, moves, position.call("best_move"))
                return Judgement({"choice": _with_game(verdict, position.game)})

            request = _request(f"{header.name}/best_move", position.game, [position.request_call("best_move")])
            plans.append(CasePlan(header.name, request, ("choice",), judge_move, header.visibility, header.points))
        return plans

    def verify(self, path: str) -> list[str]:
        game, state, player = self.position.game, self.position.state, self.position.player
        actual: dict[str, Any] = {}
        if "value" in self.expect:
            actual["value"] = true_value(game, state, player)
        if "calls" in self.expect:
            search = alphabeta_value(game, state, player, *self.window)
            actual.update(calls=search.calls, expansions=search.next_states_calls)
        if "moves" in self.expect:
            actual["moves"] = [game.encode(s) for s in optimal_successors(game, state, player)]
        return [f"{path}:{self.expect.lines.get(key, self.expect.line)}: {self.where}.expect.{key}: "
                f"stored {self.expect[key]!r}, the reference computes {value!r}"
                for key, value in actual.items() if self.expect[key] != value]


class BoundsCase:
    """`alphaBeta` at many positions of one game, with every window (`bounds`)."""

    def __init__(self, spec: Spec, index: int, raw: LineDict, names: set[str]) -> None:
        self.header = read_header(spec, index, raw, ("bounds",), BOUNDS_FIELDS, names)
        where, expect = self.header.where, self.header.expect
        self.where, self.expect = where, expect
        game = _read_game(spec, raw, where)
        listed = require(spec, raw, "positions", f"{where}.positions", list, "a list of {state, player}")
        if not listed:
            raise spec.error(raw, "positions", f"{where}.positions", "must list at least one position")
        self.positions = []
        for number, node in enumerate(listed):
            if not isinstance(node, dict) or set(node) - {"state", "player"}:
                raise spec.error(listed, number, f"{where}.positions[{number}]", "must be a mapping {state, player}")
            self.positions.append(_read_position(spec, game, node, f"{where}.positions[{number}]"))
        values = require(spec, expect, "values", f"{where}.expect.values", list, "the true value of each position")
        if len(values) != len(self.positions) or not all(v in (-1, 0, 1) for v in values):
            raise spec.error(expect, "values", f"{where}.expect.values",
                             f"must list one value -1, 0 or 1 per position ({len(self.positions)})")
        self.values = list(values)

    def plans(self) -> list[CasePlan]:
        header, game = self.header, self.positions[0].game
        paired = bound_calls(self.positions, self.values)
        probes = [(probe, position) for _, probe, position in paired]

        def judge(calls: list[dict]) -> Judgement:
            return Judgement({"bounds": _with_game(judge_bounds(probes, calls), game)})

        request = _request(header.name, game, [call for call, _, _ in paired])
        return [CasePlan(header.name, request, ("bounds",), judge, header.visibility, header.points)]

    def verify(self, path: str) -> list[str]:
        actual = [true_value(p.game, p.state, p.player) for p in self.positions]
        if actual == self.values:
            return []
        wrong = [i for i, (a, b) in enumerate(zip(actual, self.values)) if a != b]
        return [f"{path}:{self.expect.lines.get('values', self.expect.line)}: {self.where}.expect.values: "
                f"stored {self.values!r}, the reference computes {actual!r} (positions {wrong} differ)"]


def _fixed_cases(spec: Spec) -> list[PositionCase | BoundsCase]:
    names: set[str] = set()
    return [(BoundsCase if "positions" in raw else PositionCase)(spec, index, raw, names)
            for index, raw in enumerate(spec.cases)]


# --- random cases ---------------------------------------------------------------------

def _random_settings(spec: Spec) -> dict[str, Any]:
    assert spec.random is not None
    settings = dict(RANDOM_SETTINGS)
    for key, value in spec.random.params.items():
        if key not in RANDOM_SETTINGS:
            raise spec.error(spec.raw["random"], key, f"random.{key}",
                             f"unknown setting; expected one of {', '.join(RANDOM_SETTINGS)}")
        settings[key] = value
    problems = []
    if not (isinstance(settings["games"], list) and settings["games"] and set(settings["games"]) <= set(GAMES)):
        problems.append(("games", f"must be a non-empty list drawn from {', '.join(GAMES)}"))
    limits = {"tictactoe_moves": (0, 8), "nim_heaps": (1, 6), "nim_size": (1, 6),
              "tree_branching": (1, 6), "tree_depth": (1, 8)}
    for key, (low, high) in limits.items():
        value = settings[key]
        if not (isinstance(value, list) and len(value) == 2 and all(type(v) is int for v in value)
                and low <= value[0] <= value[1] <= high):
            problems.append((key, f"must be a range [low, high] of whole numbers within {low}..{high}"))
    if not (is_number(settings["tree_tie_rate"]) and 0 <= settings["tree_tie_rate"] <= 1):
        problems.append(("tree_tie_rate", "must be a number between 0 and 1"))
    if problems:
        key, problem = problems[0]
        raise spec.error(spec.raw["random"], key, f"random.{key}", problem)
    return settings


def random_positions(spec: Spec, seed: int) -> list[Position]:
    """The hidden positions of a grading run: reproducible from `seed`, never stored."""
    assert spec.random is not None
    settings = _random_settings(spec)
    games = settings["games"]
    return [_random_position(games[i % len(games)], settings, random.Random(seed * 1000 + i))
            for i in range(spec.random.count)]


def _random_position(name: str, settings: dict[str, Any], rng: random.Random) -> Position:
    if name == "tictactoe":
        game = load_game("tictactoe")
        while True:  # a full board needs 9 moves and the range stops at 8, so this ends
            state, player = game.start, game.players[0]
            for _ in range(rng.randint(*settings["tictactoe_moves"])):
                if game.finished(state):
                    break
                state, player = rng.choice(game.next_states(state, player)), game.other(player)
            if not game.finished(state):
                return Position(game, state, player)
    if name == "nim":
        heaps = [rng.randint(*settings["nim_size"]) for _ in range(rng.randint(*settings["nim_heaps"]))]
        player = rng.choice([0, 1])
        return Position(load_game("nim", heaps=heaps), (tuple(heaps), player), player)
    tree = random_tree(rng, branching=tuple(settings["tree_branching"]), depth=tuple(settings["tree_depth"]),
                       values="int", value_range=(-1, 1), tie_rate=settings["tree_tie_rate"])
    graph = {node: list(children) for node, children in tree.children.items()}
    game = load_game("tree", graph=graph, terminal_nodes=dict(tree.values), root=tree.root)
    return Position(game, tree.root, game.players[0])


def _random_plan(number: int, position: Position) -> CasePlan:
    """One hidden position, judged like the fixed cases together: value, counts, best_move
    and the bound specification."""
    name = f"random {number}"
    game = position.game
    calls = [position.request_call("value", trace=True), position.request_call("best_move")]
    value = true_value(game, position.state, position.player)
    paired = bound_calls([position], [value])
    calls += [call for call, _, _ in paired]

    def judge(observed: list[dict]) -> Judgement:
        search = alphabeta_value(game, position.state, position.player)
        optimal = [game.encode(s) for s in optimal_successors(game, position.state, position.player)]
        value_call = position.call("value")
        hint = _once(lambda: sign_error(_first(observed), position))
        verdicts = [
            judge_value(_first(observed), value, position, value_call, hint),
            judge_nodes(_first(observed), Counts(search.calls, search.next_states_calls, search.trace),
                        position, value_call, hint),
            judge_choice(_first(observed[1:]), position, value, optimal, position.call("best_move")),
            judge_bounds([(probe, p) for _, probe, p in paired], observed[2:]),
        ]
        failing = list(dict.fromkeys(v.message for v in verdicts if not v.passed))  # an error fails all alike
        if not failing:
            verdict = Verdict.ok(f"value, num_value_call, next_states calls, best_move and the bound "
                                 f"specification all right at {position.text} ({_game_name(game)}).")
        else:
            bugs = tuple(sorted({d for v in verdicts for d in v.diagnoses}))
            verdict = Verdict.fail("\n".join(failing) + (_game_line(game) or f"\nThe game: {_game_name(game)}."),
                                   bugs)
        return Judgement({"random": verdict}, hint)

    return CasePlan(name, _request(name, game, calls), ("random",), judge)


def _game_name(game: Game) -> str:
    return {"tictactoe": "tic-tac-toe", "nim": "Nim", "tree": "a game tree"}.get(game.name, game.name)
