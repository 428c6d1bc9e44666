"""Requests for the agents lab's observer (positions as moves, and calls: inputs only),
each paired with its judge; matches are interactive plans (`tournaments.MatchPlay`)."""

from __future__ import annotations

import random
from collections.abc import Callable
from functools import partial
from typing import Any

from reference.agents import bound_requirement, immediate_wins, true_payoff, window

from ...sandbox.channel import WorkerFailure
from ..kit import Ask, CasePlan
from .cases import AGENT, GAMES, SEARCH, Match, MatchCase, Position, PositionCase
from .judges import BoundsPlan, PositionPlan, judge_bounds, judge_position, witness_steps
from .tournaments import MatchPlay, judge_match

REPLAY_LIMIT = 60_000  # stored steps above which classic bugs are not replayed (the first moves)
# speed-up witnesses: how many, and the moves played before one (a search big enough to
# differ from one position to the next; none where the mover can win at once, since the
# top level's immediate-win rule is judged by `choice`, not by the counts)
WITNESSES = 2
WITNESS_MOVES = {"ttt": (2, 3), "conn": (4, 8)}


def position_request(case_id: str, position: Position, calls: list[dict]) -> dict:
    return {"id": case_id, "game": position.game, "moves": list(position.moves), "calls": calls}


def search_call(position: Position, alpha: Any, beta: Any) -> dict:
    return {"function": SEARCH[position.game], "args": position.search_args(alpha, beta)}


def agent_call(position: Position, seed: int) -> dict:
    return {"function": AGENT[position.game], "args": position.agent_args(), "seed": seed}


def speedup_witnesses(name: str, position: Position, seed: int, public: int) -> tuple[Position, ...]:
    """Hidden positions of the speed-up case's game and depth, drawn from the grading's
    `seed`: the agent's step counts there must be the chapter's too, so a count copied from
    the spec earns nothing without the search that makes it. A position where the chapter's
    agent makes the case's own (`public`) count is drawn again: at Connect Four depth 3 most
    early positions make the first move's 532."""
    r = random.Random(f"abgrade speedup {seed} {name}")
    found: list[Position] = []
    while len(found) < WITNESSES:
        env = GAMES[position.game]()
        moves = []
        for _ in range(r.randint(*WITNESS_MOVES[position.game])):
            if env.done:
                break
            move = r.choice(env.validinputs)
            env._play(move)
            moves.append(move)
        witness = Position(position.game, tuple(moves), position.depth, position.strict)
        if env.done or immediate_wins(env) or witness in found or witness_steps(witness) == public:
            continue
        found.append(witness)
    return tuple(found)


def with_witnesses(request: dict, witnesses: tuple[Position, ...], seed: int) -> Callable[[Ask], list | WorkerFailure]:
    """The case's own request, then the agent on its hidden witnesses in a request of their
    own (each within its own time limit: the case's own calls get the time they always had);
    the observations of both, in that order, or the failure that stopped either."""

    def play(ask: Ask) -> list | WorkerFailure:
        own = ask(request)
        if isinstance(own, WorkerFailure):
            return own
        calls = [dict(agent_call(w, seed), moves=list(w.moves)) for w in witnesses]
        hidden = ask({**request, "id": f"{request['id']}/hidden", "calls": calls})
        return hidden if isinstance(hidden, WorkerFailure) else [*own, *hidden]

    return play


def position_plans(
    name: str,
    position: Position,
    kinds: tuple[str, ...],
    expect: dict,
    *,
    alpha: Any = -2,
    beta: Any = -2,
    search: bool = True,
    agent: bool = True,
    min_saving: float = 0.0,
    visibility: str | None = None,
    points: dict | None = None,
    seed: int = 0,
    witnesses: tuple[Position, ...] = (),
) -> list[CasePlan]:
    plans = []
    main = tuple(k for k in kinds if k != "bounds")
    replay = max(expect.get("steps", 0), expect.get("agent_steps", 0), expect.get("unpruned_steps", 0)) <= REPLAY_LIMIT
    replay = replay and "speedup" not in kinds
    if main:
        calls = ([search_call(position, alpha, beta)] if search else []) + (
            [agent_call(position, seed)] if agent else []
        )
        plan = PositionPlan(position, alpha, beta, main, search, agent, expect, min_saving, replay, witnesses)
        request = position_request(name, position, calls)
        plans.append(
            CasePlan(
                name,
                {"id": name} if witnesses else request,
                main,
                partial(judge_position, plan=plan),
                visibility,
                points or {},
                play=with_witnesses(request, witnesses, seed) if witnesses else None,
                prepare=(lambda: [witness_steps(w) for w in witnesses]) if witnesses else None,
            )
        )
    if "bounds" in kinds:
        bounds = bounds_plan(position, replay)
        calls = [search_call(position, alpha, beta) for alpha, beta in bounds.windows]
        plans.append(
            CasePlan(
                name,
                position_request(f"{name}/bounds", position, calls),
                ("bounds",),
                partial(judge_bounds, plan=bounds),
                visibility,
                points or {},
            )
        )
    return plans


def bounds_plan(position: Position, replay: bool = True) -> BoundsPlan:
    """Windows (lo, hi) below, touching, around and above the true payoff v, in the
    chapter's convention, as (alpha, beta) for the player to move."""
    env = position.env()
    v = true_payoff(env, depth=position.depth)
    first = env.turn == env.players[0]
    windows, requirements = [], []
    for lo, hi in ((v - 2, v - 1), (v - 1, v), (v - 1, v + 1), (v, v + 1), (v + 1, v + 2), (-2, 2)):
        alpha, beta = (lo, -hi) if first else (-hi, lo)
        assert window(env, alpha, beta) == (lo, hi)
        windows.append((alpha, beta))
        requirements.append(bound_requirement(v, lo, hi))
    return BoundsPlan(position, tuple(windows), tuple(requirements), replay)


def case_plans(case: PositionCase | MatchCase, seed: int | None = None) -> list[CasePlan]:
    """The requests of a fixed case; with the grading's `seed`, a speed-up case also gets its
    hidden witness positions (speedup_witnesses)."""
    header = case.header
    if isinstance(case, MatchCase):
        return [match_plan(header.name, case.match, ("games",), visibility=header.visibility, points=header.points)]
    expect = {key: case.expect[key] for key in case.expect}
    return position_plans(
        header.name,
        case.position,
        header.checks,
        expect,
        alpha=case.alpha,
        beta=case.beta,
        search=case.search,
        agent=case.agent,
        min_saving=case.min_saving,
        visibility=header.visibility,
        points=header.points,
        witnesses=speedup_witnesses(header.name, case.position, seed, case.expect["agent_steps"])
        if seed is not None and "speedup" in header.checks
        else (),
    )


def match_plan(
    name: str, match: Match, kinds: tuple[str, ...], judge=judge_match, visibility=None, points=None
) -> CasePlan:
    play = MatchPlay(match, name)
    return CasePlan(name, {"id": name}, kinds, partial(judge, play=play), visibility, points or {}, play=play.play)
