"""Requests for the negamax observer (inputs only), each paired with its judge."""

from __future__ import annotations

from math import inf

from reference.negamax import Game, alphabeta_value, optimal_successors, true_value

from ...checks.bounds import BoundProbe
from ..kit import CasePlan, Judgement
from ..kit.messages import answer, roll_up
from .cases import BoundsCase, Counts, Position, PositionCase
from .describe import game_line, game_name
from .hints import sign_error
from .judges import (
    judge_bounds,
    judge_choice,
    judge_nodes,
    judge_value,
    once,
    with_game,
)

# Windows with alpha < beta, as in the tree lab: with alpha == beta the textbook fail-soft
# loop (raise alpha, cut on alpha >= beta) stops after one successor, and the contract
# accepts fail-soft submissions.
BOUND_WINDOWS = [(a, b) for a in (-1, 0, 1) for b in (-1, 0, 1) if a < b] + [(-inf, inf)]


def game_request(case_id: str, game: Game, calls: list[dict]) -> dict:
    return {"id": case_id, "game": game.name, "params": game.params, "calls": calls}


def bound_calls(positions: list[Position], values: list[int]) -> list[tuple[dict, BoundProbe, Position]]:
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


def random_plan(number: int, position: Position) -> CasePlan:
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
        hint = once(lambda: sign_error(answer(observed), position))
        verdicts = {
            "value": judge_value(answer(observed), value, position, value_call, hint),
            "nodes": judge_nodes(
                answer(observed),
                Counts(search.calls, search.next_states_calls, search.trace),
                position,
                value_call,
                hint,
            ),
            "choice": judge_choice(answer(observed, 1), position, value, optimal, position.call("best_move")),
            "bounds": judge_bounds([(probe, p) for _, probe, p in paired], observed[2:]),
        }
        ok = (
            f"value, num_value_call, next_states calls, best_move and the bound specification all right at "
            f"{position.text} ({game_name(game)})."
        )
        suffix = game_line(game) or f"\nThe game: {game_name(game)}."
        return Judgement({"random": roll_up(verdicts, ok, suffix=suffix)}, hint)  # an error fails all alike: said once

    return CasePlan(name, game_request(name, game, calls), ("random",), judge)


def position_plans(case: PositionCase) -> list[CasePlan]:
    header, position, window = case.header, case.position, case.window
    plans = []
    search_kinds = tuple(k for k in header.checks if k in ("value", "nodes"))
    if search_kinds:
        call_text = position.call("value", *window)
        expect = case.expect

        def judge_search(calls: list[dict]) -> Judgement:
            observed = answer(calls)
            hint = once(lambda: sign_error(observed, position, window))
            verdicts = {}
            if "value" in search_kinds:
                verdicts["value"] = judge_value(observed, expect["value"], position, call_text, hint)
            if "nodes" in search_kinds:
                search = alphabeta_value(position.game, position.state, position.player, *window)
                counts = Counts(expect["calls"], expect["expansions"], search.trace)
                verdicts["nodes"] = judge_nodes(observed, counts, position, call_text, hint)
            return Judgement({k: with_game(v, position.game) for k, v in verdicts.items()}, hint)

        request = game_request(
            f"{header.name}/value",
            position.game,
            [position.request_call("value", *window, trace="nodes" in search_kinds)],
        )
        plans.append(CasePlan(header.name, request, search_kinds, judge_search, header.visibility, header.points))
    if "choice" in header.checks:
        value, moves = case.expect["value"], list(case.expect["moves"])

        def judge_move(calls: list[dict]) -> Judgement:
            verdict = judge_choice(answer(calls), position, value, moves, position.call("best_move"))
            return Judgement({"choice": with_game(verdict, position.game)})

        request = game_request(f"{header.name}/best_move", position.game, [position.request_call("best_move")])
        plans.append(CasePlan(header.name, request, ("choice",), judge_move, header.visibility, header.points))
    return plans


def bounds_plans(case: BoundsCase) -> list[CasePlan]:
    header, game = case.header, case.positions[0].game
    paired = bound_calls(case.positions, case.values)
    probes = [(probe, position) for _, probe, position in paired]

    def judge(calls: list[dict]) -> Judgement:
        return Judgement({"bounds": with_game(judge_bounds(probes, calls), game)})

    request = game_request(header.name, game, [call for call, _, _ in paired])
    return [CasePlan(header.name, request, ("bounds",), judge, header.visibility, header.points)]
