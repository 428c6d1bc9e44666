"""The agents lab's judges: pure functions from the plain observations of one request to
verdicts per check kind, against expectations stored in the spec and the reference."""

from __future__ import annotations

import functools
from dataclasses import dataclass, replace
from typing import Any

from reference.agents import BoundRequirement, action_payoffs, course_variant, decide, immediate_wins

from ...checks import Verdict
from ...checks.show import describe_error, is_number, show
from ...checks.value import check_value
from ..kit import Judgement
from ..kit.messages import answer
from .cases import Position
from .hints import STEPS, agent_replays, bugs_for, count_hint, depth_hint, depth_steps, same_count, search_replays
from .picture import move_details, position_details

WORDS = {1: "a win", 0: "a tie", -1: "a loss"}


@dataclass(frozen=True)
class PositionPlan:
    """What one position's calls are judged against."""

    position: Position
    alpha: Any
    beta: Any
    kinds: tuple[str, ...]
    search: bool  # the first call is the search
    agent: bool  # the last call is the agent
    expect: dict[str, Any]
    min_saving: float = 0.0
    replay: bool = True  # classic-bug replays (off for the large first-move positions)
    witnesses: tuple[Position, ...] = ()  # speedup: hidden positions, one agent call each, after the rest


@dataclass(frozen=True)
class BoundsPlan:
    position: Position
    windows: tuple[tuple[Any, Any], ...]
    requirements: tuple[BoundRequirement, ...]
    replay: bool = True


def judge_position(observed: list[dict], plan: PositionPlan) -> Judgement:
    search = answer(observed, 0) if plan.search else None
    agent = answer(observed, 1 if plan.search else 0) if plan.agent else None
    position = plan.position
    bugs = functools.cache(lambda: bugs_for(position, plan.alpha, plan.beta, search, agent) if plan.replay else None)
    verdicts: dict[str, Verdict] = {}
    if "value" in plan.kinds and search is not None:
        verdicts["value"] = _value(search, plan)
    first = int(plan.search) + int(plan.agent)
    witnessed = [answer(observed, first + index) for index in range(len(plan.witnesses))]
    if "nodes" in plan.kinds:
        verdicts["nodes"] = _nodes(search, agent, witnessed, plan)
    if "choice" in plan.kinds and agent is not None:
        verdicts["choice"] = _choice(agent, plan)
    if "speedup" in plan.kinds and agent is not None:
        verdicts["speedup"] = _speedup(agent, witnessed, plan)
    if any(not v.passed for v in verdicts.values()):
        named = tuple(sorted(bugs() or ()))
        drawn = position_details(position)
        verdicts = {
            k: v if v.passed else v.with_diagnoses(named).with_details(v.details or drawn) for k, v in verdicts.items()
        }
    return Judgement(verdicts, bugs)


def _where(plan: PositionPlan) -> str:
    return "\n" + plan.position.drawing()


def _raised(call_text: str, call: dict, plan: PositionPlan) -> Verdict:
    return Verdict.fail(f"{call_text} raised {describe_error(call['error'])}{_where(plan)}")


def _value(search: dict, plan: PositionPlan) -> Verdict:
    text = plan.position.search_call(plan.alpha, plan.beta)
    if search.get("error"):
        return _raised(text, search, plan)
    verdict = check_value(search.get("returned"), plan.expect["payoff"], text)
    return verdict if verdict.passed else replace(verdict, message=verdict.message + _where(plan))


