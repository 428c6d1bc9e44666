"""Hidden cases generated at grading time from the run's seed: random positions of both
games (each one `random` test: value, step count, choice and the bound specification at
once) and matches with fresh seeds (one `random` test each)."""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial

from reference.agents import course_variant, decide, optimal_actions, run_payoff

from ...spec import Spec
from ..kit import CasePlan, Judgement, Shrinkable
from ..kit.messages import counted, roll_up
from ..kit.random_settings import Setting, int_range, read_settings, rng
from .cases import GAME_NAMES, GAMES, Match, Position
from .judges import judge_bounds
from .plans import bounds_plan, match_plan, position_plans
from .tournaments import MatchPlay, match_verdict

RANDOM_SETTINGS = {
    "ttt_moves": int_range([2, 6], 0, 8),  # random moves played before a tic-tac-toe position
    "conn_moves": int_range([2, 16], 0, 30),
    "conn_depth": int_range([1, 4], 0, 4),
    "games": Setting(4, lambda v: type(v) is int and 0 <= v <= 50, "must be a whole number within 0..50"),
}


def random_positions(spec: Spec, seed: int) -> list[Position]:
    """`spec.random.count` unfinished positions, tic-tac-toe and Connect Four in turn."""
    assert spec.random is not None
    settings = read_settings(spec, RANDOM_SETTINGS)
    positions = []
    for index in range(spec.random.count):
        r = rng(seed, index)
        game = "ttt" if index % 2 == 0 else "conn"
        low, high = settings[f"{game}_moves"]
        depth = r.randint(*settings["conn_depth"]) if game == "conn" else None
        positions.append(_walk(r, game, r.randint(low, high), depth, spec.conventions.strict))
    return positions


def _walk(r, game: str, length: int, depth: int | None, strict: bool = False) -> Position:
    """Random legal moves from the start; a walk that ends the game starts again."""
    while True:
        env = GAMES[game]()
        moves = []
        for _ in range(length):
            if env.done:
                break
            move = r.choice(env.validinputs)
            env._play(move)
            moves.append(move)
        if not env.done:
            return Position(game, tuple(moves), depth, strict)


def random_matches(spec: Spec, seed: int) -> list[Match]:
    settings = read_settings(spec, RANDOM_SETTINGS)
    games = settings["games"]
    if not games:
        return []
    return [Match("ttt", "random", games, f"random {seed}"), Match("conn", "depth", games, f"random {seed}", 3)]


def random_plans(spec: Spec, seed: int) -> list[CasePlan]:
    plans = []
    for number, position in enumerate(random_positions(spec, seed), start=1):
        plans.append(random_position_plan(f"random {number}", position, seed * 1000 + number))
    for number, match in enumerate(random_matches(spec, seed), start=1):
        plans.append(match_plan(f"random match {number}", match, ("random",), judge=judge_random_match))
    return plans


def random_position_plan(name: str, position: Position, seed: int, request_id: str | None = None) -> CasePlan:
    """One request: the search (value, steps), the agent (choice, steps) and the bound
    windows, judged at once as one `random` test. It shrinks to the positions one move later
    (fewer empty cells) and, at Connect Four, to a shallower search; the agent's `random`
    keeps the case's seed."""
    reward, done = position.search_args(-2, -2)[:2]
    course = course_variant(position.strict)
    search = run_payoff(position.env(), reward, done, -2, -2, position.depth, course)
    expect = {
        "payoff": search.result,
        "steps": search.steps,
        "agent_steps": decide(position.env(), position.depth, course).steps,
        "optimal": sorted(optimal_actions(position.env(), position.depth)),
    }
    (main,) = position_plans(name, position, ("value", "nodes", "choice"), expect, seed=seed)
    bounds = bounds_plan(position)
    calls = main.request["calls"] + [
        {"function": main.request["calls"][0]["function"], "args": position.search_args(a, b)}
        for a, b in bounds.windows
    ]
    request = dict(main.request, calls=calls, id=request_id or main.request["id"])
    return CasePlan(
        name,
        request,
        ("random",),
        partial(judge_random_position, main=main, bounds=bounds),
        shrink=Shrinkable(
            position_size(position),
            position_text(position),
            lambda: (random_position_plan(name, p, seed, f"{name}/smaller") for p in smaller_positions(position)),
        ),
    )


def position_size(position: Position) -> tuple[int, ...]:
    """(empty cells, the search's depth at Connect Four)."""
    empty = int((position.env().state == 0).sum())
    return (empty,) if position.depth is None else (empty, position.depth)


def position_text(position: Position) -> str:
    """The size in words (nothing of the position itself: a random case's is hidden)."""
    game = GAME_NAMES[position.game]
    depth = "" if position.depth is None else f", searched to depth {position.depth}"
    return f"a {game} position with {counted(position_size(position)[0], 'empty cell')}{depth}"


def smaller_positions(position: Position) -> Iterator[Position]:
    """A shallower search first (Connect Four, down to depth 1), then every move of
    `validinputs` that doesn't end the game."""
    if position.depth is not None and position.depth > 1:
        yield position.moved(depth=position.depth - 1)
    for move in position.env().validinputs:
        later = position.moved(move)
        if not later.finished:
            yield later


def judge_random_position(observed: list[dict], main: CasePlan, bounds) -> Judgement:
    first = main.judge(observed[:2])
    second = judge_bounds(observed[2:], bounds)
    verdicts = {**first.verdicts, **second.verdicts}
    ok = f"value, step counts, choice and {len(bounds.windows)} narrowed windows all right on a hidden position."
    verdict = roll_up(verdicts, ok, tag_kinds=True)

    def bugs():
        a, b = first.bugs(), second.bugs()
        return a if b is None else b if a is None else a & b

    return Judgement({"random": verdict}, bugs)


def judge_random_match(observed: list[dict], play: MatchPlay) -> Judgement:
    verdict = match_verdict(play)
    return Judgement({"random": verdict if verdict.passed else verdict.with_diagnoses(())})


def check_random(spec: Spec) -> None:
    read_settings(spec, RANDOM_SETTINGS)
