"""The class summary as a picture, written as SVG by hand (no plotting library): a
histogram of scores over tenths of the maximum, and a bar chart of the checks that fail
for the most students."""
from __future__ import annotations

from html import escape  # XML-safe too, and lighter to import than xml.sax.saxutils

from .summary import ClassSummary

WIDTH = 760
MARGIN = 40
HISTOGRAM_HEIGHT = 180
ROW_HEIGHT = 24
LABEL_WIDTH = 300
LABEL_CHARS = 42  # what fits in LABEL_WIDTH at 12 px
SCORE_COLOR, FULL_COLOR, FAIL_COLOR, INK = "#4a7ebb", "#3c9a5f", "#c0504d", "#333333"


def _text(x: float, y: float, text: str, anchor: str = "start", size: int = 12, weight: str = "normal") -> str:
    return (f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}" font-size="{size}" '
            f'font-weight="{weight}" fill="{INK}">{escape(text)}</text>')


def _rect(x: float, y: float, width: float, height: float, color: str, title: str) -> str:
    return (f'<rect x="{x:.1f}" y="{y:.1f}" width="{width:.1f}" height="{height:.1f}" fill="{color}">'
            f'<title>{escape(title)}</title></rect>')


def _histogram(summary: ClassSummary, top: float) -> list[str]:
    parts = [_text(MARGIN, top, f"Scores of {len(summary.scores)} graded students (share of the maximum)",
                   size=14, weight="bold")]
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


def _failing_checks(summary: ClassSummary, top: float) -> list[str]:
    parts = [_text(MARGIN, top, "Most frequent failing checks (students)", size=14, weight="bold")]
    if not summary.failing_checks:
        return parts + [_text(MARGIN, top + 24, "none: every graded student passed every check")]
    widest = max(count for _, count in summary.failing_checks)
    room = WIDTH - 2 * MARGIN - LABEL_WIDTH - 40
    for row, (name, count) in enumerate(summary.failing_checks):
        y = top + 12 + row * ROW_HEIGHT
        length = room * count / widest
        label = name if len(name) <= LABEL_CHARS else name[: LABEL_CHARS - 3] + "..."
        parts.append(_text(MARGIN + LABEL_WIDTH - 8, y + 15, label, "end"))
        parts.append(_rect(MARGIN + LABEL_WIDTH, y + 3, length, ROW_HEIGHT - 6, FAIL_COLOR, f"{name}: {count} students"))
        parts.append(_text(MARGIN + LABEL_WIDTH + length + 6, y + 15, str(count)))
    return parts


def class_picture(summary: ClassSummary) -> str:
    """The whole SVG document."""
    checks_top = MARGIN + 24 + HISTOGRAM_HEIGHT + 56
    height = checks_top + 24 + max(1, len(summary.failing_checks)) * ROW_HEIGHT + MARGIN
    title = f"abgrade class summary, lab {summary.lab}"
    body = _histogram(summary, MARGIN) + _failing_checks(summary, checks_top)
    return "\n".join([
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
        f'viewBox="0 0 {WIDTH} {height}" font-family="sans-serif" aria-label="{escape(title)}">',
        f"<title>{escape(title)}</title>",
        f'<rect width="{WIDTH}" height="{height}" fill="white"/>',
        *body,
        "</svg>",
    ]) + "\n"