def _nodes(search: dict | None, agent: dict | None, witnessed: list[dict], plan: PositionPlan) -> Verdict:
    """Every call's `step` count against the chapter's: the search's, the agent's, and the
    agent's on the case's hidden witness positions (speed-up cases)."""
    position = plan.position
    checked = []
    if search is not None:
        checked.append((position.search_call(plan.alpha, plan.beta), search, plan.expect["steps"], "search", position))
    if agent is not None:
        checked.append((position.agent_call(), agent, plan.expect["agent_steps"], "agent", position))
    for witness, call in zip(plan.witnesses, witnessed):
        text = f"{witness.agent_call()} on a hidden position (moves {list(witness.moves)})"
        checked.append((text, call, witness_steps(witness), "witness", witness))
    lines = []
    for text, call, expected, which, where in checked:
        if call.get("error"):
            return _raised(text, call, plan)
        steps = call.get("steps")
        if not isinstance(steps, int) or steps != expected:
            steps = steps if isinstance(steps, int) else 0
            matching: list[str] = []
            if plan.replay and which != "witness":
                replays = (
                    search_replays(position, plan.alpha, plan.beta) if which == "search" else agent_replays(position)
                )
                matching = same_count(replays, steps)
            same, hint = count_hint(steps, expected, matching)
            if plan.replay and which != "witness" and not matching:
                hint = depth_hint(where, steps, depth_steps(where, plan.alpha, plan.beta, which)) or hint
            changed = "\nIt also changed env itself: play each move on a deepcopy(env)." if call.get("changed") else ""
            return Verdict.fail(
                f"{text} made {steps:,} {STEPS}; the chapter's algorithm (moves in validinputs order, "
                f"cut-off when {cutoff_rule(position.strict)}) makes {expected:,}.{same}{changed}\n{where.drawing()}",
                hint=hint,
            )
        lines.append(f"{text}: {steps:,} step calls")
    return Verdict.ok("; ".join(lines) + ", as the chapter's algorithm makes.")


def _choice(agent: dict, plan: PositionPlan) -> Verdict:
    position = plan.position
    text = position.agent_call()
    if agent.get("error"):
        return _raised(text, agent, plan)
    returned = agent.get("returned")
    optimal = plan.expect["optimal"]
    if agent.get("changed"):
        # the chapter's game loop steps env with the agent's action next: an env the agent has
        # already moved on plays another game (a search may use up the copy it is given)
        return Verdict.fail(
            f"{text} returned {show(returned)}, but it changed env itself: the game steps env with the "
            f"returned move next, so the agent must leave it as it was. Try each move on a deepcopy(env).{_where(plan)}"
        )
    if is_number(returned) and not isinstance(returned, bool) and returned in optimal:
        return Verdict.ok(f"{text} returned {show(returned)}, an optimal move (any of {optimal}).")
    env = position.env()
    if not (isinstance(returned, int) and not isinstance(returned, bool)) or returned not in env.validinputs:
        return Verdict.fail(
            f"{text} returned {show(returned)}, not a move of env.validinputs "
            f"{env.validinputs}; an optimal move is one of {optimal}.{_where(plan)}"
        )
    wins = immediate_wins(env)
    if wins:
        return Verdict.fail(
            f"{text} returned {returned}, but {wins[0] if len(wins) == 1 else list(wins)} wins at "
            f"once: a move that wins at once must be taken.{_where(plan)}"
        ).with_details(move_details(position, returned, wins, "A move that wins at once must be taken."))
    payoffs = action_payoffs(env, position.depth)
    best = max(payoffs.values())
    deep = "" if position.depth is None else f" at depth {position.depth}"
    return Verdict.fail(
        f"{text} returned {returned}, {WORDS.get(payoffs[returned], payoffs[returned])} for the player to move{deep}; "
        f"{optimal} {'is' if len(optimal) == 1 else 'are'} {WORDS.get(best, best)}.{_where(plan)}"
    ).with_details(move_details(position, returned, optimal))


def cutoff_rule(strict: bool) -> str:
    """The course's cut-off in the chapter's words (spec conventions)."""
    return "alpha > -beta" if strict else "alpha >= -beta"


@functools.cache
def witness_steps(position: Position) -> int:
    """The chapter's agent's `step` calls at a speed-up witness (computed once per process),
    with the course's cut-off."""
    return decide(position.env(), position.depth, course_variant(position.strict)).steps


