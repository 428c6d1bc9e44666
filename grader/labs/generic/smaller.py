"""How big a lab folder's case is, so that a failed hidden case can be shrunk (DESIGN.md,
"The smallest failing case"): the game's hook `smaller(case)` proposes the candidates, and
the grader measures every case itself, so that each candidate it sends is strictly smaller
than the case it came from and shrinking ends whatever the hook yields.

The measure is the case's own JSON (its world and call, the state encoded by the game): how
many values it holds (numbers, texts, truth values and nulls, a mapping's keys included),
then how large they are (each number's magnitude rounded up, each text's length). A subtree
cut, a heap or a piece of cheese gone make fewer values; a smaller heap, a lower depth or
smaller leaf values make them smaller. Nothing here runs the course's code.

One shape of case the grader knows without a hook: a world that is exactly the tree lab's
(`graph` and `terminal_nodes`) searched from its root (`tree_of`); its random cases shrink
with the tree lab's own cuts, measured and named as the tree lab's are."""

from __future__ import annotations

import math
from typing import Any

from reference.trees import GameTree, TreeError

from ..kit.messages import counted

TREE_WORLD = {"graph", "terminal_nodes"}
# a non-finite number's magnitude: larger than any finite one a case holds
INFINITE = 2**31


def case_size(world: dict | None, call: dict[str, Any]) -> tuple[int, int]:
    """(values, magnitude) of a case, compared as a tuple: fewer values first."""
    values, magnitude = _measure(world) if world is not None else (0, 0)
    more, larger = _measure(call)
    return values + more, magnitude + larger


def case_text(shown_call: str, world: dict | None) -> str:
    """The case in words for the headline: its call, and how big its world is."""
    return shown_call if world is None else f"{shown_call} in a world of {counted(_measure(world)[0], 'value')}"


def tree_of(world: dict | None, call: dict[str, Any], state: str) -> GameTree | None:
    """The case's tree when its world is exactly `graph` and `terminal_nodes` and the call's
    state is that tree's root (every node reachable from it); else None."""
    if world is None or set(world) != TREE_WORLD or not isinstance(call.get(state), str):
        return None
    try:
        return GameTree.from_mapping(world["graph"], world["terminal_nodes"], call[state])
    except (TreeError, TypeError, ValueError, AttributeError):
        return None


def _measure(data: Any) -> tuple[int, int]:
    if isinstance(data, dict):
        sizes = [_measure(key) for key in data] + [_measure(value) for value in data.values()]
    elif isinstance(data, list):
        sizes = [_measure(item) for item in data]
    elif isinstance(data, bool) or data is None:
        return 1, 0
    elif isinstance(data, (int, float)):
        return 1, math.ceil(abs(data)) if math.isfinite(data) else INFINITE
    else:
        return 1, len(str(data))
    return sum(n for n, _ in sizes), sum(m for _, m in sizes)
