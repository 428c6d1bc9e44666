"""The class at a glance: how final scores are spread, whose scores were adjusted (late
penalties, overrides: the numbers of adjustments.py) and whose submission time is
unknown, which checks fail most often, and which classic bugs (TestResult.diagnoses)
explain them; as plain data and as a text table, with the class's misconceptions
(insights.py) when given."""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from ..text import LINE_CHARS, clean_line
from .adjustments import lateness, number
from .gradebook import StoredGrade
from .insights import ClassInsights, student_list

BIN_LABELS = tuple(f"{10 * i}-{10 * i + 9}%" for i in range(10)) + ("100%",)
TOP = 10


@dataclass(frozen=True)
class AdjustedScore:
    """A student whose final score is not the graded one: late, or overridden."""

    student: str  # as stored (clean it to show it)
    graded: float | None
    max_score: float | None
    lateness: str  # "2 days late", "on time", ... (adjustments.lateness)
    penalty: float  # points off for lateness
    override: str  # "set 20", "add 3" or ""
    final: float | None

    def cells(self) -> tuple[str, str, str, str, str, str]:
        """student, graded, late, penalty, override, final: as every class-wide output shows them."""
        return (
            clean_line(self.student),
            f"{number(self.graded)} / {number(self.max_score)}" if self.graded is not None else "not graded",
            self.lateness,
            f"-{number(self.penalty)}" if self.penalty else "",
            self.override,
            number(self.final),
        )


ADJUSTED_HEADER = ("student", "graded", "late", "penalty", "override", "final")


@dataclass
class ClassSummary:
    lab: str
    scores: list[tuple[float, float]] = field(default_factory=list)  # (final score, max) of each graded student
    errors: list[tuple[str, str]] = field(default_factory=list)  # (student, the machine problem): retried
    failed: list[tuple[str, str]] = field(default_factory=list)  # (student, why grading this file failed)
    histogram: list[tuple[str, int]] = field(default_factory=list)  # (percent range, students)
    failing_checks: list[tuple[str, int]] = field(default_factory=list)  # (test name, students failing it)
    diagnoses: list[tuple[str, int]] = field(default_factory=list)  # (classic bug, students)
    graded_scores: list[float] = field(default_factory=list)  # the graded score of each graded student
    adjusted: list[AdjustedScore] = field(default_factory=list)  # late or overridden, by student
    time_unknown: list[str] = field(default_factory=list)  # a deadline, but no known submission time


def score_bin(score: float, most: float) -> int:
    """Index into BIN_LABELS: tenths of the maximum, full marks in a bin of their own."""
    if most <= 0 or score >= most:
        return len(BIN_LABELS) - 1
    return max(0, min(9, int(score * 10 / most)))


def summarize(lab: str, grades: Iterable[StoredGrade], top: int = TOP) -> ClassSummary:
    summary = SummaryBuilder(lab, top)
    for grade in grades:
        summary.add(grade)
    return summary.result()


class SummaryBuilder:
    """The class summary, one grade at a time (exports stream the gradebook: no list of
    every student's report is ever held)."""

    def __init__(self, lab: str, top: int = TOP) -> None:
        self.summary = ClassSummary(lab)
        self.top = top
        self.bins = [0] * len(BIN_LABELS)
        self.failing: Counter[str] = Counter()
        self.bugs: Counter[str] = Counter()

    def add(self, grade: StoredGrade) -> None:
        summary = self.summary
        mark, penalty, override = grade.mark, grade.penalty, grade.override
        if override is not None or (penalty is not None and mark.penalty_points > 0):
            summary.adjusted.append(
                AdjustedScore(
                    grade.student,
                    mark.raw,
                    mark.max_score,
                    lateness(penalty),
                    mark.penalty_points,
                    override.describe() if override else "",
                    mark.final,
                )
            )
        if penalty is not None and penalty.time_unknown:
            summary.time_unknown.append(grade.student)
        if grade.report is None:
            (summary.errors if grade.machine else summary.failed).append((grade.student, grade.error or "not graded"))
            return
        report = grade.report
        final = report.score if mark.final is None else mark.final
        summary.scores.append((final, report.max_score))
        summary.graded_scores.append(report.score)
        self.bins[score_bin(final, report.max_score)] += 1
        # tests that never ran (the submission did not load) are not failing checks: the
        # `load` test says why, once per student
        self.failing.update({t.name for t in report.tests if not t.passed and not t.not_run})
        self.bugs.update({d for t in report.tests for d in t.diagnoses})

    def result(self) -> ClassSummary:
        summary = self.summary
        summary.histogram = list(zip(BIN_LABELS, self.bins))
        summary.failing_checks = _most_common(self.failing, self.top)
        summary.diagnoses = _most_common(self.bugs, self.top)
        return summary


def _most_common(counter: Counter[str], top: int) -> list[tuple[str, int]]:
    """Highest counts first, ties by name, so that the table is the same every run."""
    return sorted(counter.items(), key=lambda item: (-item[1], item[0]))[:top]