def _speedup(agent: dict, witnessed: list[dict], plan: PositionPlan) -> Verdict:
    """The saving of the agent's `step` calls against the unpruned agent's, judged only on
    counts the chapter's search makes exactly: the counter lives in the student's process,
    so a count below the threshold proves nothing by itself (one divided by 50 did), and the
    case's own count is public (the spec), so the hidden witnesses' counts must match too."""
    text = plan.position.agent_call()
    if agent.get("error"):
        return _raised(text, agent, plan)
    steps, unpruned, reference = agent.get("steps"), plan.expect["unpruned_steps"], plan.expect["agent_steps"]
    steps = steps if isinstance(steps, int) and not isinstance(steps, bool) else unpruned
    saving, reference_saving = 1 - steps / unpruned, 1 - reference / unpruned
    said = (
        f"{text} on {plan.position.drawing().splitlines()[0]} made {steps:,} step calls; the chapter's agent "
        f"without pruning makes {unpruned:,}: {saving:.1%} fewer (needed: at least {plan.min_saving:.0%}; "
        f"the reference's pruned agent makes {reference:,}, {reference_saving:.1%} fewer)."
    )
    if steps != reference or saving < plan.min_saving:
        hint = (
            f"That is no pruning at all: break out of the loop as soon as {cutoff_rule(plan.position.strict)}, and "
            "record each improvement as the mover's bound."
            if steps >= unpruned
            else ""
        )
        why = (
            " The speed-up counts only when the count is exactly the chapter's pruned agent's: the step "
            "counter lives in your process, so a count no accepted search makes proves nothing. Prune as the "
            f"chapter does (moves in validinputs order, cut-off when {cutoff_rule(plan.position.strict)}) and the "
            "count follows."
        )
        return Verdict.fail(said + why, hint=hint)
    for witness, call in zip(plan.witnesses, witnessed):
        where = f"on a hidden position drawn for this grading ({witness.drawing().splitlines()[0]})"
        if call.get("error"):
            return Verdict.fail(f"{said}\nBut {where}, {witness.agent_call()} raised {describe_error(call['error'])}")
        counted, expected = call.get("steps"), witness_steps(witness)
        if counted != expected:
            return Verdict.fail(
                f"{said}\nBut {where}, {witness.agent_call()} made {show(counted)} step calls where the chapter's "
                f"agent makes {expected:,}: the speed-up is judged on counts the chapter's search makes, on "
                f"positions drawn at grading time too."
            )
    also = (
        f" The count is the chapter's, here and on {len(plan.witnesses)} hidden position(s)." if plan.witnesses else ""
    )
    return Verdict.ok(said + also)


def judge_bounds(observed: list[dict], plan: BoundsPlan) -> Judgement:
    """Every narrowed-window search against the bound specification in the chapter's
    convention: for the player to move the window is (own bound, -opponent's bound)."""
    failures = []
    position = plan.position
    for index, ((alpha, beta), requirement) in enumerate(zip(plan.windows, plan.requirements)):
        call = answer(observed, index)
        text = position.search_call(alpha, beta)
        if call.get("error"):
            failures.append(f"{text} raised {describe_error(call['error'])}")
        elif not requirement.holds(call.get("returned")):
            failures.append(
                f"{text} returned {show(call.get('returned'))}; the window for "
                f"{position.env().turn} is ({_num(requirement, alpha, beta, position)}) and the "
                f"result must be {requirement}"
            )
    total = len(plan.windows)
    bugs = functools.cache(lambda: _bounds_bugs(observed, plan) if plan.replay else None)
    if not failures:
        return Judgement(
            {"bounds": Verdict.ok(f"all {total} calls with narrowed windows met the bound specification.")}, bugs
        )
    message = (
        f"{len(failures)} of {total} calls with narrowed windows broke the bound specification "
        f"(alpha is the first player's best payoff so far, beta the second's). First: {failures[0]}"
        f"\n{position.drawing()}"
    )
    verdict = Verdict.fail(message, tuple(sorted(bugs() or ()))).with_details(position_details(position))
    return Judgement({"bounds": verdict}, bugs)


def _num(requirement: BoundRequirement, alpha: Any, beta: Any, position: Position) -> str:
    from reference.agents import window

    lo, hi = window(position.env(), alpha, beta)
    return f"{show(lo)}, {show(hi)}"


def _bounds_bugs(observed: list[dict], plan: BoundsPlan) -> frozenset[str]:
    """Bugs whose searches make the same step counts on every window (values are not
    compared: an accepted variant returns other values outside the window)."""
    consistent: frozenset[str] | None = None
    for index, (alpha, beta) in enumerate(plan.windows):
        call = answer(observed, index)
        if call.get("error"):
            continue
        steps = call.get("steps")
        if not isinstance(steps, int):
            return frozenset()  # no count to compare: no bug can be told
        found = frozenset(same_count(search_replays(plan.position, alpha, beta), steps))
        consistent = found if consistent is None else consistent & found
    return consistent or frozenset()
