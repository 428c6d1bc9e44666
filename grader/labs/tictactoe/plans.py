"""Requests for the tic-tac-toe observer (inputs only), each paired with its judge."""

from __future__ import annotations

from functools import cache

from reference.tictactoe import (
    game_over,
    parse_board,
)
from reference.tictactoe_search import (
    INF,
)

from ...checks.bounds import BoundProbe
from ..kit import CasePlan, Judgement
from ..kit.messages import answer, roll_up
from .boards import MARK
from .cases import (
    BOUND_SEARCHES,
    MINIMAX_KINDS,
    GameOverCase,
    Position,
    PositionCase,
    reference_expectations,
)
from .hints import bugs_behind_calls, game_over_bugs, replayed_bugs
from .judges import judge_bounds, judge_game_over, judge_minimax, named, returned_pair


def minimax_call(position: Position) -> dict:
    return {"function": "minimax", "board": position.board, "args": [position.player], "trace": True}


def bound_calls(position: Position, values: dict[str, int]) -> list[tuple[dict, BoundProbe]]:
    """maximize and minimize at `position` with windows below, around, above and touching
    the true value at their depth, each paired with what the bound specification demands."""
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
            paired.append(
                (
                    {"function": function, "board": position.board, "args": args, "trace": True},
                    BoundProbe(position.call(function, *args), alpha, beta, v),
                )
            )
    return paired


def random_plan(number: int, position: Position, finished: str) -> CasePlan:
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
        @cache
        def bugs() -> frozenset[str]:
            return (
                game_over_bugs(boards, observed[:2], returned_pair)
                & replayed_bugs(calls[2], answer(observed[2:]))
                & bugs_behind_calls(calls[3:], observed[3:])
            )

        verdicts = {"game_over": judge_game_over(boards, truths, observed[:2])}
        verdicts.update(judge_minimax(answer(observed[2:]), position, expected, MINIMAX_KINDS))
        verdicts["bounds"] = judge_bounds(position, [p for _, p in paired], observed[3:])
        verdicts = named(verdicts, bugs)
        ok = (
            f'game_over, score, nodes_visited, expansions, choice and bounds all right on "{position.board}" '
            f"with {MARK[position.player]} to move."
        )
        # an error that fails several kinds alike is said once
        return Judgement({"random": roll_up(verdicts, ok, tag_kinds=True)}, bugs)

    return CasePlan(name, {"id": name, "calls": calls}, ("random",), judge)


def game_over_plans(case: GameOverCase) -> list[CasePlan]:
    boards, expected = case.boards, case.expected

    def judge(calls: list[dict]) -> Judgement:
        bugs = cache(lambda: game_over_bugs(boards, calls, returned_pair))
        return Judgement(named({"game_over": judge_game_over(boards, expected, calls)}, bugs), bugs)

    request = {"id": case.header.name, "calls": [{"function": "game_over", "board": b} for b in boards]}
    return [CasePlan(case.header.name, request, ("game_over",), judge, case.header.visibility, case.header.points)]


def position_plans(case: PositionCase) -> list[CasePlan]:
    header, position, expected = case.header, case.position, case.expected
    plans = []
    kinds = tuple(k for k in header.checks if k in MINIMAX_KINDS)
    if kinds:
        search = minimax_call(position)
        request = {"id": f"{header.name}/minimax", "calls": [search]}

        def judge_search(calls: list[dict]) -> Judgement:
            bugs = cache(lambda: replayed_bugs(search, answer(calls)))
            return Judgement(named(judge_minimax(answer(calls), position, expected, kinds), bugs), bugs)

        plans.append(CasePlan(header.name, request, kinds, judge_search, header.visibility, header.points))
    if "bounds" in header.checks:
        paired = bound_calls(position, expected.bound_values)

        def judge_windows(calls: list[dict]) -> Judgement:
            bugs = cache(lambda: bugs_behind_calls([call for call, _ in paired], calls))
            return Judgement(named({"bounds": judge_bounds(position, [p for _, p in paired], calls)}, bugs), bugs)

        request = {"id": f"{header.name}/bounds", "calls": [call for call, _ in paired]}
        plans.append(CasePlan(header.name, request, ("bounds",), judge_windows, header.visibility, header.points))
    return plans
