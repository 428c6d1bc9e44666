"""Wording every lab shares: a stored expectation the reference disagrees with, a call that
got no answer, and the roll-up of a random case's verdicts into one."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from ...checks import Verdict

NO_ANSWER_ERROR = {"type": "NoAnswer", "message": "nothing came back for this call (an earlier call ended the process)"}
NO_ANSWER: dict[str, Any] = {"error": NO_ANSWER_ERROR}  # the observation of a call that never answered


def answer(calls: Sequence[Any], index: int = 0) -> dict:
    """The observation of call `index`, or NO_ANSWER when the process stopped before it."""
    return calls[index] if index < len(calls) and isinstance(calls[index], dict) else NO_ANSWER


def counted(n: int, noun: str) -> str:
    """`n` and `noun`, plural unless n is 1: "1 empty cell", "7 empty cells"."""
    return f"{n:,} {noun}{'' if n == 1 else 's'}"


def mismatch(path: str, line: int | None, field: str, stored: Any, computed: Any, note: str = "") -> str:
    """One line of `abgrade specs verify`: a stored expectation the reference disagrees with."""
    return f"{path}:{line}: {field}: stored {stored!r}, the reference computes {computed!r}{note}"


def roll_up(
    verdicts: Mapping[str, Verdict],
    ok: str,
    *,
    tag_kinds: bool = False,
    dedupe: bool = True,
    suffix: str = "",
    details: dict | None = None,
) -> Verdict:
    """A random case's verdicts as its one `random` verdict: `ok` when all pass, else the
    failing messages (`tag_kinds`: each prefixed with the kinds it failed; `dedupe`: an
    error that fails several kinds alike is said once), the classic bugs named by any of
    them, their direction hints (each once), `suffix` (what the case was), and `details`
    (default: the first failing verdict's picture). The failing kinds are the verdict's
    `parts`, in the order of `verdicts`."""
    failing: dict[str, list[str]] = {}
    messages: list[str] = []
    for kind, verdict in verdicts.items():
        if not verdict.passed:
            failing.setdefault(verdict.message, []).append(kind)
            messages.append(verdict.message)
    if not messages:
        return Verdict.ok(ok).with_details(details)
    if tag_kinds:
        text = "\n".join(f"[{', '.join(kinds)}] {message}" for message, kinds in failing.items())
    else:
        text = "\n".join(failing if dedupe else messages)
    bugs = tuple(sorted({bug for verdict in verdicts.values() if not verdict.passed for bug in verdict.diagnoses}))
    hints = dict.fromkeys(verdict.hint for verdict in verdicts.values() if not verdict.passed and verdict.hint)
    drawn = (
        details
        if details is not None
        else next((v.details for v in verdicts.values() if not v.passed and v.details), None)
    )
    parts = tuple(kind for kind, verdict in verdicts.items() if not verdict.passed)
    return replace(Verdict.fail(text + suffix, bugs, "\n".join(hints)), parts=parts).with_details(drawn)
