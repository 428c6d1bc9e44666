"""The `tictactoe` lab: `game_over`, `maximize`, `minimize` and `minimax` on 3x3 numpy
boards (DESIGN.md). The observer calls them on boards sent in notation ("xo./.x./..o")
and records every board `get_childs` is called on; this module plans those calls and
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
from __future__ import annotations

import hashlib
import random
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

import reference.tictactoe as rules
from reference.tictactoe import draw_board, format_board, game_over, get_childs, is_legal, parse_board
from reference.tictactoe_search import INF, lab_minimax, optimal_moves, position_value, random_position

from ..checks import Verdict
from ..checks.bounds import BoundProbe, check_bounds
from ..checks.expansions import first_divergence
from ..checks.show import describe_error, is_number, show
from ..sandbox.session import ProbeSetup
from ..spec import Spec
from ..spec.yaml_lines import LineDict
from .base import CasePlan, Judgement, Lab
from .casefields import read_header, require

MINIMAX_KINDS = ("value", "nodes", "pruned", "choice")
POSITION_KINDS = (*MINIMAX_KINDS, "bounds")
EXPECT_KEYS = {"value": ("points",), "nodes": ("nodes_visited", "expanded"), "pruned": ("expanded",),
               "choice": ("points", "moves"), "bounds": ("bound_values",)}
# maximize / minimize are called directly on a position: (function, player relative to the
# one to move, depth). minimize searches for the opponent, as it does one move deep.
BOUND_SEARCHES = (("maximize", 1, 2), ("minimize", -1, 1))
RANDOM_SETTINGS = {"empties": (3, 6)}
MARK = {1: "'o'", -1: "'x'"}
NOT_A_BOARD = "?"  # the observer's prefix for something that is not a board
SHOWN_FAILURES = 3


def _rules_module() -> tuple[tuple[str, str], ...]:
    return (("_abgrade_tictactoe_rules", Path(rules.__file__).read_text()),)


class TicTacToeLab(Lab):
    name = "tictactoe"
    probe = ProbeSetup("tictactoe", {"game_over": 1, "maximize": 7, "minimize": 7, "minimax": 2}, _rules_module())
    api = {
        "game_over": "game_over(matrix)",
        "maximize": "maximize(matrix, active_turn, player, depth, alpha, beta, nodes_visited)",
        "minimize": "minimize(matrix, active_turn, player, depth, alpha, beta, nodes_visited)",
        "minimax": "minimax(matrix, player)",
    }

    def fixed_plans(self, spec: Spec) -> list[CasePlan]:
        return [plan for case in _fixed_cases(spec) for plan in case.plans()]

    def random_plans(self, spec: Spec, seed: int) -> list[CasePlan]:
        return [_random_plan(index + 1, position, finished)
                for index, (position, finished) in enumerate(random_positions(spec, seed))]

    def verify(self, spec: Spec) -> list[str]:
        problems = [problem for case in _fixed_cases(spec) for problem in case.verify(spec.path)]
        if spec.random:
            random_positions(spec, 0)  # the generator settings must work
        return problems


# --- boards in feedback -------------------------------------------------------------------

def board_of(label: str) -> np.ndarray | None:
    """The board a label from the observer names, or None for anything that is not one."""
    try:
        return parse_board(label)
    except ValueError:
        return None


def drawn(label: str, indent: str = "    ") -> str:
    """A board (notation) drawn on its own indented lines; something else as text."""
    board = board_of(label)
    if board is None:
        return f"{indent}{label.removeprefix(NOT_A_BOARD)} (not a tic-tac-toe board)"
    return "\n".join(indent + line for line in draw_board(board).splitlines())


def side_by_side(*boards: tuple[str, str]) -> str:
    """Boards (title, notation) drawn next to each other under their titles."""
    columns = []
    for title, label in boards:
        lines = [title, *(drawn(label, "").splitlines())]
        width = max(len(line) for line in lines)
        columns.append([line.ljust(width) for line in lines])
    height = max(len(c) for c in columns)
    rows = zip(*(c + [" " * len(c[0])] * (height - len(c)) for c in columns))
    return "\n".join("    " + "     ".join(row).rstrip() for row in rows)


def outcome(points: int, player: int) -> str:
    """What a position's value means for `player` (depth 0: the move being chosen is move 1)."""
    if points > 0:
        moves = 10 - points
        when = "with its next move" if moves == 1 else f"{moves} moves from now (counting both sides' moves)"
        return f"{MARK[player]} can force a win {when}: score 10 - {moves} = {points}"
    if points < 0:
        moves = 10 + points
        return f"{MARK[player]} loses {moves} moves from now at best: score {moves} - 10 = {points}"
    return "best play on both sides ends in a draw: score 0"


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


