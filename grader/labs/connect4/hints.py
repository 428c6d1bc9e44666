"""Classic bugs of the connect4 lab, recognised by replaying the course's search with each
one (`reference.connect4_search.BUGS`), and boards as feedback text."""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from typing import Any

from reference.connect4_search import BUGS, SeedSearch, Variant
from reference.games import connect4

from ...checks.show import is_number
from .cases import GAME

BUG_HINTS = {name: hint for name, (_, hint) in BUGS.items()}
DEEPENING_BUGS = ("deepening_ignores_time", "deepening_ignores_decided")
SEARCH_BUGS = tuple(name for name in BUGS if name not in DEEPENING_BUGS)
COUNT_BUGS = {  # what the nodes check says when a count is one of these bugs'
    "no_ordering": "a search without move ordering (successors in next_states order)",
    "reversed_ordering": "a search whose move ordering is reversed (worst successor first)",
    "no_cache": "a search without the cache (evaluate never stores or reads gCache)",
}


def drawn(State: tuple) -> str:
    """A board on its own indented lines, top row first."""
    return "".join(f"\n    {line}" for line in connect4.describe(State).splitlines())


def board_of(encoded: Any) -> str:
    try:
        return drawn(connect4.decode(encoded))
    except (TypeError, ValueError):
        return " (not a Connect Four board)"


def replay(variant: Variant, calls: list[dict]) -> list[tuple[Any, int]]:
    """What `variant` returns and how often it calls next_states for each of the observer's
    calls (evaluate / maxValue / minValue, cold or warm), on one search. A pure function of
    the grader's own calls (JSON, as sent), so worked out once per grader process: every
    grading of one spec and seed asks the same (a batch; a buggy file's cases are matched
    against every classic bug, the grader's main cost on such a file)."""
    return list(_replay(variant, json.dumps(calls, sort_keys=True)))


# a few hundred (value, count) pairs: each entry is small, and a spec's cases and their
# shrunk forms number in the tens
@functools.lru_cache(maxsize=1024)
def _replay(variant: Variant, calls_json: str) -> tuple[tuple[Any, int], ...]:
    calls = json.loads(calls_json)
    search = SeedSearch(game=GAME, variant=variant)
    results: list[tuple[Any, int]] = []
    for call in calls:
        if not call.get("warm"):
            search.cache = {}
        State = connect4.decode(call["state"])
        before = search.next_states_calls
        window = call.get("window", ())
        if call["function"] == "evaluate":
            f = search.maxValue if call["f"] == "maxValue" else search.minValue
            value = search.evaluate(State, call["limit"], f, *window)
        else:
            value = getattr(search, call["function"])(State, call["limit"], *window)
        results.append((value, search.next_states_calls - before))
    return tuple(results)


def same(seen: Any, expected: Any) -> bool:
    return is_number(seen) and is_number(expected) and seen == expected


def matches(observed: list[dict], replayed: list[tuple[Any, int]]) -> bool:
    if len(observed) != len(replayed):
        return False
    for call, (value, count) in zip(observed, replayed):
        if call.get("error") or call.get("stopped"):
            return False
        if not same(call.get("returned"), value) or call.get("expansions") != count:
            return False
    return True


def search_bugs(calls: list[dict], observed: list[dict]) -> frozenset[str]:
    """The classic bugs whose search returns and counts exactly what the student's did on
    every call of this request (the deepening bugs search like the course's code)."""
    found = {name for name in SEARCH_BUGS if matches(observed, replay(BUGS[name][0], calls))}
    if matches(observed, replay(Variant(), calls)):
        found.update(DEEPENING_BUGS)
    return frozenset(found)


def lazily(compute: Callable[[], frozenset[str]]) -> Callable[[], frozenset[str]]:
    """`compute`, worked out at most once, and only when asked."""
    done: list[frozenset[str]] = []

    def bugs() -> frozenset[str]:
        if not done:
            done.append(compute())
        return done[0]

    return bugs
