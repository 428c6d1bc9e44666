"""Requests for the negamax observer (inputs only), each paired with its judge."""

from __future__ import annotations

from functools import partial
from math import inf

from reference.negamax import Game, true_value

from ...checks.bounds import BoundProbe
from ..kit import CasePlan, Shrinkable
from .cases import BoundsCase, MoveCase, Position, PositionCase, RandomCase, SearchCase, StateRequest, WindowsCase
from .judges import judge_bounds, judge_move, judge_random, judge_search
from .smaller import position_size, smaller_positions

# Windows with alpha < beta, as in the tree lab: with alpha == beta the textbook fail-soft
# loop (raise alpha, cut on alpha >= beta) stops after one successor, and the contract
# accepts fail-soft submissions.
BOUND_WINDOWS = [(a, b) for a in (-1, 0, 1) for b in (-1, 0, 1) if a < b] + [(-inf, inf)]


def game_request(case_id: str, game: Game, calls: list[StateRequest]) -> dict:
    return {"id": case_id, "game": game.name, "params": game.params, "calls": calls}


def bound_calls(positions: list[Position], values: list[int]) -> list[tuple[StateRequest, BoundProbe, Position]]:
    """`alphaBeta` at each position with every window over {-1, 0, 1} and the full one."""
    return [
        (
            position.request_call("alphaBeta", alpha, beta),
            BoundProbe(position.call("alphaBeta", alpha, beta), alpha, beta, value),
            position,
        )
        for position, value in zip(positions, values)
        for alpha, beta in BOUND_WINDOWS
    ]


def windows_case(positions: list[Position], values: list[int]) -> tuple[list[StateRequest], WindowsCase]:
    paired = bound_calls(positions, values)
    probes = tuple((probe, position) for _, probe, position in paired)
    return [call for call, _, _ in paired], WindowsCase(positions[0].game, probes)


def random_plan(number: int, position: Position) -> CasePlan:
    return position_random_plan(f"random {number}", position)


def position_random_plan(name: str, position: Position, request_id: str | None = None) -> CasePlan:
    """One hidden position, judged like the fixed cases together: value, counts, best_move
    and the bound specification. It shrinks to smaller positions of its game (negamax/smaller.py)."""
    game = position.game
    calls = [position.request_call("value", trace=True), position.request_call("best_move")]
    value = true_value(game, position.state, position.player)
    window_calls, windows = windows_case([position], [value])
    case = RandomCase(position, value, windows)
    size, text = position_size(position)
    return CasePlan(
        name,
        game_request(request_id or name, game, calls + window_calls),
        ("random",),
        partial(judge_random, case=case),
        shrink=Shrinkable(
            size,
            text,
            lambda: (position_random_plan(name, p, f"{name}/smaller") for p in smaller_positions(position)),
        ),
    )


def position_plans(case: PositionCase) -> list[CasePlan]:
    header, position, window, expect = case.header, case.position, case.window, case.expect
    plans = []
    search_kinds = tuple(k for k in header.checks if k in ("value", "nodes"))
    if search_kinds:
        search = SearchCase(
            position, window, search_kinds, expect.get("value", 0), expect.get("calls", 0), expect.get("expansions", 0)
        )
        request = game_request(
            f"{header.name}/value",
            position.game,
            [position.request_call("value", *window, trace="nodes" in search_kinds)],
        )
        judge = partial(judge_search, case=search)
        plans.append(CasePlan(header.name, request, search_kinds, judge, header.visibility, header.points))
    if "choice" in header.checks:
        move = MoveCase(position, expect["value"], tuple(expect["moves"]))
        request = game_request(f"{header.name}/best_move", position.game, [position.request_call("best_move")])
        plans.append(
            CasePlan(
                header.name, request, ("choice",), partial(judge_move, case=move), header.visibility, header.points
            )
        )
    return plans


def bounds_plans(case: BoundsCase) -> list[CasePlan]:
    header = case.header
    calls, windows = windows_case(case.positions, case.values)
    request = game_request(header.name, windows.game, calls)
    judge = partial(judge_bounds, case=windows)
    return [CasePlan(header.name, request, ("bounds",), judge, header.visibility, header.points)]