# --- what the reference expects -----------------------------------------------------------

def expansions_digest(boards: list[str]) -> str:
    return hashlib.sha256("\n".join(boards).encode()).hexdigest()


@dataclass(frozen=True)
class Expansions:
    """The boards the reference's search expands, in order: listed, or (long lists) only
    their count and digest, the list being recomputed to show where a search parts."""

    position: Position
    count: int
    digest: str
    boards: tuple[str, ...] | None = None

    @classmethod
    def listed(cls, position: Position, boards: list[str]) -> Expansions:
        return cls(position, len(boards), expansions_digest(boards), tuple(boards))

    def same(self, seen: list[str], total: int) -> bool:
        if total != self.count or len(seen) != total:
            return False
        return list(self.boards) == seen if self.boards is not None else expansions_digest(seen) == self.digest

    def full(self) -> list[str]:
        if self.boards is not None:
            return list(self.boards)
        return lab_minimax(self.position.array(), self.position.player).expanded


@dataclass(frozen=True)
class Expected:
    """What the reference's search gives at a position: minimax's score and count, the
    optimal moves, the boards expanded, and the true values for the bounds calls."""

    points: int
    nodes_visited: int
    moves: frozenset[str]
    expanded: Expansions
    bound_values: dict[str, int]


def bound_value(position: Position, function: str) -> int:
    """The true value that `function` must respect at `position` (BOUND_SEARCHES)."""
    _, relative, depth = next(s for s in BOUND_SEARCHES if s[0] == function)
    return position_value(position.array(), position.player, relative * position.player, depth)


def reference_expectations(position: Position) -> Expected:
    result = lab_minimax(position.array(), position.player)
    return Expected(result.points, result.nodes_visited, frozenset(optimal_moves(position.array(), position.player)),
                    Expansions.listed(position, result.expanded),
                    {function: bound_value(position, function) for function, _, _ in BOUND_SEARCHES})


# --- spec cases -----------------------------------------------------------------------------

def _read_board(spec: Spec, container: Any, key: Any, where: str) -> str:
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
        self.boards = [_read_board(spec, listed, i, f"{where}.boards[{i}]") for i in range(len(listed))]
        pairs = require(spec, expect, "game_over", f"{where}.expect.game_over", list,
                        "one [finished, status] pair per board")
        if len(pairs) != len(self.boards) or not all(_is_pair(p) for p in pairs):
            raise spec.error(expect, "game_over", f"{where}.expect.game_over",
                             f"must list one [finished, status] pair (true/false, 1/-1/0) per board "
                             f"({len(self.boards)})")
        self.expected = [(bool(f), int(s)) for f, s in pairs]

    def plans(self) -> list[CasePlan]:
        boards, expected = self.boards, self.expected

        def judge(calls: list[dict]) -> Judgement:
            return Judgement({"game_over": judge_game_over(boards, expected, calls)})

        request = {"id": self.header.name, "calls": [{"function": "game_over", "board": b} for b in boards]}
        return [CasePlan(self.header.name, request, ("game_over",), judge, self.header.visibility,
                         self.header.points)]

    def verify(self, path: str) -> list[str]:
        actual = [game_over(parse_board(b)) for b in self.boards]
        wrong = [i for i, (a, e) in enumerate(zip(actual, self.expected)) if a != e]
        if not wrong:
            return []
        line = self.expect.lines.get("game_over", self.expect.line)
        return [f"{path}:{line}: {self.where}.expect.game_over[{i}] ({self.boards[i]}): stored "
                f"{list(self.expected[i])}, the reference computes {list(actual[i])}" for i in wrong]


def _is_pair(value: Any) -> bool:
    return (isinstance(value, list) and len(value) == 2 and isinstance(value[0], bool)
            and value[1] in (-1, 0, 1) and not isinstance(value[1], bool))


