"""One self-contained HTML page a student can look at: the score per check kind, the likely
causes, and every case with its tests' feedback and a picture (the tree with what each
search read, or the tic-tac-toe boards where the searches part).

The page loads nothing (inline CSS and SVG, a few lines of inline script to open or close
every case). Hidden tests are named with their score, but their feedback and pictures are
withheld unless `show_hidden`, as in the terminal summary.

Structure (classes the tests and a reader's style sheet can rely on): `section.scores` with
`tr.kind.ok|fail`; `section.diagnoses` with `li.diagnosis[data-name]`;
`section.counterexamples` with a `div.counterexample[data-case][data-check]` per smallest
failing case (its output and its picture); `section.cases` with
one `details.case.passed|failed[.withheld]` per case, holding `div.test.passed|failed` and a
what the lab draws (Lab.picture: e.g. `figure.tree-figure` or `div.boards`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from html import escape
from pathlib import Path

from .. import registry
from ..checks.state_hint import with_state_hint
from ..counterexample import TITLE
from ..counterexample import shown as shown_examples
from ..results import GradeReport, TestResult
from ..text import visible_controls
from .drawings import remembered
from .html_style import SCRIPT, STYLE

STUDENT_OUTPUT_LIMIT = 20_000
WITHHELD = "Details are withheld until grades are published."


@dataclass(frozen=True)
class FinalScore:
    """The graded score after an instructor's adjustments (a batch's late penalty and
    override, batch/adjustments.py), as a batch's feedback page shows it."""

    final: float | None
    items: Sequence[str]  # one plain sentence per adjustment, as in the Markdown feedback


def render_html(
    report: GradeReport,
    show_hidden: bool = False,
    hints: Mapping[str, str] | None = None,
    adjusted: FinalScore | None = None,
) -> str:
    """The whole page. `hints`: diagnosis name -> one-line hint (default: the lab's own);
    `adjusted`: the final score and what changed it, shown under the graded score."""
    hints = _lab_hints(report.lab) if hints is None else hints
    shown = [t for t in report.tests if show_hidden or t.visibility == "visible"]
    title = f"abgrade · {report.lab} · {Path(report.submission).name}"
    body = [
        _header(report, adjusted),
        _scores(report),
        _load_notes(report),
        _diagnoses(shown, hints),
        _counterexamples(report, show_hidden),
        _failing_index(report, shown),
        _cases(report, show_hidden),
        _notes(report),
        _student_output(report),
    ]
    return visible_controls(
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{escape(title)}</title>\n<style>{STYLE}</style>\n<script>{SCRIPT}</script>\n</head>\n"
        f"<body>\n{''.join(part for part in body if part)}\n</body>\n</html>\n"
    )


def write_html(
    report: GradeReport,
    path: Path,
    show_hidden: bool = False,
    hints: Mapping[str, str] | None = None,
    adjusted: FinalScore | None = None,
) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render_html(report, show_hidden, hints, adjusted), encoding="utf-8")


def _lab_hints(lab: str) -> dict[str, str]:
    found = registry.find(lab)
    return with_state_hint(found.bug_hints) if found is not None else {}


def _header(report: GradeReport, adjusted: FinalScore | None = None) -> str:
    state = "ok" if report.score == report.max_score else "fail"
    if adjusted is None or not adjusted.items:
        total = f'<p class="total {state}">Score {report.score:g} / {report.max_score:g}</p>'
    else:
        final = "none" if adjusted.final is None else f"{adjusted.final:g}"
        items = "".join(f"<li>{escape(item)}</li>" for item in adjusted.items)
        total = (
            f'<p class="total graded {state}">Graded score {report.score:g} / {report.max_score:g}</p>'
            f'<ul class="adjustments">{items}</ul>'
            f'<p class="total final">Final score {final} / {report.max_score:g}</p>'
        )
    return (
        '<header class="report-header">'
        '<div class="toolbar"><button type="button" onclick="setCases(true)">open all</button>'
        '<button type="button" onclick="setCases(false)">close all</button></div>'
        "<h1>abgrade report</h1>"
        f'<p class="meta">lab <b>{escape(report.lab)}</b> · <code>{escape(report.submission)}</code></p>'
        f"{total}</header>"
    )


