"""`nodes` and `pruned`: what the student's search read, against the reference's reads.

Works on sequences of labels (tree node names, board notations), so every lab that can
observe its expansions shares it; `describe` turns a label into text for feedback.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from .verdict import Verdict


def first_divergence(seen: Sequence[str], expected: Sequence[str]) -> int | None:
    """Index of the first read where the two orders part, or None when they are equal."""
    for index, (a, b) in enumerate(zip(seen, expected)):
        if a != b:
            return index
    return None if len(seen) == len(expected) else min(len(seen), len(expected))


def check_count(seen: int, expected: int, what: str, hint: str = "") -> Verdict:
    """`hint`: what to look at when the count is off (shown unless a bug is diagnosed)."""
    if seen == expected:
        return Verdict.ok(f"{seen} {what}, as expected.")
    more = "more" if seen > expected else "fewer"
    return Verdict.fail(f"{seen} {what}; the reference has {expected} ({abs(seen - expected)} {more}).", hint=hint)


def _names(labels: Sequence[str], describe: Callable[[str], str], limit: int = 12) -> str:
    if not labels:
        return "none"
    shown = ", ".join(describe(x) for x in labels[:limit])
    return shown + (f", ... ({len(labels) - limit} more)" if len(labels) > limit else "")


def check_expansions(
    seen: Sequence[str],
    expected: Sequence[str],
    describe: Callable[[str], str] = str,
    diagnoses: Sequence[str] = (),
    extra: str = "",
    noun: str = "nodes",
) -> Verdict:
    """Same reads in the same order. On failure: the first divergence, what only one side
    read, and the names of the classic bugs whose reads match the student's."""
    index = first_divergence(seen, expected)
    if index is None:
        return Verdict.ok(f"your search read the same {len(seen)} {noun} in the same order as the reference.")
    seen_set, expected_set = set(seen), set(expected)
    only_seen = [x for x in seen if x not in expected_set]
    only_expected = [x for x in expected if x not in seen_set]
    lines = []
    if index < len(seen) and index < len(expected):
        lines.append(
            f"First difference at read #{index + 1}: you read {describe(seen[index])}, "
            f"the reference reads {describe(expected[index])}."
        )
    elif index >= len(seen):
        lines.append(
            f"Your search stopped after {len(seen)} reads; the reference goes on with {describe(expected[index])}."
        )
    else:
        lines.append(f"After the reference's last read, your search went on with {describe(seen[index])}.")
    if only_seen:
        lines.append(f"You read what the reference prunes: {_names(only_seen, describe)}.")
    if only_expected:
        lines.append(f"The reference reads what you never read: {_names(only_expected, describe)}.")
    if not only_seen and not only_expected:
        lines.append(f"You read the same {noun}, but in another order.")
    if extra:
        lines.append(extra)
    return Verdict.fail("\n".join(lines), tuple(diagnoses))


def matching_bugs(seen: Sequence[str], bug_orders: dict[str, Sequence[str]]) -> frozenset[str]:
    """The classic bugs whose search reads exactly what the student's search read."""
    seen = list(seen)
    return frozenset(name for name, order in bug_orders.items() if list(order) == seen)
