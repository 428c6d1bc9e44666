"""What an instructor adds on top of a graded score: a late penalty and an override.

Both live in gradebook tables of their own, keyed by (lab, student) and never by a
graded row, so that grading a submission again replaces its graded result and nothing
else. The final score is computed from the three here, in one pure function, so that
grades.csv, the feedback, `gradebook show` and every LMS export agree:

- penalty: `percent` of the *maximum* score (as Canvas's late policy deducts a share of
  the points possible), taken off the graded score, never below 0;
- override `set N`: the final score is N, whatever the graded score and the penalty
  (an instructor who says "give her 80" means 80);
- override `add N`: N points (negative to take off) on top of the penalised score,
  never below 0; a submission that could not be graded has nothing to add to.
"""

from __future__ import annotations

from dataclasses import dataclass

OVERRIDE_MODES = ("set", "add")


@dataclass(frozen=True)
class Penalty:
    """A submission's lateness, as decided by the policy in force when it was computed."""

    submitted_at: str  # ISO 8601 with its offset
    source: str  # where the time came from: "timestamps", "file name", "file time"
    days_late: int  # started days after the due date and grace period; 0: on time
    percent: float  # of the maximum score
    policy: str  # the policy, as one line (for the audit)


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
    points = penalty_points(penalty.percent, max_score) if penalty and max_score is not None else 0.0
    after = None if raw is None else max(0.0, raw - points)
    if override is not None and override.mode == "set":
        final: float | None = override.points
    elif override is not None and after is not None:
        final = max(0.0, after + override.points)
    else:
        final = after
    return Mark(raw, max_score, points if raw is not None else 0.0, final)
