"""The summary a student reads in the terminal: score per check kind, then each failure."""
from __future__ import annotations

import textwrap

from ..results import GradeReport


def summary(report: GradeReport, show_hidden: bool = False, color: bool = False) -> str:
    def paint(text: str, code: str) -> str:
        return f"\033[{code}m{text}\033[0m" if color else text

    lines = [f"abgrade · lab {report.lab} · {report.submission}"]
    for kind, (got, most) in report.subtotals().items():
        mark = paint("ok", "32") if got == most else paint("FAIL", "31")
        lines.append(f"  {kind:<10}{got:>6g} / {most:<6g}{mark}")
    shown = [t for t in report.tests if not t.passed and (show_hidden or t.visibility == "visible")]
    hidden = [t for t in report.tests if not t.passed and t.visibility != "visible" and not show_hidden]
    for test in shown:
        lines.append("")
        lines.append(paint(f"✗ {test.name}", "1;31") + f"  (0/{test.max_score:g})")
        lines.append(textwrap.indent(test.output, "    "))
    if hidden:
        lines.append("")
        lines.append(f"{len(hidden)} hidden test(s) failed; their details are shown after grades are published.")
    for note in report.notes:
        lines.append(f"note: {note}")
    lines.append("")
    total = f"Score: {report.score:g} / {report.max_score:g}"
    lines.append(paint(total, "1;32" if report.score == report.max_score else "1"))
    return "\n".join(lines)
