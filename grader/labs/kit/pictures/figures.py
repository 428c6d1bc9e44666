"""The HTML around pictures: a captioned figure, and a row of them under a note."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape


def figure(svg: str, caption: str, classes: str = "") -> str:
    """`svg` (already safe) with its caption (escaped); `classes` say whose it is, e.g.
    `student-only first-divergence`."""
    return f'<figure class="board-figure {escape(classes)}">{svg}<figcaption>{escape(caption)}</figcaption></figure>'


def boards_row(figures: Sequence[str], note: str = "") -> str:
    """Figures side by side, under a one-line note (escaped)."""
    said = f'<p class="boards-note">{escape(note)}</p>' if note else ""
    return f'<div class="boards">{said}<div class="board-row">{"".join(figures)}</div></div>'
