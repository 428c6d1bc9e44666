"""What an instructor adds on top of a graded score: a late penalty and an override.

Both live in gradebook tables of their own, keyed by (lab, student) and never by a
graded row, so that grading a submission again replaces its graded result and nothing
else. The final score is computed from the three here, in one pure function, and the words
for the adjustments are made here too, so that every output (the terminal, grades.csv, the
feedback in Markdown and HTML, summary.*, class.html, `gradebook show` and every LMS
export) shows the same numbers:

- penalty: `percent` of the *maximum* score (as Canvas's late policy deducts a share of
  the points possible), taken off the graded score, never below 0;
- override `set N`: the final score is N, whatever the graded score and the penalty
  (an instructor who says "give her 80" means 80);
- override `add N`: N points (negative to take off) on top of the penalised score,
  never below 0; a submission that could not be graded has nothing to add to;
- a student whose submission time is unknown (no named source had it: late.py) is never
  penalised, and shown as "time unknown".
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

OVERRIDE_MODES = ("set", "add")
TIME_UNKNOWN = "unknown"  # Penalty.source when no source the instructor named had the time


@dataclass(frozen=True)
class Penalty:
    """A submission's lateness, as decided by the policy in force when it was computed."""

    submitted_at: str  # ISO 8601 with its offset; "" when the time is unknown
    source: str  # where the time came from: "timestamps", "file name", "file time", or TIME_UNKNOWN
    days_late: int  # started days after the due date and grace period; 0: on time (or unknown)
    percent: float  # of the maximum score
    policy: str  # the policy, as one line (for the audit)

    @property
    def time_unknown(self) -> bool:
        return self.source == TIME_UNKNOWN


@dataclass(frozen=True)
class Override:
    """The instructor's word on a student's score, with who, when and why."""

    mode: str  # "set" or "add"
    points: float
    reason: str
    by: str
    at: str  # ISO 8601, UTC

    def describe(self) -> str:
        """`set 80` or `add -2.5`: never a cell that starts like a formula."""
        return f"{self.mode} {self.points:g}"


@dataclass(frozen=True)
class Mark:
    """Every number of a student's score, from the graded one to the final one."""

    raw: float | None  # the graded score; None: not graded
    max_score: float | None
    penalty_points: float  # taken off for lateness (0 when on time or no policy)
    final: float | None  # what goes to the LMS; None: nothing to report yet


def penalty_points(percent: float, max_score: float) -> float:
    return round(max_score * percent / 100, 6)


def final_mark(raw: float | None, max_score: float | None, penalty: Penalty | None, override: Override | None) -> Mark:
    """The final score (see the module docstring for the rules)."""
    known = penalty is not None and not penalty.time_unknown
    points = penalty_points(penalty.percent, max_score) if penalty and known and max_score is not None else 0.0
    after = None if raw is None else max(0.0, raw - points)
    if override is not None and override.mode == "set":
        final: float | None = override.points
    elif override is not None and after is not None:
        final = max(0.0, after + override.points)
    else:
        final = after
    return Mark(raw, max_score, points if raw is not None else 0.0, final)


# --- the words, the same in every output --------------------------------------------------


def number(value: float | None) -> str:
    """A score as every output writes it ("" for none)."""
    return "" if value is None else f"{value:g}"


def lateness(penalty: Penalty | None) -> str:
    """`2 days late`, `on time`, `time unknown`, or "" without a late policy."""
    if penalty is None:
        return ""
    if penalty.time_unknown:
        return "time unknown"
    if penalty.days_late <= 0:
        return "on time"
    return f"{penalty.days_late} day{'s' if penalty.days_late != 1 else ''} late"


def override_change(override: Override) -> str:
    """`set to 20` or `+3 points`: what an override does, for students and the terminal."""
    return f"set to {override.points:g}" if override.mode == "set" else f"{override.points:+g} points"


def adjustment_items(
    mark: Mark, penalty: Penalty | None, override: Override | None, quote: Callable[[str], str] = str
) -> list[str]:
    """What was done to the graded score, one sentence each (for a student: no override
    reason). `quote` escapes the submission time for the output's markup."""
    items = []
    if penalty is not None and penalty.time_unknown:
        items.append("Submission time unknown: no late penalty was applied.")
    elif penalty is not None and penalty.days_late > 0:
        items.append(
            f"Late by {lateness(penalty).removesuffix(' late')} (submitted {quote(penalty.submitted_at)}): "
            f"{penalty.percent:g}% of the maximum, {mark.penalty_points:g} points off."
        )
    if override is not None:
        items.append(f"Adjusted by your instructor: {override_change(override)}.")
    return items
