"""The negamax lab's spec cases (a position; alphaBeta at many positions) and the positions they are about."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from reference.games import GAMES, load_game
from reference.negamax import Game, alphabeta_value, optimal_successors, true_value

from ...checks.bounds import BoundProbe
from ...checks.show import is_number, show
from ...spec import Spec
from ...spec.yaml_lines import LineDict
from ..kit.fields import expected_keys, read_header, require
from ..kit.messages import mismatch
from ..kit.observations import CallObservation, CallRequest
from .describe import drawn

POSITION_KINDS = ("value", "nodes", "choice")
TRACE_LIMIT = 100_000  # encoded states a traced call's record keeps; the count is always exact

POSITION_FIELDS = {"game", "params", "state", "player", "window"}


BOUNDS_FIELDS = {"game", "params", "positions"}


@dataclass(frozen=True)
class Position:
    """A state of a game and the player to move: what every call is about; `strict`: the
    course cuts off only when val > beta (the spec's conventions), which the reference's
    searches there follow."""

    game: Game
    state: Any
    player: int
    strict: bool = False

    @property
    def text(self) -> str:
        """The state as the student's code receives it (`Start` when it is the start)."""
        return "Start" if self.state == self.game.start else repr(self.state)

    def call(self, function: str, *window: float) -> str:
        return f"{function}({', '.join([self.text, repr(self.player), *map(show, window)])})"

    def drawing(self) -> str:
        return f"The state (player = {self.player}):{drawn(self.game.describe(self.state))}"

    def request_call(self, function: str, *window: float, trace: bool = False) -> StateRequest:
        """`trace`: the observer keeps the states of the first TRACE_LIMIT calls of next_states
        (told the number, so that the grader knows how many a genuine record holds)."""
        return {
            "function": function,
            "state": self.game.encode(self.state),
            "args": [self.player, *window],
            "trace": TRACE_LIMIT if trace else 0,
        }

    def successors(self) -> list:
        return self.game.next_states(self.state, self.player)


@dataclass(frozen=True)
class Counts:
    """What the reference's search did for one measured call of `value`."""

    calls: int
    expansions: int
    trace: tuple


def read_game(spec: Spec, raw: LineDict, where: str) -> Game:
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


def read_position(spec: Spec, game: Game, node: Mapping[str, Any], where: str) -> Position:
    try:
        state = game.decode(node["state"]) if "state" in node else game.start
    except (TypeError, ValueError) as exc:
        raise spec.error(node, "state", f"{where}.state", str(exc)) from None
    player = node.get("player", game.players[0])
    if player not in game.players or isinstance(player, bool):
        raise spec.error(node, "player", f"{where}.player", f"must be one of the players {game.players}")
    return Position(game, state, player, spec.conventions.strict)


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
        self.position = read_position(spec, read_game(spec, raw, where), raw, where)
        self.window = self._read_window(spec, raw, where)
        needed = expected_keys(spec, self.header, self.EXPECT)
        for key in sorted(needed):
            kind, what = self.EXPECT_TYPES[key]
            require(spec, expect, key, f"{where}.expect.{key}", kind, what)
        if "moves" in expect:
            successors = [self.position.game.encode(s) for s in self.position.successors()]
            for number, move in enumerate(expect["moves"]):
                if move not in successors:
                    raise spec.error(
                        expect,
                        "moves",
                        f"{where}.expect.moves[{number}]",
                        f"{move!r} is not a successor of the case's state",
                    )

    @staticmethod
    def _read_window(spec: Spec, raw: LineDict, where: str) -> tuple[float, ...]:
        """A window for the measured `value` call: it must hold all of [-1, 1], so that
        the result is the exact value and every accepted variant makes the same calls."""
        if "window" not in raw:
            return ()
        window = raw["window"]
        if not (
            isinstance(window, list)
            and len(window) == 2
            and all(is_number(w) for w in window)
            and window[0] <= -1
            and window[1] >= 1
        ):
            raise spec.error(
                raw,
                "window",
                f"{where}.window",
                "must be [alpha, beta] with alpha <= -1 and beta >= 1 (e.g. [-.inf, .inf])",
            )
        return tuple(window)

    def verify(self, path: str) -> list[str]:
        game, state, player = self.position.game, self.position.state, self.position.player
        actual: dict[str, Any] = {}
        if "value" in self.expect:
            actual["value"] = true_value(game, state, player)
        if "calls" in self.expect:
            search = alphabeta_value(game, state, player, *self.window, strict=self.position.strict)
            actual.update(calls=search.calls, expansions=search.next_states_calls)
        if "moves" in self.expect:
            actual["moves"] = [game.encode(s) for s in optimal_successors(game, state, player)]
        return [
            mismatch(
                path,
                self.expect.lines.get(key, self.expect.line),
                f"{self.where}.expect.{key}",
                self.expect[key],
                value,
            )
            for key, value in actual.items()
            if self.expect[key] != value
        ]


class BoundsCase:
    """`alphaBeta` at many positions of one game, with every window (`bounds`)."""

    def __init__(self, spec: Spec, index: int, raw: LineDict, names: set[str]) -> None:
        self.header = read_header(spec, index, raw, ("bounds",), BOUNDS_FIELDS, names)
        where, expect = self.header.where, self.header.expect
        self.where, self.expect = where, expect
        game = read_game(spec, raw, where)
        listed = require(spec, raw, "positions", f"{where}.positions", list, "a list of {state, player}")
        if not listed:
            raise spec.error(raw, "positions", f"{where}.positions", "must list at least one position")
        self.positions = []
        for number, node in enumerate(listed):
            if not isinstance(node, dict) or set(node) - {"state", "player"}:
                raise spec.error(listed, number, f"{where}.positions[{number}]", "must be a mapping {state, player}")
            self.positions.append(read_position(spec, game, node, f"{where}.positions[{number}]"))
        values = require(spec, expect, "values", f"{where}.expect.values", list, "the true value of each position")
        if len(values) != len(self.positions) or not all(v in (-1, 0, 1) for v in values):
            raise spec.error(
                expect,
                "values",
                f"{where}.expect.values",
                f"must list one value -1, 0 or 1 per position ({len(self.positions)})",
            )
        self.values = list(values)

    def verify(self, path: str) -> list[str]:
        actual = [true_value(p.game, p.state, p.player) for p in self.positions]
        if actual == self.values:
            return []
        wrong = [i for i, (a, b) in enumerate(zip(actual, self.values)) if a != b]
        return [
            mismatch(
                path,
                self.expect.lines.get("values", self.expect.line),
                f"{self.where}.expect.values",
                self.values,
                actual,
                f" (positions {wrong} differ)",
            )
        ]


def read_cases(spec: Spec) -> list[PositionCase | BoundsCase]:
    names: set[str] = set()
    return [
        (BoundsCase if "positions" in raw else PositionCase)(spec, index, raw, names)
        for index, raw in enumerate(spec.cases)
    ]


# --- what each request is judged against (the judges' second argument) ----------------------


@dataclass(frozen=True)
class SearchCase:
    """`value` at `position` with `window` (traced when `nodes` is judged), in `kinds`:
    the true `value`, and the reference's counts of value and next_states calls."""

    position: Position
    window: tuple[float, ...]
    kinds: tuple[str, ...]
    value: int
    calls: int = 0
    expansions: int = 0


@dataclass(frozen=True)
class MoveCase:
    """`best_move` at `position`: any of `moves` (encoded states), with the true `value`."""

    position: Position
    value: int
    moves: tuple[Any, ...]


@dataclass(frozen=True)
class WindowsCase:
    """`alphaBeta` calls with narrowed windows, each with its probe and its position."""

    game: Game
    probes: tuple[tuple[BoundProbe, Position], ...]


@dataclass(frozen=True)
class RandomCase:
    """A hidden position: value (traced), best_move, then the windows, judged at once."""

    position: Position
    value: int
    windows: WindowsCase


# --- what the observer is asked and sends back (observer.py) --------------------------------


class StateRequest(CallRequest, total=False):
    """A call of value / alphaBeta / best_move on an encoded `state`."""

    state: Any


class StateCall(CallObservation, total=False):
    """What the observer sends for one call: besides `returned`, `num_value_call` after it
    (`counter`), the calls of next_states (`expansions`) and, traced, the states they were
    on (`expanded`); for best_move its pair as {value, state} (`move`), or None."""

    counter: Any
    expansions: int
    expanded: list[Any]
    move: dict[str, Any] | None
