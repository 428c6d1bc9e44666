"""`bounds`: the alpha-beta bound specification (Knuth and Moore).

For a true value v and a window alpha <= beta, a correct result r satisfies
alpha <= v <= beta -> r == v;  v < alpha -> r <= alpha;  v > beta -> r >= beta.
Fail-hard and fail-soft searches both satisfy it; answers outside it are wrong. A course that
counts only one of the two as correct (the spec's `conventions: {returns: ...}`) gives each
probe the one result it demands (`exact`, with the convention's name): then only that passes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .show import is_number, show
from .verdict import Verdict


@dataclass(frozen=True)
class BoundProbe:
    """One call of the student's search at a position with a window, and the truth there.
    `exact`: the one result the course's return convention `returns` ("fail-soft" or
    "fail-hard") demands, when the spec counts only that one as correct."""

    call: str
    alpha: float
    beta: float
    true_value: float
    exact: float | None = None
    returns: str = ""


def demanded(returns: str | None, true_value: float, alpha: float, beta: float, soft: Callable[[], float]) -> dict:
    """What a BoundProbe holds beyond the window for a course whose only correct return
    convention is `returns` (None: both count, nothing more is demanded): fail-hard, the true
    value clamped into the window; fail-soft, what the course's own search returns (`soft`,
    computed only then)."""
    if returns == "fail-hard":
        return {"exact": min(max(true_value, alpha), beta), "returns": returns}
    if returns == "fail-soft":
        return {"exact": soft(), "returns": returns}
    return {}


def bound_requirement(probe: BoundProbe) -> str:
    v, a, b = probe.true_value, probe.alpha, probe.beta
    if probe.exact is not None and not a <= v <= b:
        how = (
            "clamped into the window"
            if probe.returns == "fail-hard"
            else "the best value the course's search finds, even outside the window"
        )
        return (
            f"the true value {show(v)} is {'below' if v < a else 'above'} the window and this course's searches "
            f"{probe.returns.replace('-', ' ')} (the spec's conventions), so the result must be exactly "
            f"{show(probe.exact)}, {how}"
        )
    if v < a:
        return f"the true value {show(v)} is below the window, so the result must be <= alpha = {show(a)}"
    if v > b:
        return f"the true value {show(v)} is above the window, so the result must be >= beta = {show(b)}"
    return f"the true value {show(v)} lies inside the window [{show(a)}, {show(b)}], so the result must be exactly {show(v)}"


def meets_bound(result: Any, probe: BoundProbe) -> bool:
    if not is_number(result):
        return False
    if probe.exact is not None:
        return bool(result == probe.exact)
    v, a, b = probe.true_value, probe.alpha, probe.beta
    if v < a:
        return result <= a
    if v > b:
        return result >= b
    return result == v


SPEC_REMINDER = (
    "(v is the true value of the state for the player; alpha <= v <= beta: return exactly v; "
    "v < alpha: return at most alpha; v > beta: return at least beta)"
)


def check_bounds(
    results: list[tuple[BoundProbe, Any, str | None]],
    *,
    function: str = "",
    shown: int = 0,
    describe: Callable[[int], str] | None = None,
) -> Verdict:
    """The one bound judge of every lab. `results`: (probe, returned value, what went wrong
    instead of returning, or None) for every window tried. Hooks: `function` names the
    searched function in the text; `shown` > 0 lists that many failures, each followed by
    `describe(index)` (a lab's picture of the position of results[index]), and a tally of
    the failing windows; 0 (the default) says the first failure in one line."""
    failures = [i for i, (p, r, e) in enumerate(results) if e is not None or not meets_bound(r, p)]
    calls = f"calls of {function}" if function else "calls"
    if not failures:
        return Verdict.ok(f"all {len(results)} {calls} with narrowed windows met the bound specification.")

    def outcome(index: int) -> str:
        probe, returned, error = results[index]
        if error is not None:
            return f"{probe.call} {error}"
        return f"{probe.call} returned {show(returned)}, but {bound_requirement(probe)}"

    if not shown:
        first = outcome(failures[0]) + ("" if results[failures[0]][2] is not None else ".")
        return Verdict.fail(
            f"{len(failures)} of {len(results)} {calls} with narrowed windows broke the bound specification. "
            f"First: {first}"
        )
    lines = [f"{len(failures)} of {len(results)} {calls} broke the bound specification {SPEC_REMINDER}."]
    for index in failures[:shown]:
        lines.append(f"{outcome(index)}." + (f"\n{describe(index)}" if describe else ""))
    if len(failures) > shown:
        windows: dict[str, int] = {}
        for index in failures:
            probe = results[index][0]
            key = f"({show(probe.alpha)}, {show(probe.beta)})"
            windows[key] = windows.get(key, 0) + 1
        tally = ", ".join(f"{key} {count}x" for key, count in windows.items())
        lines.append(f"... and {len(failures) - shown} more. Failing calls by window: {tally}.")
    return Verdict.fail("\n".join(lines))
