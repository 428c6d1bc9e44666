"""The tic-tac-toe lab's spec cases (game_over boards; positions) and what the reference expects there."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

import numpy as np

from reference.tictactoe import (
    format_board,
    game_over,
    get_childs,
    is_legal,
    parse_board,
)
from reference.tictactoe_search import (
    lab_minimax,
    optimal_moves,
    position_value,
)

from ...checks.bounds import BoundProbe
from ...checks.show import is_number, show
from ...spec import Spec
from ...spec.yaml_lines import LineDict
from ..kit.fields import expected_keys, read_header, require
from ..kit.messages import mismatch
from ..kit.observations import CallObservation, CallRequest
from .boards import MARK, drawn

MINIMAX_KINDS = ("value", "nodes", "pruned", "choice")


POSITION_KINDS = (*MINIMAX_KINDS, "bounds")


EXPECT_KEYS = {
    "value": ("points",),
    "nodes": ("nodes_visited", "expanded"),
    "pruned": ("expanded",),
    "choice": ("points", "moves"),
    "bounds": ("bound_values",),
}


# maximize / minimize are called directly on a position: (function, player relative to the
# one to move, depth). minimize searches for the opponent, as it does one move deep.
BOUND_SEARCHES = (("maximize", 1, 2), ("minimize", -1, 1))


@dataclass(frozen=True)
class Position:
    """A legal unfinished board and the player to move (who maximizes)."""

    board: str
    player: int

    def array(self) -> np.ndarray:
        return parse_board(self.board)

    def drawing(self) -> str:
        return f'The board "{self.board}", {MARK[self.player]} to move:\n{drawn(self.board)}'

    def call(self, function: str, *args: Any) -> str:
        return f"{function}(board, {', '.join(show(a) for a in args)})"

    def children(self) -> list[str]:
        return [format_board(c) for c in get_childs(self.array(), self.player)]


def expansions_digest(boards: list[str]) -> str:
    return hashlib.sha256("\n".join(boards).encode()).hexdigest()


@dataclass(frozen=True)
class Expansions:
    """The boards the reference's search expands, in order: listed, or (long lists) only
    their count and digest, the list being recomputed to show where a search parts.
    `strict`: the course cuts off only when maxUtility > beta (spec.Conventions)."""

    position: Position
    count: int
    digest: str
    boards: tuple[str, ...] | None = None
    strict: bool = False

    @classmethod
    def listed(cls, position: Position, boards: list[str], strict: bool = False) -> Expansions:
        return cls(position, len(boards), expansions_digest(boards), tuple(boards), strict)

    def same(self, seen: list[str], total: int) -> bool:
        if total != self.count or len(seen) != total:
            return False
        return list(self.boards) == seen if self.boards is not None else expansions_digest(seen) == self.digest

    def full(self) -> list[str]:
        if self.boards is not None:
            return list(self.boards)
        return lab_minimax(self.position.array(), self.position.player, strict=self.strict).expanded


@dataclass(frozen=True)
class Expected:
    """What the reference's search gives at a position: minimax's score and count, the
    optimal moves, the boards expanded, and the true values for the bounds calls."""

    points: int
    nodes_visited: int
    moves: frozenset[str]
    expanded: Expansions
    bound_values: dict[str, int]

    @property
    def strict(self) -> bool:
        """Whether the course cuts off only past the bound (the reference's search did)."""
        return self.expanded.strict


def bound_value(position: Position, function: str) -> int:
    """The true value that `function` must respect at `position` (BOUND_SEARCHES)."""
    _, relative, depth = next(s for s in BOUND_SEARCHES if s[0] == function)
    return position_value(position.array(), position.player, relative * position.player, depth)


def reference_expectations(position: Position, strict: bool = False) -> Expected:
    result = lab_minimax(position.array(), position.player, strict=strict)
    return Expected(
        result.points,
        result.nodes_visited,
        frozenset(optimal_moves(position.array(), position.player)),
        Expansions.listed(position, result.expanded, strict),
        {function: bound_value(position, function) for function, _, _ in BOUND_SEARCHES},
    )


def read_board(spec: Spec, container: Any, key: Any, where: str) -> str:
    text = container[key]
    if not isinstance(text, str):
        raise spec.error(container, key, where, f'must be a board in notation such as "xo./.x./..o", got {text!r}')
    try:
        return format_board(parse_board(text))
    except ValueError as exc:
        raise spec.error(container, key, where, str(exc)) from None


class GameOverCase:
    """`game_over` on listed boards, each against its stored (finished, status)."""

    def __init__(self, spec: Spec, index: int, raw: LineDict, names: set[str]) -> None:
        self.header = read_header(spec, index, raw, ("game_over",), {"boards"}, names)
        where, expect = self.header.where, self.header.expect
        self.where, self.expect = where, expect
        listed = require(spec, raw, "boards", f"{where}.boards", list, "a list of boards in notation")
        if not listed:
            raise spec.error(raw, "boards", f"{where}.boards", "must list at least one board")
        self.boards = [read_board(spec, listed, i, f"{where}.boards[{i}]") for i in range(len(listed))]
        pairs = require(
            spec, expect, "game_over", f"{where}.expect.game_over", list, "one [finished, status] pair per board"
        )
        if len(pairs) != len(self.boards) or not all(is_pair(p) for p in pairs):
            raise spec.error(
                expect,
                "game_over",
                f"{where}.expect.game_over",
                f"must list one [finished, status] pair (true/false, 1/-1/0) per board ({len(self.boards)})",
            )
        self.expected = [(bool(f), int(s)) for f, s in pairs]
        self.strict = spec.conventions.strict

    def verify(self, path: str) -> list[str]:
        actual = [game_over(parse_board(b)) for b in self.boards]
        wrong = [i for i, (a, e) in enumerate(zip(actual, self.expected)) if a != e]
        if not wrong:
            return []
        line = self.expect.lines.get("game_over", self.expect.line)
        return [
            mismatch(
                path,
                line,
                f"{self.where}.expect.game_over[{i}] ({self.boards[i]})",
                list(self.expected[i]),
                list(actual[i]),
            )
            for i in wrong
        ]


def is_pair(value: Any) -> bool:
    return (
        isinstance(value, list)
        and len(value) == 2
        and isinstance(value[0], bool)
        and value[1] in (-1, 0, 1)
        and not isinstance(value[1], bool)
    )


class PositionCase:
    """minimax at one position (value, nodes, pruned, choice) and maximize/minimize with
    narrowed windows there (bounds)."""

    def __init__(self, spec: Spec, index: int, raw: LineDict, names: set[str]) -> None:
        self.header = read_header(spec, index, raw, POSITION_KINDS, {"board", "player"}, names)
        where, expect = self.header.where, self.header.expect
        self.where, self.expect = where, expect
        board = read_board(spec, raw, "board", f"{where}.board") if "board" in raw else None
        if board is None:
            raise spec.error(raw, None, f"{where}.board", 'missing: the board in notation, e.g. "xo./.x./..o"')
        player = require(spec, raw, "player", f"{where}.player", int, "the player to move: 1 ('o') or -1 ('x')")
        if player not in (1, -1):
            raise spec.error(raw, "player", f"{where}.player", "must be 1 ('o') or -1 ('x')")
        array = parse_board(board)
        movers, others = np.count_nonzero(array == player), np.count_nonzero(array == -player)
        if not is_legal(array) or game_over(array)[0] or others - movers not in (0, 1):
            raise spec.error(
                raw, "board", f"{where}.board", f"must be a legal unfinished board on which {MARK[player]} may move"
            )
        self.position = Position(board, player)
        self.conventions = spec.conventions
        needed = expected_keys(spec, self.header, EXPECT_KEYS)
        self.expected = self._read_expected(spec, needed)

    def _read_expected(self, spec: Spec, needed: set[str]) -> Expected:
        where, expect, position = self.where, self.expect, self.position
        what: dict[str, tuple[type | tuple[type, ...], str]] = {
            "points": (int, "the value minimax returns"),
            "nodes_visited": (int, "the nodes_visited minimax returns"),
            "moves": (list, "the list of optimal moves (boards in notation)"),
            "expanded": ((list, dict), "the boards expanded (a list, or {count, sha256})"),
            "bound_values": (dict, "{maximize: value, minimize: value}, true values at those depths"),
        }
        for key in sorted(needed):
            require(spec, expect, key, f"{where}.expect.{key}", *what[key])
        moves = frozenset(expect.get("moves", ()))
        children = set(position.children())
        for move in moves:
            if move not in children:
                raise spec.error(
                    expect,
                    "moves",
                    f"{where}.expect.moves",
                    f"{move!r} is not a move of {MARK[position.player]} on {position.board!r}",
                )
        expanded = expect.get("expanded")
        if isinstance(expanded, dict):
            if set(expanded) != {"count", "sha256"} or not isinstance(expanded["count"], int):
                raise spec.error(expect, "expanded", f"{where}.expect.expanded", "must be {count: N, sha256: HEX}")
            expansions = Expansions(position, expanded["count"], str(expanded["sha256"]), None, spec.conventions.strict)
        else:
            expansions = Expansions.listed(position, list(expanded or ()), spec.conventions.strict)
        values = expect.get("bound_values", {})
        functions = {function for function, _, _ in BOUND_SEARCHES}
        if values and (set(values) != functions or not all(is_number(v) for v in values.values())):
            raise spec.error(
                expect, "bound_values", f"{where}.expect.bound_values", "must be {maximize: N, minimize: N}"
            )
        return Expected(expect.get("points", 0), expect.get("nodes_visited", 0), moves, expansions, dict(values))

    def verify(self, path: str) -> list[str]:
        truth = reference_expectations(self.position, self.conventions.strict)
        stored = self.expect
        actual: dict[str, Any] = {
            "points": truth.points,
            "nodes_visited": truth.nodes_visited,
            "moves": sorted(truth.moves),
            "bound_values": truth.bound_values,
        }
        boards = list(truth.expanded.boards or ())
        digest = {"count": len(boards), "sha256": expansions_digest(boards)}
        actual["expanded"] = digest if isinstance(stored.get("expanded"), dict) else boards
        problems = []
        for key in stored:
            mine = sorted(stored[key]) if key == "moves" else stored[key]
            if mine != actual[key]:
                problems.append(
                    mismatch(path, stored.lines.get(key, stored.line), f"{self.where}.expect.{key}", mine, actual[key])
                )
        return problems


def read_cases(spec: Spec) -> list[GameOverCase | PositionCase]:
    names: set[str] = set()
    return [
        (GameOverCase if "boards" in raw else PositionCase)(spec, index, raw, names)
        for index, raw in enumerate(spec.cases)
    ]


# --- what each request is judged against (the judges' second argument) ----------------------


@dataclass(frozen=True)
class GameOverBoards:
    """game_over on `boards`, each against its (finished, status)."""

    boards: tuple[str, ...]
    expected: tuple[tuple[bool, int], ...]
    strict: bool = False  # the course's cut-off (the bug replays' names follow it)


@dataclass(frozen=True)
class SearchCase:
    """`call` (minimax at `position`, traced) judged in `kinds` against the reference."""

    position: Position
    expected: Expected
    kinds: tuple[str, ...]
    call: BoardRequest


@dataclass(frozen=True)
class WindowsCase:
    """maximize / minimize at `position` with narrowed windows (`calls`), each with what
    the bound specification demands of it (`probes`)."""

    position: Position
    calls: tuple[BoardRequest, ...]
    probes: tuple[BoundProbe, ...]
    strict: bool = False  # the course's cut-off (the bug replays follow it)


@dataclass(frozen=True)
class RandomCase:
    """A hidden position judged on everything at once: game_over on two boards (the first
    two calls), minimax (the third), then the windows."""

    game_over: GameOverBoards
    search: SearchCase
    windows: WindowsCase


# --- what the observer is asked and sends back (observer.py) --------------------------------


class BoardRequest(CallRequest, total=False):
    """A call of game_over (board only) or of minimax / maximize / minimize on `board`."""

    board: str


class BoardCall(CallObservation, total=False):
    """What the observer sends for one call: a search's triple as `choice` (a board in
    notation, "?..." for anything else), `points` and `nodes` (else `returned`), the boards
    get_childs was called on when traced (`expanded`, at most 60,000, and their exact count
    `expansions`), and for errors the lines `name = None` of the submission."""

    choice: str | None
    points: Any
    nodes: Any
    expansions: int
    expanded: list[Any]
    none_assignments: list[list[Any]]
