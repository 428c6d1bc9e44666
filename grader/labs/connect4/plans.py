"""Requests for the connect4 observer (inputs only), each paired with its judge."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

from reference.connect4_search import ACCEPTED, depth_limited_value
from reference.games import connect4

from ...checks.bounds import BoundProbe
from ...checks.show import show
from ..kit import CasePlan, Judgement, Shrinkable
from ..kit.messages import answer, counted, roll_up
from .cases import GAME, Connect4Case, Replay, accepted_counts, f_name, maximizing, replay, state_of, variant_counts
from .clock import GUARD_SECONDS
from .hints import BUGS, COUNT_BUGS, DEEPENING_BUGS, SEARCH_BUGS, lazily, search_bugs
from .judges import (
    judge_bounds,
    judge_cache,
    judge_choice,
    judge_deepening,
    judge_nodes,
    judge_solved,
    judge_value,
)

TEST_STATE = "7422341735647741166133573473242566"  # gTestState: X to move wins (one of the solved positions)


def request(case_id: str, calls: list[dict]) -> dict:
    return {"id": case_id, "test_state": connect4.encode(state_of(TEST_STATE)), "calls": calls}


def evaluate_call(State: tuple, limit: int, warm: bool = False, cache: bool = True) -> dict:
    return {
        "function": "evaluate",
        "state": connect4.encode(State),
        "limit": limit,
        "f": f_name(State),
        "warm": warm,
        "cache": cache,
    }


def text_of(State: tuple, limit: int, moves: str) -> str:
    return f"evaluate(State, {limit}, {f_name(State)}) after the moves {moves or '(none)'}"


def warm_calls(State: tuple, limit: int) -> list[dict]:
    return [evaluate_call(State, below, warm=below > 0, cache=below == limit) for below in range(limit + 1)]


def count_bug_counts(State: tuple, limit: int) -> dict[str, tuple[int, int]]:
    variants = {name: BUGS[name][0] for name in COUNT_BUGS}
    cold = variant_counts(State, limit, False, variants)
    warm = variant_counts(State, limit, True, variants)
    return {name: (cold[name], warm[name]) for name in variants}


def search_plan(
    name: str,
    moves: str,
    State: tuple,
    limit: int,
    kinds: tuple[str, ...],
    expect: Mapping[str, Any],
    visibility: str | None = None,
    points: dict | None = None,
) -> CasePlan:
    """value, cache and nodes from one request: evaluate on an empty cache, then (nodes,
    cache) evaluate at limits 0 to `limit` on one cache."""
    calls = [evaluate_call(State, limit)]
    if "nodes" in kinds or "cache" in kinds:
        calls += warm_calls(State, limit)
    text = text_of(State, limit, moves)

    def judge(observed: list[dict]) -> Judgement:
        bugs = lazily(lambda: search_bugs(calls[: len(observed)], observed))
        cold = answer(observed)
        verdicts = {}
        if "value" in kinds:
            verdicts["value"] = judge_value(cold, expect["value"], text, State, lazy_tuple(bugs, cold, expect))
        if "cache" in kinds:
            warm_text = f"evaluate at limits 0 to {limit} on one cache"
            checked = [(text, cold, State, limit), (warm_text, answer(observed, len(calls) - 1), State, limit)]
            verdict = judge_cache(checked, searches=lambda: known_searches(State, limit))
            verdicts["cache"] = verdict if verdict.passed else verdict.with_diagnoses(tuple(sorted(bugs())))
        if "nodes" in kinds:
            verdicts["nodes"] = judge_nodes(
                cold,
                answer(observed, len(calls) - 1),
                expect["cold"],
                expect["warm"],
                text,
                State,
                limit,
                lambda: count_bug_counts(State, limit),
            )
            if not verdicts["nodes"].passed:
                named = tuple(sorted(set(verdicts["nodes"].diagnoses) | bugs()))
                verdicts["nodes"] = verdicts["nodes"].with_diagnoses(named)
        return Judgement(verdicts, bugs)

    return CasePlan(name, request(f"{name}/search", calls), kinds, judge, visibility, points or {})


def known_searches(State: tuple, limit: int) -> Iterator[tuple[str, bool, Replay]]:
    """Every known search on the case's calls, replayed when reached: the accepted ones
    first (the course's code first), then each bug that changes what evaluate does (the
    deepening bugs search as the course does)."""
    seen = set()
    for name, variant in [*ACCEPTED.items(), *((n, BUGS[n][0]) for n in SEARCH_BUGS)]:
        if variant in seen:
            continue
        seen.add(variant)
        yield name, name in ACCEPTED, replay(State, limit, variant)


def lazy_tuple(bugs: Any, call: dict, expect: Mapping[str, Any]) -> tuple[str, ...]:
    """The bug names for a wrong value (worked out only when it is wrong)."""
    returned = call.get("returned")
    if isinstance(returned, (int, float)) and abs(returned - expect["value"]) < 1e-12:
        return ()
    return tuple(sorted(bugs()))


def bound_windows(v: float) -> list[tuple[float, float]]:
    """Windows alpha < beta inside [-1, 1] below, around, touching and above `v`."""
    windows = [(-1.0, 1.0)]
    if -1 < v < 1:
        windows.append(((v - 1) / 2, (v + 1) / 2))
    if v < 1:
        windows += [((v + 1) / 2, 1.0), (v, 1.0)]
    if v > -1:
        windows += [(-1.0, (v - 1) / 2), (-1.0, v)]
    return windows


def bounds_plan(case: Connect4Case) -> CasePlan:
    State, limit, v = case.state, case.limit, case.expect["value"]
    function = "maxValue" if maximizing(State) else "minValue"
    calls, probes = [], []
    for alpha, beta in bound_windows(v):
        calls.append(
            {
                "function": function,
                "state": connect4.encode(State),
                "limit": limit,
                "window": [alpha, beta],
                "cache": False,
            }
        )
        probes.append(BoundProbe(f"{function}(State, {limit}, {show(alpha)}, {show(beta)})", alpha, beta, v))

    def judge(observed: list[dict]) -> Judgement:
        bugs = lazily(lambda: search_bugs(calls[: len(observed)], observed))
        paired = [(probe, answer(observed, i)) for i, probe in enumerate(probes)]
        verdict = judge_bounds(paired, State)
        if not verdict.passed:
            verdict = verdict.with_diagnoses(tuple(sorted(bugs())))
        return Judgement({"bounds": verdict}, bugs)

    header = case.header
    return CasePlan(
        header.name, request(f"{header.name}/bounds", calls), ("bounds",), judge, header.visibility, header.points
    )


def deepening_plan(case: Connect4Case) -> CasePlan:
    State, header = case.state, case.header
    values = list(case.expect["values"])
    call = {
        "function": "pd_evaluate",
        "state": connect4.encode(State),
        "time_limit": case.time_limit,
        "f": f_name(State),
        "cache": False,
        "guard": {"seconds": case.time_limit + GUARD_SECONDS, "max_limit": case.max_limit},
        "clock": case.clock.request(),
    }
    text = f"pd_evaluate(State, {case.time_limit}, {f_name(State)}) after the moves {case.moves}"

    def judge(observed: list[dict]) -> Judgement:
        verdict, shown = judge_deepening(answer(observed), State, values, case.time_limit, text, case.clock)
        steps_decided = values and values[-1] in (-1, 1)
        if "wrong_values" in shown:  # wrong values: a search bug, not a deepening one (named when
            consistent = frozenset(SEARCH_BUGS)  # one explains every case)
            shown = set(SEARCH_BUGS)
        elif shown:
            consistent = frozenset(shown)
        else:  # behaved correctly here: the bug that would not have is ruled out
            ruled_out = "deepening_ignores_decided" if steps_decided else "deepening_ignores_time"
            consistent = frozenset(BUGS) - {ruled_out}
        if not verdict.passed:
            verdict = verdict.with_diagnoses(tuple(sorted(shown)))
        return Judgement({"deepening": verdict}, consistent)

    asked = request(f"{header.name}/deepening", [call])
    return CasePlan(
        header.name, asked, ("deepening",), judge, header.visibility, header.points, play=lambda ask: ask(asked)
    )


def choice_plan(case: Connect4Case) -> CasePlan:
    State, header = case.state, case.header
    call = {
        "function": "best_move",
        "state": connect4.encode(State),
        "time_limit": case.time_limit,
        "cache": False,
        "guard": {"seconds": case.time_limit + GUARD_SECONDS, "max_limit": case.max_limit},
        "clock": case.clock.request(),
    }
    text = f"best_move(State, {case.time_limit}) after the moves {case.moves}"

    stored = (case.expect["limit"], list(case.expect["moves_optimal"]))

    def judge(observed: list[dict]) -> Judgement:
        verdict = judge_choice(answer(observed), State, stored, text, case.time_limit, case.max_limit, case.clock)
        return Judgement({"choice": verdict})

    # played (asked through the grader) so that the call carries the CPU time the grader
    # measured: the stop rule of rounds of no known search's counts needs it
    asked = request(f"{header.name}/best_move", [call])
    return CasePlan(
        header.name, asked, ("choice",), judge, header.visibility, header.points, play=lambda ask: ask(asked)
    )


def solved_plan(case: Connect4Case) -> CasePlan:
    header = case.header
    states = [state_of(m) for m in case.positions]
    calls = [
        {
            "function": "pd_evaluate",
            "state": connect4.encode(S),
            "time_limit": case.time_limit,
            "f": f_name(S),
            "cache": False,
            "guard": {"seconds": case.time_limit + GUARD_SECONDS},
            "clock": case.clock.request(),
        }
        for S in states
    ]

    def judge(observed: list[dict]) -> Judgement:
        return Judgement({"solved": judge_solved(observed, states, list(case.expect["results"]), case.time_limit)})

    return CasePlan(
        header.name, request(f"{header.name}/solved", calls), ("solved",), judge, header.visibility, header.points
    )


def case_plans(case: Connect4Case) -> list[CasePlan]:
    header, checks = case.header, case.header.checks
    plans = []
    search = tuple(k for k in checks if k in ("value", "cache", "nodes"))
    if search:
        plans.append(
            search_plan(
                header.name,
                case.moves,
                case.state,
                case.limit,
                search,
                dict(case.expect),
                header.visibility,
                header.points,
            )
        )
    if "bounds" in checks:
        plans.append(bounds_plan(case))
    if "deepening" in checks:
        plans.append(deepening_plan(case))
    if "choice" in checks:
        plans.append(choice_plan(case))
    if "solved" in checks:
        plans.append(solved_plan(case))
    return plans


class LaterExpectations(Mapping[str, Any]):
    """Expectations worked out on first use: a random case's reference searches then run on
    the judging thread while the student's process runs the next case, not before the first."""

    def __init__(self, how: dict[str, Callable[[], Any]]) -> None:
        self._how = how
        self._known: dict[str, Any] = {}

    def __getitem__(self, key: str) -> Any:
        if key not in self._known:
            self._known[key] = self._how[key]()
        return self._known[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._how)

    def __len__(self) -> int:
        return len(self._how)


