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

import sqlite3
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, overload

from ..results import ordered_kinds
from .gradebook import SMALL_PAGE_CACHE, StoredGrade

RANDOM_KIND = "random"


class _Spool:
    """Who a bug or a case names, for a whole class, outside this process's memory: a private
    temporary SQLite database (on disk once past its page cache, about 2 MB), one row per
    (list, student), read back sorted. A batch's insights held every such name in sets
    (about 8 MB at 10,000 submissions of a class that fails often: issue 26, goal 3)."""

    def __init__(self) -> None:
        self._db = sqlite3.connect("")  # "": a temporary database of its own, deleted when closed
        self._db.execute(SMALL_PAGE_CACHE)
        self._db.execute(
            "CREATE TABLE who (list TEXT, key TEXT, student TEXT, PRIMARY KEY (list, key, student)) WITHOUT ROWID"
        )

    def add(self, kind: str, key: str, student: str) -> bool:
        """Whether `student` is new on that list."""
        return self._db.execute("INSERT OR IGNORE INTO who VALUES (?, ?, ?)", (kind, key, student)).rowcount == 1

    def names(self, kind: str, key: str, limit: int = -1) -> Iterator[str]:
        # ORDER BY's binary order of UTF-8 text is Python's order of the strings (code points)
        query = "SELECT student FROM who WHERE list = ? AND key = ? ORDER BY student LIMIT ?"
        return (row[0] for row in self._db.execute(query, (kind, key, limit)))


class Students(Sequence[str]):
    """The students a bug or a case names, in sorted order, read from the spool as they are
    shown (every one on the class page, the first few in the summary); compares equal to
    the tuple of the same names."""

    __slots__ = ("_count", "_key", "_kind", "_spool")

    def __init__(self, spool: _Spool, kind: str, key: str, count: int) -> None:
        self._spool, self._kind, self._key, self._count = spool, kind, key, count

    def __len__(self) -> int:
        return self._count

    def __iter__(self) -> Iterator[str]:
        return self._spool.names(self._kind, self._key)

    @overload
    def __getitem__(self, index: int) -> str: ...
    @overload
    def __getitem__(self, index: slice) -> tuple[str, ...]: ...
    def __getitem__(self, index: int | slice) -> str | tuple[str, ...]:
        first_few = isinstance(index, slice) and index.start in (None, 0) and index.step in (None, 1)
        if first_few and index.stop is not None and index.stop >= 0:  # type: ignore[union-attr]
            return tuple(self._spool.names(self._kind, self._key, index.stop))  # type: ignore[union-attr]
        return tuple(self)[index]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (Students, tuple, list)):
            return tuple(self) == tuple(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __repr__(self) -> str:
        return repr(tuple(self))

    def __reduce__(self) -> tuple[Any, ...]:  # pickled as the names themselves
        return (tuple, (tuple(self),))


@dataclass(frozen=True)
class Misconception:
    """One diagnosed classic bug: how many students, who, and the lab's hint."""

    name: str
    hint: str
    students: Sequence[str]

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
    students: Sequence[str]
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
    """The class's insights, one grade at a time (exports stream the gradebook). Only
    counts stay in memory; who a bug or a failed fixed case names goes to a spool on disk
    (_Spool), so a class of any size takes the same memory."""

    def __init__(self, hints: Mapping[str, str]) -> None:
        self.hints = hints
        self.spool = _Spool()
        self.bugs: dict[str, int] = defaultdict(int)  # students diagnosed with each bug
        self.passed: dict[str, int] = defaultdict(int)
        self.run: dict[str, int] = defaultdict(int)
        self.full: dict[str, int] = defaultdict(int)
        self.seen: dict[str, int] = defaultdict(int)
        self.failing: dict[str, int] = defaultdict(int)  # students failing a test of each fixed case
        self.ran_case: dict[str, int] = defaultdict(int)
        self.graded = 0

    def add(self, grade: StoredGrade) -> None:
        if grade.report is None:
            return
        self.graded += 1
        mine: dict[str, list[bool]] = defaultdict(list)
        ran: set[str] = set()
        bugs: set[str] = set()
        failed: set[str] = set()
        for test in grade.report.tests:
            bugs.update(test.diagnoses)
            if test.not_run:
                continue
            mine[test.kind].append(test.passed)
            if test.case and test.kind != RANDOM_KIND:
                ran.add(test.case)
                if not test.passed:
                    failed.add(test.case)
        for bug in sorted(bugs):
            self.bugs[bug] += self.spool.add("bug", bug, grade.student)
        for case in sorted(failed):
            self.failing[case] += self.spool.add("case", case, grade.student)
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
                (
                    Misconception(bug, self.hints.get(bug, ""), Students(self.spool, "bug", bug, count))
                    for bug, count in self.bugs.items()
                ),
                key=lambda m: (-m.count, m.name),
            ),
            kinds=[
                KindRate(k, self.passed[k], self.run[k], self.full[k], self.seen[k]) for k in ordered_kinds(self.run)
            ],
            cases=sorted(
                (
                    CaseFailures(case, Students(self.spool, "case", case, count), self.ran_case[case])
                    for case, count in self.failing.items()
                ),
                key=lambda c: (-c.count, c.case),
            ),
        )


def student_list(students: Sequence[str], limit: int = 12, clean: Callable[[str], str] = str) -> str:
    """`a, b, c and 9 more`: a list that stays one readable line; only the names shown are
    read (and made safe with `clean`)."""
    shown = ", ".join(clean(s) for s in students[:limit])
    more = len(students) - limit
    return f"{shown} and {more} more" if more > 0 else shown