class PositionCase:
    """minimax at one position (value, nodes, pruned, choice) and maximize/minimize with
    narrowed windows there (bounds)."""

    def __init__(self, spec: Spec, index: int, raw: LineDict, names: set[str]) -> None:
        self.header = read_header(spec, index, raw, POSITION_KINDS, {"board", "player"}, names)
        where, expect = self.header.where, self.header.expect
        self.where, self.expect = where, expect
        board = _read_board(spec, raw, "board", f"{where}.board") if "board" in raw else None
        if board is None:
            raise spec.error(raw, None, f"{where}.board", 'missing: the board in notation, e.g. "xo./.x./..o"')
        player = require(spec, raw, "player", f"{where}.player", int, "the player to move: 1 ('o') or -1 ('x')")
        if player not in (1, -1):
            raise spec.error(raw, "player", f"{where}.player", "must be 1 ('o') or -1 ('x')")
        array = parse_board(board)
        movers, others = np.count_nonzero(array == player), np.count_nonzero(array == -player)
        if not is_legal(array) or game_over(array)[0] or others - movers not in (0, 1):
            raise spec.error(raw, "board", f"{where}.board",
                             f"must be a legal unfinished board on which {MARK[player]} may move")
        self.position = Position(board, player)
        needed = {key for kind in self.header.checks for key in EXPECT_KEYS[kind]}
        for key in expect:
            if key not in needed:
                raise spec.error(expect, key, f"{where}.expect.{key}",
                                 f"not used by this case's checks; expected {', '.join(sorted(needed))}")
        self.expected = self._read_expected(spec, needed)

    def _read_expected(self, spec: Spec, needed: set[str]) -> Expected:
        where, expect, position = self.where, self.expect, self.position
        what = {"points": (int, "the value minimax returns"),
                "nodes_visited": (int, "the nodes_visited minimax returns"),
                "moves": (list, "the list of optimal moves (boards in notation)"),
                "expanded": ((list, dict), "the boards expanded (a list, or {count, sha256})"),
                "bound_values": (dict, "{maximize: value, minimize: value}, true values at those depths")}
        for key in sorted(needed):
            require(spec, expect, key, f"{where}.expect.{key}", *what[key])
        moves = frozenset(expect.get("moves", ()))
        children = set(position.children())
        for move in moves:
            if move not in children:
                raise spec.error(expect, "moves", f"{where}.expect.moves",
                                 f"{move!r} is not a move of {MARK[position.player]} on {position.board!r}")
        expanded = expect.get("expanded")
        if isinstance(expanded, dict):
            if set(expanded) != {"count", "sha256"} or not isinstance(expanded["count"], int):
                raise spec.error(expect, "expanded", f"{where}.expect.expanded", "must be {count: N, sha256: HEX}")
            expansions = Expansions(position, expanded["count"], str(expanded["sha256"]))
        else:
            expansions = Expansions.listed(position, list(expanded or ()))
        values = expect.get("bound_values", {})
        functions = {function for function, _, _ in BOUND_SEARCHES}
        if values and (set(values) != functions or not all(is_number(v) for v in values.values())):
            raise spec.error(expect, "bound_values", f"{where}.expect.bound_values",
                             "must be {maximize: N, minimize: N}")
        return Expected(expect.get("points", 0), expect.get("nodes_visited", 0), moves, expansions, dict(values))

    def plans(self) -> list[CasePlan]:
        header, position, expected = self.header, self.position, self.expected
        plans = []
        kinds = tuple(k for k in header.checks if k in MINIMAX_KINDS)
        if kinds:
            def judge_search(calls: list[dict]) -> Judgement:
                verdicts = judge_minimax(_first(calls), position, expected, kinds)
                return Judgement(verdicts)

            request = {"id": f"{header.name}/minimax", "calls": [minimax_call(position)]}
            plans.append(CasePlan(header.name, request, kinds, judge_search, header.visibility, header.points))
        if "bounds" in header.checks:
            paired = bound_calls(position, expected.bound_values)

            def judge_windows(calls: list[dict]) -> Judgement:
                return Judgement({"bounds": judge_bounds(position, [p for _, p in paired], calls)})

            request = {"id": f"{header.name}/bounds", "calls": [call for call, _ in paired]}
            plans.append(CasePlan(header.name, request, ("bounds",), judge_windows, header.visibility, header.points))
        return plans

    def verify(self, path: str) -> list[str]:
        truth = reference_expectations(self.position)
        stored = self.expect
        actual: dict[str, Any] = {"points": truth.points, "nodes_visited": truth.nodes_visited,
                                  "moves": sorted(truth.moves), "bound_values": truth.bound_values}
        boards = list(truth.expanded.boards or ())
        digest = {"count": len(boards), "sha256": expansions_digest(boards)}
        actual["expanded"] = digest if isinstance(stored.get("expanded"), dict) else boards
        problems = []
        for key in stored:
            mine = sorted(stored[key]) if key == "moves" else stored[key]
            if mine != actual[key]:
                problems.append(f"{path}:{stored.lines.get(key, stored.line)}: {self.where}.expect.{key}: "
                                f"stored {mine!r}, the reference computes {actual[key]!r}")
        return problems


