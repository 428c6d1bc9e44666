"""The likely cause of a failure, said right under its first line so that every writer
(the terminal summary cut to a few lines, the feedback file, the JSON) shows it before
the details: the diagnosed classic bugs with their hints (all of them when several would
have done exactly what was observed), else the judge's direction hint. A direction hint
is dropped when a bug is diagnosed: it was worked out from which way a count differs
alone, and may point elsewhere (a cut-off hint for a cache bug)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from .verdict import Verdict

CAUSE = "Likely cause"
HINT = "Hint"


def cause_lines(diagnoses: Sequence[str], hints: Mapping[str, str], direction: str = "") -> list[str]:
    """The lines that name the likely cause ([] when there is none to name)."""
    said = [hints.get(name) or name for name in diagnoses]  # plain words; the name if a lab has none
    if len(said) == 1:
        return [f"{CAUSE}: {said[0]}"]
    if said:
        return [f"{CAUSE}, one of {len(said)} classic bugs that would have done exactly this:"] + [
            f"  - {text}" for text in said
        ]
    return [f"{HINT}: {direction}"] if direction else []


def with_cause(message: str, cause: Sequence[str]) -> str:
    """`message` with the cause lines after its first line."""
    if not cause:
        return message
    headline, _, rest = message.partition("\n")
    return "\n".join([*([headline] if headline else []), *cause, *([rest] if rest else [])])


def explained(verdict: Verdict, diagnoses: Sequence[str], hints: Mapping[str, str]) -> tuple[str, str]:
    """A failed verdict's text with its likely cause placed, and the cause alone. `diagnoses`:
    the verdict's bugs that explain every case (the pipeline's choice)."""
    if verdict.passed:
        return verdict.message, ""
    cause = cause_lines(diagnoses, hints, verdict.hint)
    return with_cause(verdict.message, cause), "\n".join(cause)
