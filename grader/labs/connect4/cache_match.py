"""Whether the reports of gCache after a case's cold and warm calls are exactly the caches a
known search leaves (cases.Replay): the report is the student's process's word, so a report
with wrong entries left out and its size lowered held only sound entries. Pure functions."""

from __future__ import annotations

from typing import Any

from reference.connect4_search import FLAG_SPELLINGS

from ...checks.show import is_number, show

CACHE_REPORTED = 5000  # the observer sends at most this many entries a report (observer.CACHE_LIMIT)


# What an honest search most likely did to leave each kind of difference, when its counts
# are an accepted search's and every entry holds (the cache judge says it after the difference).
EXTRA_ENTRY = (
    "your code most likely writes to gCache somewhere besides evaluate's store_cache calls (in maxValue or "
    "minValue, at a finished state, or under another limit): that search stores exactly one entry for each "
    "(State, limit) evaluate searched, and nothing else"
)
OTHER_FLAG = (
    "your store_cache most likely picks the flag against another window than the one the value was searched "
    "on: after searching a cached bound again on (alpha, v) or (v, beta), store with that same window, and "
    "compare value <= alpha, alpha < value < beta, value >= beta"
)
MISSING_ENTRY = (
    "your evaluate most likely leaves a path without store_cache: store the value after every search it makes, "
    "a cached bound searched again included"
)
OTHER_SIZE = "your code most likely stores entries that search doesn't (or drops some)"


class Difference:
    """How a reported cache differs from a search's: what to say, the state to draw (None
    when there is none), and the honest mistake that most likely leaves it (`cause`; None
    when no search leaves it: only a report that is not the observer's does)."""

    def __init__(self, said: str, State: tuple | None = None, limit: Any = None, cause: str | None = None) -> None:
        self.said, self.State, self.limit, self.cause = said, State, limit, cause


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
            return Difference(
                f"gCache holds an entry for (State, {mark[1]}) that search never stores", None, mark[1], EXTRA_ENTRY
            )
        if not same_entry(seen, stored):
            return Difference(
                f"gCache[(State, {mark[1]})] = ({show(seen[0])}, {show(seen[1])}), that search stores "
                f"({stored[0]!r}, {show(stored[1])})",
                stored[2],
                mark[1],
                OTHER_FLAG,
            )
    if len(entries) >= CACHE_REPORTED:  # the observer sent no more: what it left out can't be compared
        return size_difference(size, cache, OTHER_SIZE)
    missing = [mark for mark in cache if mark not in entries]
    left_out = [m for m in missing if before is not None and m in before and same_entry(before[m], cache[m])]
    if len(left_out) < len(missing) or repeated != len(missing):
        mark = next((m for m in missing if m not in left_out), missing[0] if missing else None)
        if mark is None:
            return Difference(f"the report leaves out {show_count(repeated)} as sent before, but none is")
        stored = cache[mark]
        return Difference(
            f"the entry for (State, {mark[1]}) that search stores is not there", stored[2], mark[1], MISSING_ENTRY
        )
    # every entry sent and each the search's: the observer's size is their count, so only a
    # report that is not the observer's gets here with another
    return size_difference(size, cache)


def size_difference(size: Any, cache: dict, cause: str | None = None) -> Difference | None:
    if size == len(cache):
        return None
    return Difference(f"gCache holds {show_count(size)}, that search's cache {len(cache):,}", cause=cause)


def show_count(size: Any) -> str:
    return f"{size:,} entries" if type(size) is int else repr(size)
