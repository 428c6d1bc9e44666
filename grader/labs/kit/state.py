"""State kept between calls: a search whose bounds, counters, visited sets or best move live
at module level and are never reset answers a call differently the second time. The
pipeline asks the first visible case again once every case is in (a probe that changes no
score) and, where some check failed and the answers differ, names this diagnosis with what
changed. Only answers are compared, and the nodes read where reading them is the contract
(the tree lab, lab folders): a cache that remembers results legitimately (lru_cache on a
pure helper, a transposition table where the counts allow it) answers the same."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...checks.show import show
from ...checks.state_hint import STATE_HINT, STATE_KEPT, with_state_hint

__all__ = ["STATE_HINT", "STATE_KEPT", "repeat_difference", "with_state_hint"]

# the fields of an observation that are the call's answer (a tic-tac-toe search's triple
# comes as choice, points and nodes; a negamax best move as move); counts the observer
# makes, times and traces are not compared
ANSWERS = ("returned", "choice", "points", "nodes", "move")
# the nodes a tree search (or a lab folder's search) read: the contract of those labs, so a
# table of results kept from an earlier call, which reads less, is state kept too
READS = "reads"


def repeat_difference(case: str, first: Sequence[Any], again: Sequence[Any]) -> str | None:
    """What changed when case `case`'s calls were asked again (None: every call answered
    as the first time). A call that raised or returned nothing either time is skipped:
    the probe names only an answer that changed."""
    for number, (before, after) in enumerate(zip(first, again), start=1):
        if not isinstance(before, dict) or not isinstance(after, dict) or before.get("error") or after.get("error"):
            continue
        for field in ANSWERS:
            if field in before and field in after and before[field] != after[field]:
                said = "returned" if field == "returned" else f"answered {field}"
                return (
                    f"Asked again once every case was in, call {number} of case {case!r} {said} "
                    f"{show(after[field])}, not {show(before[field])} as the first time: what it "
                    "answers must not depend on the calls before it."
                )
        first_reads, reads = before.get(READS), after.get(READS)
        if isinstance(first_reads, list) and isinstance(reads, list) and first_reads != reads:
            return (
                f"Asked again once every case was in, call {number} of case {case!r} read {len(reads):,} "
                f"nodes, not the {len(first_reads):,} it read the first time: what it reads must not "
                "depend on the calls before it."
            )
    return None