def _scores(report: GradeReport) -> str:
    rows = []
    for kind, (got, most) in report.subtotals().items():
        state = "ok" if got == most else "fail"
        share = 100 * got / most if most else 100
        rows.append(
            f'<tr class="kind {state}" data-kind="{escape(kind)}"><th>{escape(kind)}</th>'
            f'<td class="points">{got:g} / {most:g}</td>'
            f'<td><div class="bar"><span style="width:{share:.0f}%"></span></div></td>'
            f'<td class="state">{"ok" if state == "ok" else "FAIL"}</td></tr>'
        )
    return (
        f'<section class="scores"><h2>Score by check</h2><table class="score-table">{"".join(rows)}</table></section>'
    )


def _diagnoses(shown: list[TestResult], hints: Mapping[str, str]) -> str:
    names = list(dict.fromkeys(d for t in shown if not t.passed for d in t.diagnoses))
    if not names:
        return ""
    items = "".join(
        f'<li class="diagnosis" data-name="{escape(name)}"><code>{escape(name)}</code> '
        f"{escape(hints.get(name, ''))}</li>"
        for name in names
    )
    return (
        '<section class="diagnoses"><h2>Likely cause</h2>'
        "<p>The grader recognised a classic mistake:</p>"
        f"<ul>{items}</ul></section>"
    )


def _counterexamples(report: GradeReport, show_hidden: bool) -> str:
    """The smallest failing cases the reader may see (counterexample.shown), each drawn."""
    examples = shown_examples(report.tests, show_hidden)
    if not examples:
        return ""
    found = registry.find(report.lab)
    draw = remembered(report.lab, found.picture) if found is not None else _no_picture
    items = "".join(
        f'<div class="counterexample" data-case="{escape(example.case)}" data-check="{escape(example.check)}">'
        f"<h3>{escape(example.headline)}</h3>"
        f'<pre class="output">{escape(example.output)}</pre>'
        f"{draw(example.details) if example.details else ''}</div>"
        for example in examples
    )
    return (
        f'<section class="counterexamples"><h2>{escape(TITLE)}</h2>'
        "<p>A random case failed; here is the smallest case made from it on which your search still "
        f"fails the same check.</p>{items}</section>"
    )


def _groups(report: GradeReport) -> list[tuple[str, list[TestResult]]]:
    """Tests grouped by case, in the order they were graded (load and limits on their own)."""
    groups: dict[str, list[TestResult]] = {}
    for test in report.tests:
        groups.setdefault(test.case or test.name, []).append(test)
    return list(groups.items())


def _anchor(index: int) -> str:
    return f"case-{index}"


def _failing_index(report: GradeReport, shown: list[TestResult]) -> str:
    failing = {id(t) for t in shown if not t.passed and not t.not_run}
    links = []
    for index, (name, tests) in enumerate(_groups(report)):
        kinds = [t.kind for t in tests if id(t) in failing]
        if kinds:
            links.append(f'<li><a href="#{_anchor(index)}">{escape(name)}</a>: {escape(", ".join(kinds))}</li>')
    hidden = sum(not t.passed and not t.not_run for t in report.tests) - len(failing)
    note = f'<p class="hidden-failures">{hidden} hidden test(s) failed. {WITHHELD}</p>' if hidden else ""
    if not links and not note:
        return ""
    return f'<section class="failing"><h2>Failing tests</h2><ul>{"".join(links)}</ul>{note}</section>'


def _not_run_line(report: GradeReport) -> str:
    return f"{len(report.not_run)} tests not run: the submission did not load."


def _cases(report: GradeReport, show_hidden: bool) -> str:
    """One block per case; cases that never ran (the submission did not load) are one line."""
    found = registry.find(report.lab)
    draw = remembered(report.lab, found.picture) if found is not None else _no_picture
    cases = [
        _case(index, name, tests, show_hidden, draw)
        for index, (name, tests) in enumerate(_groups(report))
        if not all(t.not_run for t in tests)
    ]
    if report.not_run:
        cases.append(f'<p class="not-run">{_not_run_line(report)}</p>')
    return f'<section class="cases"><h2>Tests</h2>{"".join(cases)}</section>'


