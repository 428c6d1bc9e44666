"""What the class as a whole misunderstood, for the next lecture: which classic bugs were
diagnosed in how many students (and which ones), how often each check kind passes, and
the fixed cases that most students fail. Plain data, computed from the gradebook's
grades; summary.py, picture.py and classpage.py each draw it their own way.

Counts are of students, not tests: a student with three tests pointing at
`strict_cutoff` counts once. Tests that never ran (the submission did not load) count
nowhere: the `load` kind says why, once per student. Random (generated) cases differ
between runs and are no lesson's example, so the case list holds fixed cases only.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from ..results import ordered_kinds
from .gradebook import StoredGrade

RANDOM_KIND = "random"


@dataclass(frozen=True)
class Misconception:
    """One diagnosed classic bug: how many students, who, and the lab's hint."""

    name: str
    hint: str
    students: tuple[str, ...]

    @property
    def count(self) -> int:
        return len(self.students)


@dataclass(frozen=True)
class KindRate:
    """A check kind: tests passed of tests run, and students with every test of it passed."""

    kind: str
    passed: int
    run: int
    students_full: int
    students: int

    @property
    def rate(self) -> float:
        return self.passed / self.run if self.run else 1.0


@dataclass(frozen=True)
class CaseFailures:
    """A fixed case and the students who failed at least one of its tests."""

    case: str
    students: tuple[str, ...]
    graded: int  # students whose tests of this case ran

    @property
    def count(self) -> int:
        return len(self.students)


@dataclass
class ClassInsights:
    graded: int = 0
    misconceptions: list[Misconception] = field(default_factory=list)
    kinds: list[KindRate] = field(default_factory=list)
    cases: list[CaseFailures] = field(default_factory=list)  # failed by someone, most students first


def class_insights(grades: Iterable[StoredGrade], hints: Mapping[str, str]) -> ClassInsights:
    insights = InsightsBuilder(hints)
    for grade in grades:
        insights.add(grade)
    return insights.result()


class InsightsBuilder:
    """The class's insights, one grade at a time (exports stream the gradebook). What it
    keeps per student is only their id, where a bug or a failed fixed case names them."""

    def __init__(self, hints: Mapping[str, str]) -> None:
        self.hints = hints
        self.bugs: dict[str, set[str]] = defaultdict(set)
        self.passed: dict[str, int] = defaultdict(int)
        self.run: dict[str, int] = defaultdict(int)
        self.full: dict[str, int] = defaultdict(int)
        self.seen: dict[str, int] = defaultdict(int)
        self.failing: dict[str, set[str]] = defaultdict(set)
        self.ran_case: dict[str, int] = defaultdict(int)
        self.graded = 0

    def add(self, grade: StoredGrade) -> None:
        if grade.report is None:
            return
        self.graded += 1
        mine: dict[str, list[bool]] = defaultdict(list)
        ran: set[str] = set()
        for test in grade.report.tests:
            for bug in test.diagnoses:
                self.bugs[bug].add(grade.student)
            if test.not_run:
                continue
            mine[test.kind].append(test.passed)
            if test.case and test.kind != RANDOM_KIND:
                ran.add(test.case)
                if not test.passed:
                    self.failing[test.case].add(grade.student)
        for case in ran:
            self.ran_case[case] += 1
        for kind, results in mine.items():
            self.run[kind] += len(results)
            self.passed[kind] += sum(results)
            self.seen[kind] += 1
            self.full[kind] += all(results)

    def result(self) -> ClassInsights:
        return ClassInsights(
            graded=self.graded,
            misconceptions=sorted(
                (Misconception(bug, self.hints.get(bug, ""), tuple(sorted(who))) for bug, who in self.bugs.items()),
                key=lambda m: (-m.count, m.name),
            ),
            kinds=[
                KindRate(k, self.passed[k], self.run[k], self.full[k], self.seen[k]) for k in ordered_kinds(self.run)
            ],
            cases=sorted(
                (CaseFailures(case, tuple(sorted(who)), self.ran_case[case]) for case, who in self.failing.items()),
                key=lambda c: (-c.count, c.case),
            ),
        )


def student_list(students: tuple[str, ...], limit: int = 12) -> str:
    """`a, b, c and 9 more`: a list that stays one readable line."""
    shown = ", ".join(students[:limit])
    more = len(students) - limit
    return f"{shown} and {more} more" if more > 0 else shown
