"""What a grading run produces: one `TestResult` per test, gathered in a `GradeReport`.

These are the grader's own records; `report/gradescope.py` turns them into
Gradescope's results.json and `report/terminal.py` into the summary a student reads.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

# Check kinds every lab may use, in report order; a lab's own kinds (declared by the lab,
# see grader.registry.check_kinds) come between these two groups, in alphabetical order.
SHARED_KINDS = ("load", "value", "nodes", "pruned", "bounds")
CLOSING_KINDS = ("random", "limits")
VISIBILITIES = ("visible", "hidden", "after_due_date", "after_published")


def ordered_kinds(kinds: Iterable[str], everything: bool = False) -> tuple[str, ...]:
    """`kinds` in report order: shared kinds first, the labs' own kinds by name, then random
    and limits. `everything`: include every shared kind even if absent from `kinds`."""
    present = set(kinds) | (set(SHARED_KINDS + CLOSING_KINDS) if everything else set())
    own = sorted(present - set(SHARED_KINDS) - set(CLOSING_KINDS))
    return tuple(k for k in (*SHARED_KINDS, *own, *CLOSING_KINDS) if k in present)


@dataclass
class TestResult:
    """One graded test. `kind` is the check kind (DESIGN.md) and becomes the first tag."""

    name: str
    kind: str
    max_score: float
    passed: bool
    output: str = ""
    visibility: str = "visible"
    case: str | None = None
    diagnoses: list[str] = field(default_factory=list)
    details: dict | None = None  # plain data for pictures (HTML report), not in results.json
    not_run: bool = False  # never ran (the submission did not load): writers show one line for all
    # the likely cause as it stands in `output`, right under its first line (checks/cause.py):
    # a writer that cuts the output keeps it
    cause: str = ""

    @property
    def score(self) -> float:
        return self.max_score if self.passed else 0.0

    @property
    def tags(self) -> list[str]:
        tags = [self.kind]
        if self.case:
            tags.append(f"case:{self.case}")
        tags.extend(f"diagnosis:{d}" for d in self.diagnoses)
        return tags


@dataclass
class GradeReport:
    """Everything the grader decided about one submission."""

    lab: str
    submission: str
    tests: list[TestResult]
    execution_time: float = 0.0
    notes: list[str] = field(default_factory=list)
    student_output: str = ""
    # what happened while loading that did not fail `load` (notebook cells that raised, were
    # interrupted or skipped): every writer lists them, even when every test passes
    load_notes: list[str] = field(default_factory=list)
    # what the student's code printed before the first case with a hidden test was sent
    # (None: no such case ran, all of `student_output` is): what a student may read where
    # hidden details are withheld (Gradescope), since code can print the inputs it is given
    public_output: str | None = None

    def output_for_students(self) -> str:
        """The printed output a student may read without seeing hidden cases."""
        return self.student_output if self.public_output is None else self.public_output

    @property
    def score(self) -> float:
        return sum(t.score for t in self.tests)

    @property
    def max_score(self) -> float:
        return sum(t.max_score for t in self.tests)

    @property
    def visible_failures(self) -> list[TestResult]:
        return [t for t in self.tests if not t.passed and t.visibility == "visible"]

    @property
    def not_run(self) -> list[TestResult]:
        return [t for t in self.tests if t.not_run]

    def subtotals(self) -> dict[str, tuple[float, float]]:
        """Score and maximum per check kind, in the order of `ordered_kinds`."""
        totals: dict[str, tuple[float, float]] = {}
        for kind in ordered_kinds(t.kind for t in self.tests):
            tests = [t for t in self.tests if t.kind == kind]
            if tests:
                totals[kind] = (sum(t.score for t in tests), sum(t.max_score for t in tests))
        return totals
