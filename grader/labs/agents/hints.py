"""What the agents lab says about a wrong count or value, and the classic-bug replays
behind its diagnoses (`reference.agents.BUGS`)."""

from __future__ import annotations

from dataclasses import replace
from functools import cache

from reference.agents import BUGS, INCLUSIVE_CUTOFF
from reference.agents import bugs_for as course_bugs

from ...checks.show import is_number
from .cases import Position, agent_run, search_run

# every bug's hint (a strict course's mirrored cut-off bug too; Lab.hints words them for a course)
BUG_HINTS = {bug.name: bug.hint for bug in (*BUGS, INCLUSIVE_CUTOFF)}

# what a search written as each bug does, for "the same count as a search that ..."
DOES = {
    "no_pruning": "never breaks out of its loop (no pruning at all)",
    "bounds_never_updated": "never records an improvement in alpha or beta (a missing bound update)",
    "strict_cutoff": "cuts off only when alpha > -beta (a strict cut-off)",
    "inclusive_cutoff": "cuts off as soon as alpha >= -beta (where this course goes on)",
    "no_sentinel": "starts its bounds at -1 instead of the sentinel -2",
    "cutoff_not_negated": "cuts off when alpha >= beta (the opponent's bound not negated)",
    "sign_not_flipped": "takes the opponent's payoff as its own (the sign not flipped)",
    "wrong_player_bound": "raises the other player's bound when it improves",
    "immediate_win_not_taken": "searches a move that wins at once like any other",
}

STEPS = "`step` calls (on env and all its deep copies)"


@cache
def search_replays(position: Position, alpha, beta) -> dict[str, tuple[int, int]]:
    """bug -> (result, steps) of the search written as that bug."""
    return {bug.name: _pair(search_run(position, alpha, beta, bug)) for bug in course_bugs(position.strict)}


@cache
def agent_replays(position: Position) -> dict[str, tuple[frozenset[int], int]]:
    """bug -> (the actions it may choose, steps) of the agent written as that bug."""
    out = {}
    for bug in course_bugs(position.strict):
        decision = agent_run(position, bug)
        out[bug.name] = (frozenset(decision.group), decision.steps)
    return out


@cache
def depth_steps(position: Position, alpha, beta, which: str) -> dict[int, int]:
    """Connect Four: depth -> the chapter's `step` count one level shallower and one deeper
    than the call's own depth (`which` is "search" or "agent"), for an off-by-one depth."""
    if position.depth is None:
        return {}
    out = {}
    for depth in (position.depth - 1, position.depth + 1):
        if depth >= 0:
            other = replace(position, depth=depth)
            out[depth] = search_run(other, alpha, beta).steps if which == "search" else agent_run(other).steps
    return out


def depth_hint(position: Position, steps: int, at_depth: dict[int, int]) -> str:
    """The hint for a count that is the chapter's at the neighbouring depth, else ''."""
    for depth, count in at_depth.items():
        if count == steps:
            way = "deeper" if depth > (position.depth or 0) else "shallower"
            return (
                f"Your search makes the chapter's count at depth {depth}, not {position.depth}: it goes one level "
                f"{way} than asked. Check the depth test (return 0 when depth == 0) and that each level "
                "passes depth - 1."
            )
    return ""


def _pair(run) -> tuple[int, int]:
    return run.result, run.steps


def same_count(bugs: dict, steps: int) -> list[str]:
    return [name for name, (_, count) in bugs.items() if count == steps]


def count_hint(steps: int, expected: int, matching: list[str]) -> tuple[str, str]:
    """What a wrong count shows: the classic bugs that make exactly that count (a fact, said
    with the counts), and which way it goes (a direction hint, shown when no bug is named)."""
    if steps == 0:
        hint = (
            "Your function made no step call: it must try each move of env.validinputs on a deepcopy of env "
            "with step(move)."
        )
    elif steps > expected:
        hint = "Your search tries more moves than the chapter's: it prunes less (or searches again)."
    else:
        hint = "Your search tries fewer moves than the chapter's: it cuts off where the chapter goes on."
    same = " It makes exactly as many as a search that " + " or that ".join(DOES[m] for m in matching) + "."
    return (same if matching else ""), hint


def bugs_for(
    position: Position,
    alpha,
    beta,
    search: dict | None,
    agent: dict | None,
) -> frozenset[str]:
    """The classic bugs that reproduce the observed search (returned value and steps) and
    agent call (an action it may choose, and steps); a call that raised rules nothing out."""
    names = {bug.name for bug in course_bugs(position.strict)}
    if search is not None and not search.get("error"):
        returned = search.get("returned")
        replays = search_replays(position, alpha, beta)
        names &= {
            n
            for n, (result, steps) in replays.items()
            if steps == search.get("steps") and is_number(returned) and returned == result
        }
    if agent is not None and not agent.get("error"):
        replays_agent = agent_replays(position)
        names &= {
            n
            for n, (group, steps) in replays_agent.items()
            if steps == agent.get("steps") and _action(agent.get("returned")) in group
        }
    return frozenset(names)


def _action(returned) -> int | None:
    return returned if is_number(returned) and isinstance(returned, int) else None
