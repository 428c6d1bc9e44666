"""`class.html`: what the class misunderstood, on one self-contained page (inline CSS, no
script, nothing loaded) for the instructor preparing the next lecture: each diagnosed
bug with its hint, how many students have it and who they are; the pass rate of each
check kind; the fixed cases failed by the most students, and by whom; and the scores an
instructor adjusted (late penalties, overrides) with the final score, and the students
whose submission time is unknown.

Structure (classes the tests rely on): `section.misconceptions` with one
`article.misconception[data-name]` per bug (`.count`, `.hint`, `ul.students`);
`section.kinds` with `tr.kind[data-kind]`; `section.cases` with `tr.case[data-case]`;
`section.adjusted` with `tr.adjusted[data-student]` (`td.graded`, `td.late`,
`td.penalty`, `td.override`, `td.final`) and `p.time-unknown`; `section.students` with one
`tr.student[data-student][data-status]` per student found (roll.py: name, id, file, final
score, and why a file did not load or was not graded).
Every student-side string (ids, case names) passes clean_line and is escaped.
"""

from __future__ import annotations

import itertools
import statistics
from collections.abc import Iterable, Iterator, Sequence
from html import escape

from ..text import LINE_CHARS, clean_line, visible_controls
from .insights import ClassInsights
from .roll import GRADED, RollEntry
from .summary import ADJUSTED_HEADER, TOP, ClassSummary

STYLE = """
:root { --ink: #1f2328; --muted: #5f6670; --bug: #8064a2; --ok: #1b7f4b; --fail: #b3261e; --line: #e4e6ea; }
* { box-sizing: border-box; }
body { font: 16px/1.45 system-ui, -apple-system, "Segoe UI", "DejaVu Sans", sans-serif; color: var(--ink);
       margin: 0 auto; max-width: 1120px; padding: 20px 24px 48px; background: #fbfbfc; }
h1 { font-size: 26px; margin: 0 0 4px; } h2 { font-size: 20px; margin: 30px 0 10px; }
.meta { color: var(--muted); margin: 0; }
.cards { display: grid; grid-template-columns: repeat(auto-fill, minmax(330px, 1fr)); gap: 14px; }
.misconception { background: #fff; border: 1px solid #dfe2e6; border-left: 6px solid var(--bug);
                 border-radius: 8px; padding: 12px 16px; }
.misconception h3 { margin: 0; font-size: 18px; font-family: ui-monospace, "DejaVu Sans Mono", monospace; }
.count { font-size: 28px; font-weight: 700; color: var(--bug); margin: 2px 0; }
.count small { font-size: 15px; font-weight: 400; color: var(--muted); }
.hint { margin: 6px 0; }
ul.students { margin: 6px 0 0; padding: 0; list-style: none; display: flex; flex-wrap: wrap; gap: 4px 6px; }
ul.students li { background: #f1edf7; border-radius: 10px; padding: 0 8px; font-size: 14px; }
table { border-collapse: collapse; background: #fff; width: 100%; }
th, td { padding: 6px 12px; border-bottom: 1px solid var(--line); text-align: left; vertical-align: top; }
td.number { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.bar { width: 260px; background: #eceef1; border-radius: 6px; height: 14px; }
.bar span { display: block; height: 14px; border-radius: 6px; }
.kind .bar span { background: var(--ok); } .case .bar span, .misconception .bar span { background: var(--fail); }
.misconception .bar span { background: var(--bug); }
.none { color: var(--muted); font-style: italic; }
td.status.ok { color: var(--ok); } td.status.problem { color: var(--fail); font-weight: 600; }
"""


def _e(text: str, limit: int = LINE_CHARS) -> str:
    return escape(clean_line(text, limit))


def _bar(share: float) -> str:
    return f'<div class="bar"><span style="width:{max(0.0, min(1.0, share)) * 100:.1f}%"></span></div>'


NAMES_PER_PART = 500  # a long list of students is written a few hundred names at a time


def _students(students: Sequence[str]) -> Iterator[str]:
    """The list, in parts: a bug or a case may name most of a class of any size."""
    yield '<ul class="students">'
    names = iter(students)
    while part := "".join(f"<li>{_e(s)}</li>" for s in itertools.islice(names, NAMES_PER_PART)):
        yield part
    yield "</ul>"


def _misconceptions(insights: ClassInsights, graded: int) -> Iterator[str]:
    if not insights.misconceptions:
        yield '<p class="none">No classic bug was diagnosed in any graded submission.</p>'
        return
    yield '<div class="cards">'
    for bug in insights.misconceptions:
        hint = f'<p class="hint">{_e(bug.hint)}</p>' if bug.hint else '<p class="hint none">no hint for this bug</p>'
        yield (
            f'<article class="misconception" data-name="{_e(bug.name)}"><h3>{_e(bug.name)}</h3>'
            f'<p class="count">{bug.count} <small>of {graded} students</small></p>'
            f"{_bar(bug.count / graded if graded else 0)}{hint}"
        )
        yield from _students(bug.students)
        yield "</article>"
    yield "</div>"