def summary_text(summary: ClassSummary, hints: Mapping[str, str], insights: ClassInsights | None = None) -> str:
    """The text table printed at the end of a batch (and summary.txt, with `insights`)."""
    not_graded = len(summary.errors) + len(summary.failed)
    lines = [f"Class summary, lab {summary.lab}: {len(summary.scores)} graded, {not_graded} not graded"]
    if summary.scores:
        points = [s for s, _ in summary.scores]
        most = max(m for _, m in summary.scores)
        lines.append(f"  {'final score' if summary.adjusted else 'score'}: {spread(points)} (out of {most:g})")
        if summary.adjusted:
            lines.append(f"  as graded: {spread(summary.graded_scores)}")
        lines.append("")
        lines.append(f"  {'score':<9}{'students':>8}")
        widest = max(n for _, n in summary.histogram) or 1
        for label, count in summary.histogram:
            lines.append(f"  {label:<9}{count:>8}  {'#' * round(20 * count / widest)}")
    lines += adjusted_text(summary)
    if summary.failing_checks:
        lines += ["", f"  {'most frequent failing checks':<40}{'students':>8}"]
        lines += [f"  {name:<40}{count:>8}" for name, count in summary.failing_checks]
    if insights is not None:
        lines += misconceptions_text(insights)
    elif summary.diagnoses:
        lines += ["", f"  {'most frequent diagnoses':<40}{'students':>8}"]
        for name, count in summary.diagnoses:
            lines.append(f"  {name:<40}{count:>8}  {_short(hints.get(name, ''))}")
    if summary.errors:
        lines += ["", "  not graded (a machine problem, not the student's; run the same command again):"]
        lines += [f"    {clean_line(student)}: {clean_line(why, LINE_CHARS)}" for student, why in summary.errors]
    if summary.failed:
        lines += [
            "",
            "  not graded (the grader failed on these files; kept until the file changes, --regrade tries again):",
        ]
        lines += [f"    {clean_line(student)}: {clean_line(why, LINE_CHARS)}" for student, why in summary.failed]
    return "\n".join(lines)


def spread(points: list[float]) -> str:
    """Mean, median, min and max of some scores."""
    return (
        f"mean {statistics.mean(points):.1f}, median {statistics.median(points):g}, "
        f"min {min(points):g}, max {max(points):g}"
    )


ADJUSTED_SHOWN = 20  # rows of the adjusted table in the terminal and summary.txt (class.html has all)


def adjusted_text(summary: ClassSummary) -> list[str]:
    """The students whose final score differs from the graded one, with every number, and
    those whose submission time is unknown (never penalised)."""
    lines = []
    if summary.adjusted:
        rows = [ADJUSTED_HEADER, *(a.cells() for a in summary.adjusted[:ADJUSTED_SHOWN])]
        widths = [min(40, max(len(row[i]) for row in rows)) for i in range(len(ADJUSTED_HEADER))]
        lines += ["", "  adjusted scores (final: the graded score less the late penalty, then the override):"]
        lines += ["    " + "  ".join(cell[:40].ljust(w) for cell, w in zip(row, widths)).rstrip() for row in rows]
        if len(summary.adjusted) > ADJUSTED_SHOWN:
            lines.append(f"    ... and {len(summary.adjusted) - ADJUSTED_SHOWN} more (grades.csv, class.html)")
    if summary.time_unknown:
        lines += [
            "",
            f"  time unknown (a deadline but no known submission time; not penalised): "
            f"{clean_line(student_list(tuple(clean_line(s) for s in summary.time_unknown)), LINE_CHARS)}",
        ]
    return lines


def _short(text: str, width: int = 70) -> str:
    return text if len(text) <= width else text[: width - 3] + "..."


def misconceptions_text(insights: ClassInsights) -> list[str]:
    """The class's misconceptions: each diagnosed bug with its hint and students, the pass
    rate of each check kind, and the fixed cases failed by the most students."""
    lines = ["", f"  class misconceptions (likely bugs, {insights.graded} graded students):"]
    if not insights.misconceptions:
        lines.append("    none diagnosed")
    for bug in insights.misconceptions:
        plural = "s" if bug.count != 1 else ""
        lines.append(
            f"    {clean_line(bug.name):<32}{bug.count:>4} student{plural}  {clean_line(bug.hint, LINE_CHARS)}"
        )
        lines.append(f"      {clean_line(student_list(bug.students, clean=clean_line), LINE_CHARS)}")
    if insights.kinds:
        lines += ["", f"  {'pass rate per check kind':<28}{'tests passed':>16}{'students, all passed':>24}"]
        for kind in insights.kinds:
            tests = f"{kind.rate:.0%} ({kind.passed}/{kind.run})"
            lines.append(f"    {clean_line(kind.kind):<26}{tests:>16}{f'{kind.students_full}/{kind.students}':>24}")
    if insights.cases:
        lines += ["", "  fixed cases failed by the most students:"]
        for case in insights.cases[:TOP]:
            who = student_list(case.students, 8, clean=clean_line)
            lines.append(
                f"    {clean_line(case.case):<26}{case.count:>4} of {case.graded:<4} {clean_line(who, LINE_CHARS)}"
            )
    return lines
