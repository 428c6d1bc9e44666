"""The class summary as a picture, written as SVG by hand (no plotting library): a
histogram of scores over tenths of the maximum, a bar chart of the checks that fail for
the most students, and one of the likely causes (diagnosed classic bugs) with their hints;
with the class's insights, the pass rate of each check kind and the fixed cases failed by
the most students too."""

from __future__ import annotations

from collections.abc import Mapping
from html import escape  # XML-safe too, and lighter to import than xml.sax.saxutils

from ..text import clean_line
from .insights import ClassInsights
from .summary import TOP, ClassSummary

WIDTH = 760
MARGIN = 40
HISTOGRAM_HEIGHT = 180
ROW_HEIGHT = 24
LABEL_WIDTH = 300
LABEL_CHARS = 42  # what fits in LABEL_WIDTH at 12 px
SCORE_COLOR, FULL_COLOR, FAIL_COLOR, CAUSE_COLOR, INK = "#4a7ebb", "#3c9a5f", "#c0504d", "#8064a2", "#333333"


def _text(x: float, y: float, text: str, anchor: str = "start", size: int = 12, weight: str = "normal") -> str:
    return (
        f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}" font-size="{size}" '
        f'font-weight="{weight}" fill="{INK}">{escape(text)}</text>'
    )


def _rect(x: float, y: float, width: float, height: float, color: str, title: str) -> str:
    return (
        f'<rect x="{x:.1f}" y="{y:.1f}" width="{width:.1f}" height="{height:.1f}" fill="{color}">'
        f"<title>{escape(title)}</title></rect>"
    )


def _histogram(summary: ClassSummary, top: float) -> list[str]:
    parts = [
        _text(
            MARGIN,
            top,
            f"Scores of {len(summary.scores)} graded students (share of the maximum)",
            size=14,
            weight="bold",
        )
    ]
    base = top + 24 + HISTOGRAM_HEIGHT
    slot = (WIDTH - 2 * MARGIN) / len(summary.histogram)
    tallest = max((count for _, count in summary.histogram), default=0) or 1
    for index, (label, count) in enumerate(summary.histogram):
        height = HISTOGRAM_HEIGHT * count / tallest
        x = MARGIN + index * slot
        color = FULL_COLOR if index == len(summary.histogram) - 1 else SCORE_COLOR
        parts.append(_rect(x + 4, base - height, slot - 8, height, color, f"{label}: {count} students"))
        if count:
            parts.append(_text(x + slot / 2, base - height - 4, str(count), "middle"))
        parts.append(_text(x + slot / 2, base + 16, label, "middle", size=11))
    parts.append(f'<line x1="{MARGIN}" y1="{base}" x2="{WIDTH - MARGIN}" y2="{base}" stroke="{INK}"/>')
    return parts


def _bars(
    title: str,
    rows: list[tuple[str, int]],
    top: float,
    empty: str,
    color: str,
    hints: Mapping[str, str] | None = None,
    scale: float | None = None,
    shown: list[str] | None = None,
) -> list[str]:
    """A titled horizontal bar chart of (label, students); `hints` become the bars' tooltips.
    `scale`: the value of a full bar (default: the largest); `shown`: the text after each bar
    (default: the value)."""
    parts = [_text(MARGIN, top, title, size=14, weight="bold")]
    if not rows:
        return parts + [_text(MARGIN, top + 24, empty)]
    widest = scale or max(count for _, count in rows) or 1
    room = WIDTH - 2 * MARGIN - LABEL_WIDTH - 90
    for row, (name, count) in enumerate(rows):
        y = top + 12 + row * ROW_HEIGHT
        length = room * count / widest
        label = name if len(name) <= LABEL_CHARS else name[: LABEL_CHARS - 3] + "..."
        value = shown[row] if shown else str(count)
        tooltip = f"{name}: {value if shown else f'{count} students'}" + (
            f". {hints[name]}" if hints and hints.get(name) else ""
        )
        parts.append(_text(MARGIN + LABEL_WIDTH - 8, y + 15, label, "end"))
        parts.append(_rect(MARGIN + LABEL_WIDTH, y + 3, length, ROW_HEIGHT - 6, color, tooltip))
        parts.append(_text(MARGIN + LABEL_WIDTH + length + 6, y + 15, value))
    return parts