def _fixed_cases(spec: Spec) -> list[GameOverCase | PositionCase]:
    names: set[str] = set()
    return [(GameOverCase if "boards" in raw else PositionCase)(spec, index, raw, names)
            for index, raw in enumerate(spec.cases)]


# --- requests -------------------------------------------------------------------------------

def minimax_call(position: Position) -> dict:
    return {"function": "minimax", "board": position.board, "args": [position.player], "trace": True}


def bound_calls(position: Position, values: dict[str, int]) -> list[tuple[dict, BoundProbe]]:
    """maximize and minimize at `position` with windows below, around, above and touching
    the true value at their depth, each paired with what the bound specification demands."""
    paired = []
    for function, relative, depth in BOUND_SEARCHES:
        v = values[function]
        player = relative * position.player
        for alpha, beta in [(-INF, v - 1), (v - 2, v - 1), (v - 1, v), (v - 1, v + 1), (v, v + 1),
                            (v + 1, v + 2), (v + 1, INF)]:
            args = [position.player, player, depth, alpha, beta, 0]
            paired.append(({"function": function, "board": position.board, "args": args},
                           BoundProbe(position.call(function, *args), alpha, beta, v)))
    return paired


NO_ANSWER = {"error": {"type": "NoAnswer",
                       "message": "nothing came back for this call (an earlier call ended the process)"}}


def _first(calls: list[dict]) -> dict:
    return calls[0] if calls and isinstance(calls[0], dict) else NO_ANSWER


# --- errors, and the skeleton's placeholders ----------------------------------------------------

@cache
def skeleton_placeholders() -> dict[str, str]:
    """name -> what belongs there, read from the skeleton's `name = None  # complete: ...` lines
    (imported late: the skeleton generator pulls in nbformat, which only errors need)."""
    from ..exercises import exercise_text

    found = re.findall(r"^\s*(\w+) = None\s*# complete: (.+)$", exercise_text("tictactoe"), re.MULTILINE)
    return dict(found)


_NOT_SUPPORTED = re.compile(r"'(\S+)' not supported between instances of '(\w+)' and '(\w+)'")
_OPERAND_TYPES = re.compile(r"unsupported operand type\(s\) for (\S+): '(\w+)' and '(\w+)'")
_NOT_DEFINED = re.compile(r"name '(\w+)' is not defined|local variable '(\w+)'")
MINIMAX_HOW = ("initialise infinite_number = 100000, alpha = -infinite_number and beta = infinite_number, "
               "then `choice, score, nodes_visited = maximize(matrix, player, player, 0, alpha, beta, 0)`")


def raised(observation: dict, call: str) -> str:
    return f"{call} raised {error_text(observation)}"


def error_text(observation: dict) -> str:
    """The exception, its innermost frames, and (when it is one) the skeleton line to blame."""
    error = observation["error"] if isinstance(observation["error"], dict) else {"message": show(observation["error"])}
    frames = error.get("frames") or []
    text = describe_error({**error, "frames": frames[-3:]})
    if len(frames) > 3:
        text = text.replace("\n", f"\n    ({len(frames) - 3} outer calls left out)\n", 1)
    hint = error_hint(error, observation.get("none_assignments") or [])
    return text + (f"\n{hint}" if hint else "")


