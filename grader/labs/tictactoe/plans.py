"""Requests for the tic-tac-toe observer (inputs only), each paired with its judge."""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial

import numpy as np

from reference.tictactoe import (
    format_board,
    game_over,
    get_childs,
    parse_board,
)
from reference.tictactoe_search import (
    INF,
    lab_maximize,
    lab_minimize,
)

from ...checks.bounds import BoundProbe, demanded
from ...spec import Conventions
from ...spec.model import DEFAULT_CONVENTIONS
from ..kit import CasePlan, Shrinkable
from ..kit.messages import counted
from .cases import (
    BOUND_SEARCHES,
    MINIMAX_KINDS,
    BoardRequest,
    GameOverBoards,
    GameOverCase,
    Position,
    PositionCase,
    RandomCase,
    SearchCase,
    WindowsCase,
    reference_expectations,
)
from .judges import judge_bounds, judge_game_over, judge_random, judge_search


def minimax_call(position: Position) -> BoardRequest:
    return {"function": "minimax", "board": position.board, "args": [position.player], "trace": True}


def bound_calls(
    position: Position, values: dict[str, int], conventions: Conventions = DEFAULT_CONVENTIONS
) -> list[tuple[BoardRequest, BoundProbe]]:
    """maximize and minimize at `position` with windows below, around, above and touching
    the true value at their depth, each paired with what the bound specification (and the
    course's return convention, when it counts only one) demands."""
    paired = []
    for function, relative, depth in BOUND_SEARCHES:
        v = values[function]
        player = relative * position.player
        for alpha, beta in [
            (-INF, v - 1),
            (v - 2, v - 1),
            (v - 1, v),
            (v - 1, v + 1),
            (v, v + 1),
            (v + 1, v + 2),
            (v + 1, INF),
        ]:
            args = [position.player, player, depth, alpha, beta, 0]
            call: BoardRequest = {"function": function, "board": position.board, "args": args, "trace": True}
            search = lab_maximize if function == "maximize" else lab_minimize
            soft = partial(lambda f, a: f(position.array(), *a, strict=conventions.strict).points, search, args)
            demand = demanded(conventions.only, v, alpha, beta, soft)
            paired.append((call, BoundProbe(position.call(function, *args), alpha, beta, v, **demand)))
    return paired


def windows_case(
    position: Position, values: dict[str, int], conventions: Conventions = DEFAULT_CONVENTIONS
) -> WindowsCase:
    paired = bound_calls(position, values, conventions)
    return WindowsCase(
        position, tuple(call for call, _ in paired), tuple(probe for _, probe in paired), conventions.strict
    )


def random_plan(
    number: int, position: Position, finished: str, conventions: Conventions = DEFAULT_CONVENTIONS
) -> CasePlan:
    return position_random_plan(f"random {number}", position, finished, conventions)


def position_random_plan(
    name: str,
    position: Position,
    finished: str,
    conventions: Conventions = DEFAULT_CONVENTIONS,
    request_id: str | None = None,
) -> CasePlan:
    """One hidden position, judged on everything at once: game_over there and at a finished
    board reached from it, minimax's score, count, expansions and move, and the bounds. It
    shrinks to the unfinished positions one move later (fewer empty cells)."""
    expected = reference_expectations(position, conventions.strict)
    boards = (position.board, finished)
    game_over_case = GameOverBoards(boards, tuple(game_over(parse_board(b)) for b in boards), conventions.strict)
    search = SearchCase(position, expected, MINIMAX_KINDS, minimax_call(position))
    windows = windows_case(position, expected.bound_values, conventions)
    calls = [{"function": "game_over", "board": b} for b in boards] + [search.call, *windows.calls]
    case = RandomCase(game_over_case, search, windows)
    empty = position.board.count(".")
    return CasePlan(
        name,
        {"id": request_id or name, "calls": calls},
        ("random",),
        partial(judge_random, case=case),
        shrink=Shrinkable(
            (empty,), f"a position with {counted(empty, 'empty cell')}", lambda: _smaller(name, position, conventions)
        ),
    )


def _smaller(name: str, position: Position, conventions: Conventions) -> Iterator[CasePlan]:
    """The unfinished positions after one move of the player to move, cells in row-major
    order, each with the finished board that playing the first empty cell reaches."""
    for child in position.children():
        board = parse_board(child)
        if not game_over(board)[0]:
            smaller = Position(child, -position.player)
            finished = _played_out(board, smaller.player)
            yield position_random_plan(name, smaller, finished, conventions, f"{name}/smaller")


def _played_out(board: np.ndarray, player: int) -> str:
    """The finished board reached by playing the first empty cell, turn after turn."""
    while not game_over(board)[0]:
        board, player = get_childs(board, player)[0], -player
    return format_board(board)


def game_over_plans(case: GameOverCase) -> list[CasePlan]:
    header = case.header
    judged = GameOverBoards(tuple(case.boards), tuple(case.expected), case.strict)
    request = {"id": header.name, "calls": [{"function": "game_over", "board": b} for b in case.boards]}
    judge = partial(judge_game_over, case=judged)
    return [CasePlan(header.name, request, ("game_over",), judge, header.visibility, header.points)]


def position_plans(case: PositionCase) -> list[CasePlan]:
    header, position, expected = case.header, case.position, case.expected
    plans = []
    kinds = tuple(k for k in header.checks if k in MINIMAX_KINDS)
    if kinds:
        search = SearchCase(position, expected, kinds, minimax_call(position))
        request = {"id": f"{header.name}/minimax", "calls": [search.call]}
        judge = partial(judge_search, case=search)
        plans.append(CasePlan(header.name, request, kinds, judge, header.visibility, header.points))
    if "bounds" in header.checks:
        windows = windows_case(position, expected.bound_values, case.conventions)
        request = {"id": f"{header.name}/bounds", "calls": list(windows.calls)}
        judge = partial(judge_bounds, case=windows)
        plans.append(CasePlan(header.name, request, ("bounds",), judge, header.visibility, header.points))
    return plans
