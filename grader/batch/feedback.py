"""One student's feedback as Markdown: the score per check kind, then every failed test
with its output. Tests that are not `visible` are named, but their details are withheld
unless the instructor asks for them (`--show-hidden`). Failed tests with the same output
(e.g. everything "not run" after a failed load) share one block.

A late penalty, an unknown submission time or an instructor's override is shown under
the graded score, with the final score (the words and numbers of adjustments.py, as in
every other output); an override's reason stays with the instructor (grades.csv,
`gradebook show`): it may hold notes not meant for the student."""

from __future__ import annotations

import re

from ..counterexample import shown as shown_examples
from ..results import TestResult
from .adjustments import adjustment_items
from .gradebook import StoredGrade


def feedback_markdown(grade: StoredGrade, lab: str, show_hidden: bool = False) -> str:
    lines = [f"# abgrade feedback: {md(grade.student)}", "", f"Lab {md(lab)}, submission {md(grade.file)}.", ""]
    if grade.report is None:
        if grade.machine:
            lines += [
                "Your submission could not be graded yet because of a problem on the grading machine, "
                "not in your code. It will be graded again."
            ]
        else:
            lines += [
                "Your submission could not be graded: the grader failed on it. Your instructor has the "
                "details; the reason:",
                "",
                fenced(grade.error or "unknown"),
            ]
        if grade.override is not None and grade.mark.final is not None:
            lines += ["", f"**Your instructor set your score to {grade.mark.final:g}.**"]
        return "\n".join(lines) + "\n"
    report = grade.report
    adjustments = adjustment_lines(grade)
    if adjustments:
        lines += [f"**Graded score: {report.score:g} / {report.max_score:g}**", ""]
        lines += adjustments + [f"**Final score: {grade.mark.final:g} / {report.max_score:g}**", ""]
    else:
        lines += [f"**Score: {report.score:g} / {report.max_score:g}**", ""]
    lines += [
        "| check | score | max | |",
        "| --- | ---: | ---: | --- |",
    ]
    for kind, (got, most) in report.subtotals().items():
        lines.append(f"| {md(kind)} | {got:g} | {most:g} | {'ok' if got == most else 'FAIL'} |")
    if report.load_notes:  # failing or skipped notebook cells: shown even when every test passed
        lines += ["", "## While loading your submission", ""] + [f"- {md(note)}" for note in report.load_notes]
    failed = [t for t in report.tests if not t.passed and not t.not_run]
    shown = [t for t in failed if show_hidden or t.visibility == "visible"]
    withheld = [t for t in failed if not (show_hidden or t.visibility == "visible")]
    if not failed and not report.not_run:
        lines += ["", "Every test passed."]
    if shown:
        lines += ["", "## Failed tests"]
    for output, tests in _by_output(shown).items():
        first, *same = tests
        lines += ["", f"### ✗ {_points(first)}", "", fenced(output)]
        if same:
            lines += ["", "The same for: " + ", ".join(_points(t) for t in same) + "."]
    examples = shown_examples(report.tests, show_hidden)
    if examples:
        lines += ["", "## Smallest failing case"]
    for example in examples:
        lines += ["", md(example.headline), "", fenced(example.output)]
    if report.not_run:
        lines += ["", f"{len(report.not_run)} tests not run: the submission did not load (see the load test)."]
    if withheld:
        lines += [
            "",
            "## Tests not public yet",
            "",
            "These failed; their details are withheld for now: " + ", ".join(_points(t) for t in withheld) + ".",
        ]
    return "\n".join(lines) + "\n"


def adjustment_lines(grade: StoredGrade) -> list[str]:
    """The late penalty (or unknown time) and the override as Markdown list items ([] when
    none applies)."""
    items = adjustment_items(grade.mark, grade.penalty, grade.override, quote=md)
    return [f"- {item}" for item in items] + [""] if items else []


def _points(test: TestResult) -> str:
    return f"{md(test.name)} (0 / {test.max_score:g})"


def _by_output(tests: list[TestResult]) -> dict[str, list[TestResult]]:
    groups: dict[str, list[TestResult]] = {}
    for test in tests:
        groups.setdefault(test.output, []).append(test)
    return groups


def md(text: str) -> str:
    """`text` as literal Markdown inline text: no raw HTML, no emphasis, links, headings or
    table cells can come out of it, and it stays on one line."""
    text = re.sub(r"[\x00-\x1f\x7f]", " ", text)
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return re.sub(r"([\\`*_{}\[\]()#+\-.!|~])", r"\\\1", text)


def fenced(text: str) -> str:
    """A code block that `text` can't close early, whatever backticks it holds."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}text\n{text.rstrip()}\n{fence}"