def error_hint(error: dict, assignments: list[list]) -> str:
    message = str(error.get("message", ""))
    frames = error.get("frames") or []
    last = frames[-1] if frames else None
    if error.get("type") == "TypeError" and "unpack" in message and "NoneType" in message:
        return ("A search returned None instead of three values: every path of maximize and minimize "
                "must end in `return choice, utility, nodes_visited`.")
    if error.get("type") == "TypeError" and "NoneType" in message:
        names = _none_operands(message, last[3] if last else "")
        placeholders = skeleton_placeholders()
        blamed = [a for a in assignments if _assigned(a) in names and _assigned(a) in placeholders]
        if blamed:
            return "\n".join(f"line {line} of {file}: `{_code(text)}` is the skeleton's placeholder: "
                             f"{placeholders[_assigned([file, line, function, text])]}."
                             for file, line, function, text in blamed)
        where = f" (`{last[3]}`)" if last else ""
        return f"A variable in that line{where} still holds None: give it a number before it is compared or added."
    if error.get("type") in ("NameError", "UnboundLocalError") and last and last[2] == "minimax":
        match = _NOT_DEFINED.search(message)
        name = next((g for g in match.groups() if g), "a name") if match else "a name"
        return (f"line {last[1]} of {last[0]}: minimax uses `{name}` before anything assigns it, as the skeleton "
                f"leaves it: {MINIMAX_HOW}.")
    return ""


def _none_operands(message: str, line: str) -> set[str]:
    """The names in `line` that were None in the failed operation."""
    match = _NOT_SUPPORTED.search(message) or _OPERAND_TYPES.search(message)
    names = set(re.findall(r"[A-Za-z_]\w*", line))
    if not match:
        return names
    operator, left, right = match.groups()
    operation = re.search(rf"([A-Za-z_]\w*)\s*{re.escape(operator)}\s*([A-Za-z_]\w*)", line)
    if not operation:
        return names
    return {name for name, kind in zip(operation.groups(), (left, right)) if kind == "NoneType"}


def _assigned(assignment: list) -> str:
    return str(assignment[3]).split("=", 1)[0].strip()


def _code(text: str) -> str:
    """A line of code without its comment."""
    return text.split("#", 1)[0].strip()


# --- judging game_over ------------------------------------------------------------------------

def judge_game_over(boards: list[str], expected: list[tuple[bool, int]], calls: list[dict]) -> Verdict:
    failures = []  # (board, expected pair, the pair returned or None, the call and what came of it)
    for number, (board, truth) in enumerate(zip(boards, expected)):
        observation = calls[number] if number < len(calls) and isinstance(calls[number], dict) else NO_ANSWER
        if observation.get("error"):
            failures.append((board, truth, None, raised(observation, "game_over(board)")))
            continue
        pair = _pair(observation.get("returned"))
        if pair is None or pair != truth:
            failures.append((board, truth, pair, f"game_over(board) returned {show(observation.get('returned'))}"))
    if not failures:
        return Verdict.ok(f"game_over was right on all {len(boards)} boards.")
    lines = [f"game_over was wrong on {len(failures)} of {len(boards)} boards."]
    for board, truth, _, came_back in failures[:SHOWN_FAILURES]:
        lines.append(f"{came_back}; expected ({truth[0]}, {truth[1]}): {_game_state(board, truth)}.\n{drawn(board)}")
    if len(failures) > SHOWN_FAILURES:
        lines.append(f"... and {len(failures) - SHOWN_FAILURES} more: "
                     + ", ".join(f'"{b}"' for b, *_ in failures[SHOWN_FAILURES:]))
    lines.extend(_game_over_hints(failures))
    return Verdict.fail("\n".join(lines))


def _pair(returned: Any) -> tuple[bool, int] | None:
    """(finished, status) from what game_over returned, or None if it is no such pair."""
    if not (isinstance(returned, dict) and returned.get("type") in ("tuple", "list") and len(returned["items"]) == 2):
        return None
    finished, status = returned["items"]
    if not (isinstance(finished, bool) or finished in (0, 1)) or not is_number(status):
        return None
    return bool(finished), status


def _game_state(board: str, truth: tuple[bool, int]) -> str:
    finished, status = truth
    if status:
        return f"{MARK[status]} has three in a row"
    if finished:
        return "no cell is empty and nobody has three in a row: a draw"
    return "nobody has three in a row and a cell is still empty: the game goes on"


