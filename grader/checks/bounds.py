"""`bounds`: the alpha-beta bound specification (Knuth and Moore).

For a true value v and a window alpha <= beta, a correct result r satisfies
alpha <= v <= beta -> r == v;  v < alpha -> r <= alpha;  v > beta -> r >= beta.
Fail-hard and fail-soft searches both satisfy it; answers outside it are wrong.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .show import is_number, show
from .verdict import Verdict


@dataclass(frozen=True)
class BoundProbe:
    """One call of the student's search at a position with a window, and the truth there."""

    call: str
    alpha: float
    beta: float
    true_value: float


def bound_requirement(probe: BoundProbe) -> str:
    v, a, b = probe.true_value, probe.alpha, probe.beta
    if v < a:
        return f"the true value {show(v)} is below the window, so the result must be <= alpha = {show(a)}"
    if v > b:
        return f"the true value {show(v)} is above the window, so the result must be >= beta = {show(b)}"
    return f"the true value {show(v)} lies inside the window [{show(a)}, {show(b)}], so the result must be exactly {show(v)}"


def meets_bound(result: Any, probe: BoundProbe) -> bool:
    if not is_number(result):
        return False
    v, a, b = probe.true_value, probe.alpha, probe.beta
    if v < a:
        return result <= a
    if v > b:
        return result >= b
    return result == v


def check_bounds(results: list[tuple[BoundProbe, Any, str | None]]) -> Verdict:
    """`results`: (probe, returned value, error text or None) for every window tried."""
    failures = [(p, r, e) for p, r, e in results if e is not None or not meets_bound(r, p)]
    if not failures:
        return Verdict.ok(f"all {len(results)} calls with narrowed windows met the bound specification.")
    probe, returned, error = failures[0]
    if error is not None:
        first = f"{probe.call} raised {error}"
    else:
        first = f"{probe.call} returned {show(returned)}, but {bound_requirement(probe)}."
    return Verdict.fail(
        f"{len(failures)} of {len(results)} calls with narrowed windows broke the bound specification. First: {first}"
    )
