"""Sign errors, recognised by replaying the course's search with each one, and count hints."""

from __future__ import annotations

from math import inf
from typing import Any, cast

from reference.negamax import Game

from ...checks.show import is_number
from .cases import Position, StateCall

SIGN_HINTS = {  # sign errors, recognised by replaying the course's search with each one
    "value_not_negated": (
        "a sign error: the value of each successor is not negated. A successor's value is from "
        "the other player's side, so its sign must flip: "
        "val = max(val, -value(ns, other(player), -beta, -alpha))."
    ),
    "utility_negated": (
        "a sign error: the utility of a finished state is negated. Return utility(State, player) "
        "as it is (it is already from the point of view of `player`); the minus belongs before "
        "the recursive value(...)."
    ),
}


def signed_search(
    game: Game, state: Any, player: Any, alpha: float, beta: float, bug: str, start: float | None, strict: bool = False
) -> tuple[float, tuple]:
    """The course's alpha-beta with one sign error (`bug`: a SIGN_HINTS name):
    its result and the states it expands, in order, as the observer encodes them."""
    trace: list = []

    def value(state: Any, player: Any, alpha: float, beta: float) -> float:
        if game.finished(state):
            utility = cast(int, game.utility(state, player))  # a finished state's utility is a number
            return -utility if bug == "utility_negated" else utility
        val = alpha if start is None else start
        trace.append(game.encode(state))
        for successor in game.next_states(state, player):
            child = value(successor, game.other(player), -beta, -alpha)
            val = max(val, child if bug == "value_not_negated" else -child)
            if val > beta or (val == beta and not strict):
                return val
            alpha = max(val, alpha)
        return val

    return value(state, player, alpha, beta), tuple(trace)


def sign_error(observed: StateCall, position: Position, window: tuple[float, ...] = ()) -> frozenset[str]:
    """The sign errors (SIGN_HINTS names) whose search expands exactly the states the
    student's did and returns exactly its value on this call. Replayed only when some
    check failed; the pipeline keeps a name only if it explains every case."""
    seen = observed.get("expanded")
    seen = seen if isinstance(seen, list) else []
    expansions = observed.get("expansions")
    expansions = expansions if isinstance(expansions, int) else len(seen)
    if observed.get("error"):
        return frozenset()
    alpha, beta = tuple(window[:2]) if len(window) >= 2 else (-1, 1)  # value's own defaults
    found = set()
    for bug in SIGN_HINTS:
        for start in (None, -inf):
            returned, trace = signed_search(
                position.game, position.state, position.player, alpha, beta, bug, start, position.strict
            )
            if expansions == len(trace) and tuple(seen) == trace[: len(seen)] and observed.get("returned") == returned:
                found.add(bug)
                break
    return frozenset(found)


def cutoff_rule(strict: bool) -> str:
    """The course's cut-off in its code's words (the spec's conventions)."""
    return "val > beta" if strict else "val >= beta"


def count_hint(counter: Any, expected: int, strict: bool = False) -> str:
    """Why the count is off when the search expanded exactly the reference's states."""
    if not is_number(counter) or counter == 0:
        return ""
    if counter < expected and strict:
        return (
            "Your search expanded exactly the states the reference expands but counted fewer calls of value: "
            "it stops at a finished successor worth exactly beta, where this course goes on until val > beta, "
            "or value doesn't add 1 once per call."
        )
    if counter < expected:
        return (
            "Your search expanded exactly the states the reference expands, so calls of value are missing "
            "from the count: add 1 in value, once per call, and let alphaBeta recurse through value "
            "(never through alphaBeta itself)."
        )
    return (
        "Your search expanded exactly the states the reference expands, so the extra calls are counted twice "
        "or made on finished states that the reference prunes: count once per call of value, and return as "
        + (
            "soon as val > beta."
            if strict
            else "soon as val >= beta (a successor worth exactly beta must stop the loop too)."
        )
    )