def _game_over_hints(failures: list) -> list[str]:
    hints = []
    missed_wins = any(t[1] != 0 and p is not None and not p[0] for _, t, p, _ in failures)
    missed_draws = any(t == (True, 0) and p is not None and not p[0] for _, t, p, _ in failures)
    early = any(not t[0] and p is not None and p[0] for _, t, p, _ in failures)
    status = any(p is not None and p[1] != t[1] for _, t, p, _ in failures)
    if missed_wins:
        hints.append("When game_status(matrix) is not 0, someone has three in a row: set game_finished = True "
                     "(where the skeleton says #Write code here).")
    if missed_draws:
        hints.append("A full board ends the game too, even without three in a row: when no cell is empty "
                     "(abs(matrix).sum() == 9), set game_finished = True (where the skeleton says #Write code here).")
    if early:
        hints.append("A game is over only when someone has three in a row or no cell is empty.")
    if status:
        hints.append("status must be game_status(matrix): 1 if 'o' has three in a row, -1 if 'x' has, else 0.")
    if any(p is None and not c.startswith("game_over(board) raised") for _, _, p, c in failures):
        hints.append("game_over must return a pair: (game_finished, status).")
    return hints


# --- judging minimax --------------------------------------------------------------------------

def judge_minimax(observation: dict, position: Position, expected: Expected,
                  kinds: tuple[str, ...]) -> dict[str, Verdict]:
    call = position.call("minimax", position.player)
    if observation.get("error"):
        failed = Verdict.fail(f"{raised(observation, call)}\n{position.drawing()}")
        return {kind: failed for kind in kinds}
    if "points" not in observation:
        returned = observation.get("returned")
        why = ("does minimax end with `return choice, score, nodes_visited`?" if returned is None
               else "it must return three things: (choice, score, nodes_visited).")
        failed = Verdict.fail(f"{call} returned {show(returned)}: {why}\n{position.drawing()}")
        return {kind: failed for kind in kinds}
    judges: dict[str, Callable[[], Verdict]] = {
        "value": lambda: judge_value(observation, position, expected, call),
        "nodes": lambda: judge_nodes(observation, position, expected, call),
        "pruned": lambda: judge_pruned(observation, position, expected, call),
        "choice": lambda: judge_choice(observation, position, expected, call),
    }
    return {kind: judges[kind]() for kind in kinds}


def judge_value(observation: dict, position: Position, expected: Expected, call: str) -> Verdict:
    points = observation.get("points")
    if is_number(points) and points == expected.points:
        return Verdict.ok(f"{call} returned score {show(points)}, as expected.")
    return Verdict.fail(f"{call} returned score {show(points)}, expected {expected.points}: "
                        f"{outcome(expected.points, position.player)}.\n{position.drawing()}")


def judge_nodes(observation: dict, position: Position, expected: Expected, call: str) -> Verdict:
    nodes = observation.get("nodes")
    if is_number(nodes) and nodes == expected.nodes_visited:
        return Verdict.ok(f"{call} returned nodes_visited = {expected.nodes_visited:,}, as expected.")
    if not is_number(nodes):
        return Verdict.fail(f"{call} returned nodes_visited = {show(nodes)}, expected the number "
                            f"{expected.nodes_visited:,}.\n{position.drawing()}")
    more = "more" if nodes > expected.nodes_visited else "fewer"
    lines = [f"{call} returned nodes_visited = {nodes:,}; the reference counts {expected.nodes_visited:,} "
             f"({abs(nodes - expected.nodes_visited):,} {more})."]
    seen, total = _expanded(observation)
    finished_boards = expected.nodes_visited - (expected.expanded.count - 1)
    if total == 0:
        lines.append("(The grader could not watch your search: it never called get_childs.)")
    elif not expected.expanded.same(seen, total):
        lines.append("Your search expands other boards than the reference (see the pruned check); "
                     "the count follows once the search does.")
    elif nodes == finished_boards:
        lines.append(f"Your search expanded the same boards as the reference, and {nodes:,} is the number of "
                     f"finished boards it reached: count every child, not only finished boards "
                     f"(nodes_visited = nodes_visited + 1 just before each recursive call).")
    else:
        lines.append("Your search expanded the same boards as the reference, so the count itself is off: add 1 "
                     "for every child just before its recursive call, and carry the count the call returns "
                     "(`_, utility, nodes_visited = minimize(...)`).")
    lines.append(position.drawing())
    return Verdict.fail("\n".join(lines))


def _expanded(observation: dict) -> tuple[list[str], int]:
    seen = observation.get("expanded")
    seen = [s for s in seen if isinstance(s, str)] if isinstance(seen, list) else []
    total = observation.get("expansions")
    return seen, total if isinstance(total, int) else len(seen)