def random_plan(number: int, moves: str, limit: int) -> CasePlan:
    return position_random_plan(f"random {number}", moves, limit)


def position_random_plan(name: str, moves: str, limit: int, request_id: str | None = None) -> CasePlan:
    """A hidden position: value, cache and counts (any accepted search's) at once. It
    shrinks to a lower limit, then to the positions one move later (fewer empty cells)."""
    State = state_of(moves)
    expect = LaterExpectations(
        {
            "value": lambda: depth_limited_value(State, limit, game=GAME),  # the judges' memoised game
            "cold": lambda: accepted_counts(State, limit, warm=False),
            "warm": lambda: accepted_counts(State, limit, warm=True),
        }
    )
    inner = search_plan(name, moves, State, limit, ("value", "cache", "nodes"), expect)

    def judge(observed: list[dict]) -> Judgement:
        judgement = inner.judge(observed)
        verdict = roll_up(
            judgement.verdicts,
            f"value, cache and next_states calls all right at limit {limit} after the moves {moves}.",
            tag_kinds=True,
            suffix=f"\nThe moves: {moves}",
        )
        return Judgement({"random": verdict}, judgement.consistent_bugs)

    empty = sum(row.count(connect4.EMPTY) for row in State)
    return CasePlan(
        name,
        dict(inner.request, id=request_id or inner.request["id"]),
        ("random",),
        judge,
        prepare=lambda: dict(expect),
        shrink=Shrinkable(
            (empty, limit),
            f"a position with {counted(empty, 'empty cell')} searched to limit {limit}",
            lambda: (position_random_plan(name, m, n, f"{name}/smaller") for m, n in smaller_positions(moves, limit)),
        ),
    )


def smaller_positions(moves: str, limit: int) -> Iterator[tuple[str, int]]:
    """The same position at a lower limit (down to 1), then every column that takes one more
    stone without ending the game."""
    if limit > 1:
        yield moves, limit - 1
    State = state_of(moves)
    for column in range(7):
        if State[5][column] == connect4.EMPTY and not connect4.finished(
            connect4.drop(State, column, connect4.to_move(State))
        ):
            yield moves + str(column + 1), limit


__all__ = ["DEEPENING_BUGS", "case_plans", "random_plan"]