def _adjusted_lines(summary: ClassSummary) -> list[str]:
    """One line per adjusted student (the first TOP), then who has no known time."""
    lines = []
    for entry in summary.adjusted[:TOP]:
        student, graded, late, penalty, override, final = entry.cells()
        parts = [f"graded {graded}", f"{late} {penalty}".strip(), override, f"final {final}"]
        lines.append(f"{student[:LABEL_CHARS]}: " + ", ".join(p for p in parts if p))
    if len(summary.adjusted) > TOP:
        lines.append(f"... and {len(summary.adjusted) - TOP} more (grades.csv, class.html)")
    if summary.time_unknown:
        who = ", ".join(clean_line(s)[:LABEL_CHARS] for s in summary.time_unknown[:TOP])
        more = f" and {len(summary.time_unknown) - TOP} more" if len(summary.time_unknown) > TOP else ""
        lines.append(f"time unknown (not penalised): {who}{more}")
    return lines


def _height(rows: list) -> float:
    return 24 + max(1, len(rows)) * ROW_HEIGHT + 32


def class_picture(
    summary: ClassSummary, hints: Mapping[str, str] | None = None, insights: ClassInsights | None = None
) -> str:
    """The whole SVG document; `hints`: the lab's one-line hint per diagnosis."""
    checks_top = MARGIN + 24 + HISTOGRAM_HEIGHT + 56
    causes_top = checks_top + _height(summary.failing_checks)
    height = causes_top + _height(summary.diagnoses)
    extra: list[str] = []
    if insights is not None:
        rates = [(k.kind, round(100 * k.rate)) for k in insights.kinds]
        extra += _bars(
            "Pass rate per check kind (% of tests run)",
            rates,
            height,
            "no tests ran",
            SCORE_COLOR,
            scale=100,
            shown=[f"{k.rate:.0%} ({k.passed}/{k.run})" for k in insights.kinds],
        )
        height += _height(rates)
        cases = [(c.case, c.count) for c in insights.cases[:TOP]]
        extra += _bars(
            "Fixed cases failed by the most students",
            cases,
            height,
            "none: every graded student passed every fixed case",
            FAIL_COLOR,
            shown=[f"{c.count} of {c.graded}" for c in insights.cases[:TOP]],
        )
        height += _height(cases)
    if summary.adjusted or summary.time_unknown:
        lines = _adjusted_lines(summary)
        extra.append(
            _text(MARGIN, height, "Adjusted scores: graded, late penalty, override, final", size=14, weight="bold")
        )
        extra += [_text(MARGIN, height + 24 + i * 18, line) for i, line in enumerate(lines)]
        height += 24 + len(lines) * 18 + 32
    height += MARGIN
    title = f"abgrade class summary, lab {summary.lab}"
    body = (
        _histogram(summary, MARGIN)
        + _bars(
            "Most frequent failing checks (students)",
            summary.failing_checks,
            checks_top,
            "none: every graded student passed every check",
            FAIL_COLOR,
        )
        + _bars(
            "Likely causes: classic bugs diagnosed (students)",
            summary.diagnoses,
            causes_top,
            "none diagnosed",
            CAUSE_COLOR,
            hints,
        )
        + extra
    )
    return (
        "\n".join(
            [
                f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
                f'viewBox="0 0 {WIDTH} {height}" font-family="sans-serif" aria-label="{escape(title)}">',
                f"<title>{escape(title)}</title>",
                f'<rect width="{WIDTH}" height="{height}" fill="white"/>',
                *body,
                "</svg>",
            ]
        )
        + "\n"
    )