def judge_pruned(observation: dict, position: Position, expected: Expected, call: str) -> Verdict:
    seen, total = _expanded(observation)
    reference = expected.expanded
    if reference.same(seen, total):
        return Verdict.ok(f"your search called get_childs on the same {total:,} boards, in the same order, "
                          f"as the reference.")
    if total == 0:
        return Verdict.fail(f"During {call} your code never called get_childs, so the grader can't see which boards "
                            f"your search expands (the reference expands {reference.count:,}). maximize and "
                            f"minimize must get the children with `childs = get_childs(matrix, active_turn)` "
                            f"(the given helper or your own version of it).\n{position.drawing()}")
    full = reference.full()
    compared = full[:len(seen)] if total > len(seen) else full  # a very long trace is kept only in part
    index = first_divergence(seen, compared)
    more = "more" if total > reference.count else "fewer"
    lines = [f"During {call} your search called get_childs on {total:,} boards; the reference on "
             f"{reference.count:,}" + (f" ({abs(total - reference.count):,} {more})." if total != reference.count
                                       else ", but not the same ones in the same order.")]
    if index is not None and index < len(seen) and index < len(full):
        lines.append(f"The first {index:,} expansions agree; expansion #{index + 1:,} differs:")
        lines.append(side_by_side(("your search expands", seen[index]), ("the reference expands", full[index])))
        if seen[index] not in set(full):
            lines.append("The reference never expands the board on the left: it cuts the search off before.")
        if full[index] not in set(seen):
            lines.append("Your search never expands the board on the right.")
    elif index is not None and index >= len(seen):
        lines.append(f"Your search stopped after {len(seen):,} expansions; the reference goes on with:")
        lines.append(drawn(full[index]))
    elif index is not None:
        lines.append(f"After the reference's last expansion, your search went on with:\n{drawn(seen[index])}")
    finished = next((label for label in seen if (board := board_of(label)) is not None and game_over(board)[0]),
                    None)
    if finished is not None:
        state = _game_state(finished, game_over(parse_board(finished)))
        lines.append(f"Your search asked for the children of a finished board ({state}):\n{drawn(finished)}\n"
                     f"maximize and minimize must return at once on a board where game_over says the game is "
                     f"finished.")
    elif total > reference.count:
        lines.append("Your search prunes less than the reference: stop the loop as soon as maxUtility >= beta "
                     "(minUtility <= alpha), and raise alpha (lower beta) whenever the best utility improves it.")
    elif total < reference.count:
        lines.append("Your search skips boards the reference expands: go through every child in the order "
                     "get_childs gives, cut off only when maxUtility >= beta (minUtility <= alpha), and treat "
                     "only boards where someone has won or no cell is empty as finished.")
    lines.append(position.drawing())
    cut = len(seen) if index is None else index + 1  # enough for the picture: up to the first difference
    # the lists stop at the first difference; the totals are the whole searches' counts
    details = {"view": "boards", "board": position.board, "seen": seen[:cut], "expected": full[:cut],
               "seen_total": total, "expected_total": reference.count}
    return Verdict.fail("\n".join(lines)).with_details(details)


def judge_choice(observation: dict, position: Position, expected: Expected, call: str) -> Verdict:
    choice = observation.get("choice")
    if not (choice is None or isinstance(choice, str)):
        choice = f"{NOT_A_BOARD}{show(choice)}"
    optimal = sorted(expected.moves)
    if choice in expected.moves:
        return Verdict.ok(f"{call} chose an optimal move ({len(optimal)} of {len(position.children())} "
                          f"moves are optimal).")
    if choice is None:
        text = (f"{call} returned choice = None: minimax must return the board after its move "
                f"(the child kept when its utility was the best so far).")
    elif choice.startswith(NOT_A_BOARD):
        text = f"{call} returned a choice that is {choice[1:]}, not a board: it must be one of the children."
    elif choice not in position.children():
        text = (f"{call} returned a choice that is not one move of {MARK[position.player]} away from the board:"
                f"\n{drawn(choice)}")
    else:
        worth = position_value(parse_board(choice), -position.player, position.player, 1)
        slower = " (a win too, but a slower one)" if 0 < worth < expected.points else ""
        more = f" (the first of {len(optimal)} optimal moves)" if len(optimal) > 1 else ""
        text = (f"{call} chose a move worth {worth}{slower}; the position is worth {expected.points} "
                f"({outcome(expected.points, position.player)}), so that move is not optimal.\n"
                + side_by_side(("your move", choice), (f"an optimal move{more}", optimal[0])))
        if observation.get("points") == expected.points:
            text += ("\nYour score is right, so most likely the choice changed on a child that only tied the "
                     "best so far: under pruning such a tie may be only a bound, so change choice only on a "
                     "strict improvement (utility > maxUtility).")
        else:
            text += "\nYour score is wrong too (see the value check): the move follows from the utilities."
    return Verdict.fail(f"{text}\n{position.drawing()}")