def _case(index: int, name: str, tests: list[TestResult], show_hidden: bool, draw: Callable[[Mapping], str]) -> str:
    visible = [t for t in tests if show_hidden or t.visibility == "visible"]
    failed = any(not t.passed for t in tests)
    withheld = not visible
    classes = ["case", "failed" if failed else "passed"] + (["withheld"] if withheld else [])
    got, most = sum(t.score for t in tests), sum(t.max_score for t in tests)
    badges = "".join(_badge(t, show_hidden) for t in tests)
    parts = [
        f'<details class="{" ".join(classes)}" id="{_anchor(index)}"{" open" if failed and not withheld else ""}>',
        f'<summary><span class="case-name">{escape(name)}</span>{badges}'
        f'<span class="points">{got:g} / {most:g}</span></summary>',
    ]
    shown = {id(t) for t in visible}
    for test in tests:
        parts.append(
            _test(test)
            if id(test) in shown
            else f'<div class="test withheld"><h3>{escape(test.name)}</h3><p class="withheld-note">{WITHHELD}</p></div>'
        )
    parts += [draw(details) for details in _pictures(visible)]
    parts.append("</details>")
    return "".join(parts)


def _pictures(visible: list[TestResult]) -> list[Mapping]:
    """What to draw for a case: the pictures of its failed tests (each different one once:
    a wrong move and a wrong count show different things), else its first picture."""
    failed: list[Mapping] = []
    for test in visible:
        if not test.passed and test.details and test.details not in failed:
            failed.append(test.details)
    if failed:
        return [d for d in failed if not any(other is not d and _shows(other, d) for other in failed)]
    first = next((t.details for t in visible if t.details), None)
    return [first] if first else []


def _states(details: Mapping) -> list:
    """The states a board picture draws (kit/pictures/positions.py), [] for another view."""
    if details.get("view") == "positions":
        figures = details.get("figures")
        return [f.get("state") for f in figures if isinstance(f, Mapping)] if isinstance(figures, list) else []
    if details.get("view") == "expansions":
        return [details.get("position")]
    return []


def _shows(big: Mapping, small: Mapping) -> bool:
    """`big` draws everything `small` does (a position alone, drawn again next to a move)."""
    if small.get("view") != "positions" or big.get("game") != small.get("game"):
        return False
    mine, theirs = _states(small), _states(big)
    more = big.get("view") == "expansions" or len(theirs) > len(mine)
    return bool(mine) and more and all(state in theirs for state in mine)


def _badge(test: TestResult, show_hidden: bool) -> str:
    state = "passed" if test.passed else "failed"
    if test.visibility != "visible" and not show_hidden:
        state += " withheld"
    mark = "✓" if test.passed else "✗"
    return f'<span class="badge {state}">{mark} {escape(test.kind)}</span>'


def _test(test: TestResult) -> str:
    state = "passed" if test.passed else "failed"
    mark = "✓" if test.passed else "✗"
    return (
        f'<div class="test {state}" data-kind="{escape(test.kind)}">'
        f"<h3>{mark} {escape(test.name)} ({test.score:g}/{test.max_score:g})</h3>"
        f'<pre class="output">{escape(test.output)}</pre></div>'
    )


def _no_picture(details: Mapping) -> str:
    """A lab that is not installed draws nothing (each lab draws its own: Lab.picture)."""
    return ""


def _load_notes(report: GradeReport) -> str:
    """Cells that raised, were interrupted or skipped: shown even when every test passes."""
    if not report.load_notes:
        return ""
    items = "".join(f"<li>{escape(note)}</li>" for note in report.load_notes)
    return f'<section class="load-notes"><h2>While loading the submission</h2><ul>{items}</ul></section>'


def _notes(report: GradeReport) -> str:
    if not report.notes:
        return ""
    items = "".join(f"<li>{escape(note)}</li>" for note in report.notes)
    return f'<section class="notes"><h2>Notes</h2><ul>{items}</ul></section>'


def _student_output(report: GradeReport) -> str:
    text = report.student_output
    if not text.strip():
        return ""
    cut = text[:STUDENT_OUTPUT_LIMIT] + ("\n... (cut)" if len(text) > STUDENT_OUTPUT_LIMIT else "")
    return (
        f'<details class="student-output"><summary>What your code printed</summary>'
        f'<pre class="output">{escape(cut)}</pre></details>'
    )