def _kinds(insights: ClassInsights) -> str:
    if not insights.kinds:
        return '<p class="none">No test ran.</p>'
    rows = [
        f'<tr class="kind" data-kind="{_e(k.kind)}"><td>{_e(k.kind)}</td><td>{_bar(k.rate)}</td>'
        f'<td class="number">{k.rate:.0%} ({k.passed}/{k.run} tests)</td>'
        f'<td class="number">{k.students_full} of {k.students}</td></tr>'
        for k in insights.kinds
    ]
    return (
        "<table><thead><tr><th>check kind</th><th>pass rate</th><th>tests passed</th>"
        f"<th>students passing all</th></tr></thead><tbody>{''.join(rows)}</tbody></table>"
    )


def _cases(insights: ClassInsights) -> Iterator[str]:
    if not insights.cases:
        yield '<p class="none">Every graded student passed every fixed case.</p>'
        return
    yield "<table><thead><tr><th>case</th><th>students failing</th><th></th><th>who</th></tr></thead><tbody>"
    for c in insights.cases[:TOP]:
        yield (
            f'<tr class="case" data-case="{_e(c.case)}"><td>{_e(c.case)}</td>'
            f"<td>{_bar(c.count / c.graded if c.graded else 0)}</td>"
            f'<td class="number">{c.count} of {c.graded}</td><td>'
        )
        yield from _students(c.students)
        yield "</td></tr>"
    yield "</tbody></table>"


def _adjusted(summary: ClassSummary) -> str:
    if not summary.adjusted and not summary.time_unknown:
        return ""
    parts = ['<section class="adjusted"><h2>Adjusted scores</h2>']
    if summary.adjusted:
        head = "".join(f"<th>{escape(h)}</th>" for h in ADJUSTED_HEADER)
        rows = []
        for entry in summary.adjusted:
            student, graded, late, penalty, override, final = entry.cells()
            rows.append(
                f'<tr class="adjusted" data-student="{_e(entry.student)}"><td class="student">{escape(student)}</td>'
                f'<td class="graded number">{escape(graded)}</td><td class="late">{escape(late)}</td>'
                f'<td class="penalty number">{escape(penalty)}</td><td class="override">{escape(override)}</td>'
                f'<td class="final number">{escape(final)}</td></tr>'
            )
        parts.append(
            "<p>The final score is the graded score less the late penalty, then the override: what goes "
            f"to the LMS.</p><table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"
        )
    if summary.time_unknown:
        who = ", ".join(_e(s) for s in summary.time_unknown)
        parts.append(
            f'<p class="time-unknown">Time unknown (a deadline, but no known submission time; not penalised): {who}</p>'
        )
    return "".join(parts) + "</section>"


def _roll_row(r: RollEntry) -> str:
    name = _e(r.name) if r.name else '<span class="none">no name</span>'
    state = "ok" if r.status == GRADED else "problem"
    return (
        f'<tr class="student" data-student="{_e(r.student)}" data-status="{_e(r.status)}">'
        f"<td>{name}</td><td>{_e(r.student)}</td><td>{_e(r.file)}</td>"
        f'<td class="status {state}">{_e(r.status)}</td>'
        f'<td class="number">{_e(r.score)}</td><td>{_e(r.reason)}</td></tr>'
    )


def class_page(summary: ClassSummary, insights: ClassInsights, roll: Sequence[RollEntry] = ()) -> str:
    """The whole page; `roll` lists every student found (class_roll)."""
    return "".join(class_page_parts(summary, insights, roll, len(roll)))


def class_page_parts(
    summary: ClassSummary, insights: ClassInsights, roll: Iterable[RollEntry], found: int
) -> Iterator[str]:
    """The page a part at a time, each safe to write (text.visible_controls): the head and
    the class's sections, a row of the roll (`found` entries, read as they come), the end.
    So a class of any size is written without its page or its roll in memory."""
    graded = insights.graded
    not_graded = len(summary.errors) + len(summary.failed)
    scores = [s for s, _ in summary.scores]
    spread = ""
    if scores:
        most = max(m for _, m in summary.scores)
        spread = (
            f" · {'final scores' if summary.adjusted else 'scores'}: mean {statistics.mean(scores):.1f}, "
            f"median {statistics.median(scores):g} of {most:g}"
            f" · {sum(1 for s, m in summary.scores if s >= m)} at full marks"
        )
    title = f"abgrade · class misconceptions · lab {summary.lab}"
    yield visible_controls(
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{escape(title)}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n"
        f"<header><h1>Class misconceptions: lab {_e(summary.lab)}</h1>"
        f'<p class="meta">{graded} graded students, {not_graded} not graded{spread}</p></header>'
        '<section class="misconceptions"><h2>Likely bugs (diagnosed classic bugs), most students first</h2>'
    )
    # each section a part at a time: the lists of students in them grow with the class
    yield from map(visible_controls, _misconceptions(insights, graded))
    yield visible_controls(
        '</section><section class="kinds"><h2>Pass rate per check kind</h2>'
        f"{_kinds(insights)}</section>"
        '<section class="cases"><h2>Fixed cases failed by the most students</h2>'
    )
    yield from map(visible_controls, _cases(insights))
    yield visible_controls(f'</section>{_adjusted(summary)}<section class="students"><h2>Students ({found} found)</h2>')
    if not found:
        yield '<p class="none">No student was found in the class folder.</p>'
    else:
        yield (
            "<table><thead><tr><th>name</th><th>id</th><th>file</th><th>status</th><th>final score</th>"
            "<th>why</th></tr></thead><tbody>"
        )
        for entry in roll:
            yield visible_controls(_roll_row(entry))
        yield "</tbody></table>"
    yield "</section>\n</body>\n</html>\n"