def judge_bounds(position: Position, probes: list[BoundProbe], calls: list[dict]) -> Verdict:
    results = []
    for probe, observation in zip(probes, calls):
        if not isinstance(observation, dict):
            observation = NO_ANSWER
        if observation.get("error"):
            results.append((probe, None, error_text(observation)))
        elif "points" not in observation:
            results.append((probe, None, f"returned {show(observation.get('returned'))}, not "
                                         f"(choice, utility, nodes_visited)"))
        else:
            results.append((probe, observation["points"], None))
    if len(calls) < len(probes):
        results.append((probes[len(calls)], None, "nothing: the calls stopped early"))
    verdict = check_bounds(results)
    if verdict.passed:
        return verdict
    depth_note = ("" if any(error for _, _, error in results) else
                  "\n(depth counts the moves made before this board: a win k moves later scores "
                  "10 - (depth + k) for `player`, a loss (depth + k) - 10.)")
    return Verdict.fail(f"{verdict.message}{depth_note}\n{position.drawing()}")


# --- random cases -------------------------------------------------------------------------------

def _random_settings(spec: Spec) -> dict[str, Any]:
    assert spec.random is not None
    settings = dict(RANDOM_SETTINGS)
    for key, value in spec.random.params.items():
        if key not in RANDOM_SETTINGS:
            raise spec.error(spec.raw["random"], key, f"random.{key}",
                             f"unknown setting; expected one of {', '.join(RANDOM_SETTINGS)}")
        settings[key] = value
    empties = settings["empties"]
    if not (isinstance(empties, (list, tuple)) and len(empties) == 2 and all(type(e) is int for e in empties)
            and 1 <= empties[0] <= empties[1] <= 9):
        raise spec.error(spec.raw["random"], "empties", "random.empties",
                         "must be a range [low, high] of empty cells with 1 <= low <= high <= 9")
    return settings


def random_positions(spec: Spec, seed: int) -> list[tuple[Position, str]]:
    """The hidden positions of a grading run, each with a finished board that random play
    reaches from it (for game_over): reproducible from `seed`, never stored."""
    assert spec.random is not None
    low, high = _random_settings(spec)["empties"]
    positions = []
    for index in range(spec.random.count):
        rng = random.Random(seed * 1000 + index)
        board, player = random_position(rng, low, high)
        end, turn = board, player
        while not game_over(end)[0]:
            end, turn = rng.choice(get_childs(end, turn)), -turn
        positions.append((Position(format_board(board), int(player)), format_board(end)))
    return positions


def _random_plan(number: int, position: Position, finished: str) -> CasePlan:
    """One hidden position, judged on everything at once: game_over there and at a finished
    board reached from it, minimax's score, count, expansions and move, and the bounds."""
    name = f"random {number}"
    expected = reference_expectations(position)
    boards = [position.board, finished]
    truths = [game_over(parse_board(b)) for b in boards]
    paired = bound_calls(position, expected.bound_values)
    calls = [{"function": "game_over", "board": b} for b in boards] + [minimax_call(position)]
    calls += [call for call, _ in paired]

    def judge(observed: list[dict]) -> Judgement:
        verdicts = {"game_over": judge_game_over(boards, truths, observed[:2])}
        verdicts.update(judge_minimax(_first(observed[2:]), position, expected, MINIMAX_KINDS))
        verdicts["bounds"] = judge_bounds(position, [p for _, p in paired], observed[3:])
        failing: dict[str, list[str]] = {}  # an error fails several checks with the same message
        for kind, verdict in verdicts.items():
            if not verdict.passed:
                failing.setdefault(verdict.message, []).append(kind)
        if not failing:
            return Judgement({"random": Verdict.ok(
                f"game_over, score, nodes_visited, expansions, choice and bounds all right on \"{position.board}\" "
                f"with {MARK[position.player]} to move.")})
        return Judgement({"random": Verdict.fail("\n".join(f"[{', '.join(kinds)}] {message}"
                                                           for message, kinds in failing.items()))})

    return CasePlan(name, {"id": name, "calls": calls}, ("random",), judge)
