"""Whether the reports of gCache after a case's cold and warm calls are exactly the caches a
known search leaves (cases.Replay): the report is the student's process's word, so a report
with wrong entries left out and its size lowered held only sound entries. Pure functions."""

from __future__ import annotations

from typing import Any

from reference.connect4_search import FLAG_SPELLINGS

from ...checks.show import is_number, show

CACHE_REPORTED = 5000  # the observer sends at most this many entries a report (observer.CACHE_LIMIT)


class Difference:
    """How a reported cache differs from a search's: what to say, and the state to draw
    (None when there is none)."""

    def __init__(self, said: str, State: tuple | None = None, limit: Any = None) -> None:
        self.said, self.State, self.limit = said, State, limit


def reported(report: dict) -> dict | None:
    """The report's entries by key, (rows, limit) -> (flag, value); None when an entry is
    not one the observer sends or a key comes twice."""
    raw = report.get("entries")
    if not isinstance(raw, list):
        return None
    held: dict = {}
    for entry in raw:
        key = entry.get("key") if isinstance(entry, dict) else None
        if not isinstance(key, dict):
            return None
        state = key.get("state")
        if not isinstance(state, list) or not all(isinstance(row, str) for row in state):
            return None
        limit = key.get("limit")
        if limit is not None and type(limit) is not int:
            return None
        mark = (tuple(state), limit)
        if mark in held:
            return None
        held[mark] = (entry.get("flag"), entry.get("value"))
    return held


def same_entry(seen: tuple, stored: tuple) -> bool:
    """A reported (flag, value) is the stored one: the same flag (any accepted spelling) and
    the same number."""
    flag, value = seen
    return (
        isinstance(flag, str)
        and FLAG_SPELLINGS.get(flag) == FLAG_SPELLINGS.get(stored[0])
        and is_number(value)
        and is_number(stored[1])
        and abs(value - stored[1]) < 1e-12
    )


def cache_difference(report: dict, cache: dict, before: dict | None) -> Difference | None:
    """None when `report` is the search's `cache` (cases.Replay.reported); `before`: the
    entries of the request's report before it, which the observer leaves out of this one
    when unchanged (counted in `repeated`)."""
    entries = reported(report)
    if entries is None:
        return Difference("the report's entries are not the observer's")
    size, repeated = report.get("size"), report.get("repeated", 0)
    for mark, seen in entries.items():
        stored = cache.get(mark)
        if stored is None:
            return Difference(f"gCache holds an entry for (State, {mark[1]}) that search never stores", None, mark[1])
        if not same_entry(seen, stored):
            return Difference(
                f"gCache[(State, {mark[1]})] = ({show(seen[0])}, {show(seen[1])}), that search stores "
                f"({stored[0]!r}, {show(stored[1])})",
                stored[2],
                mark[1],
            )
    if len(entries) >= CACHE_REPORTED:  # the observer sent no more: what it left out can't be compared
        return size_difference(size, cache)
    missing = [mark for mark in cache if mark not in entries]
    left_out = [m for m in missing if before is not None and m in before and same_entry(before[m], cache[m])]
    if len(left_out) < len(missing) or repeated != len(missing):
        mark = next((m for m in missing if m not in left_out), missing[0] if missing else None)
        if mark is None:
            return Difference(f"the report leaves out {show_count(repeated)} as sent before, but none is")
        stored = cache[mark]
        return Difference(f"the entry for (State, {mark[1]}) that search stores is not there", stored[2], mark[1])
    return size_difference(size, cache)


def size_difference(size: Any, cache: dict) -> Difference | None:
    if size == len(cache):
        return None
    return Difference(f"gCache holds {show_count(size)}, that search's cache {len(cache):,}")


def show_count(size: Any) -> str:
    return f"{size:,} entries" if type(size) is int else repr(size)
