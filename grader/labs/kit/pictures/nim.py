"""Nim heaps as inline SVG: who is to move, then one row of tokens per heap, labelled with
its number and size. A state is `[heaps, player to move]` (the negamax lab's encoding) or
the heap sizes alone. An `<svg class="nim">` of `g.heap` rows of `circle.token`; tokens a
move took are drawn hollow (`circle.token taken`), and a heap in `marked` gets a
`rect.marked` band."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from html import escape

TOKEN = 16
ROW = 24
LABEL = 74
MOST_TOKENS = 30  # a larger heap is drawn as 30 tokens and "+n"
MOST_HEAPS = 12


def split(state: object) -> tuple[object, object]:
    """(heaps, player to move or None) of a state in either form."""
    if isinstance(state, (list, tuple)) and len(state) == 2 and isinstance(state[0], (list, tuple)):
        return state[0], state[1]
    return state, None


def heaps_of(value: object) -> list[int] | None:
    value = split(value)[0]
    if not isinstance(value, (list, tuple)) or not 0 < len(value) <= MOST_HEAPS:
        return None
    if not all(type(h) is int and h >= 0 for h in value):
        return None
    return list(value)


def heaps_svg(state: object, taken: Sequence[int] = (), marked: Collection[int] = (), label: str = "") -> str:
    """The heaps as SVG; `taken`: how many tokens a move just took from each heap (drawn
    hollow after the ones left). Something that isn't a Nim state is shown as text."""
    sizes = heaps_of(state)
    player = split(state)[1]
    if sizes is None:
        return f'<code class="board-text">{escape(str(state))}</code>'
    mover = f"player {player} to move" if type(player) is int else ""
    top = ROW if mover else 0
    gone = [t if type(t) is int and t > 0 else 0 for t in taken] + [0] * len(sizes)
    widest = max(min(size + gone[i], MOST_TOKENS) for i, size in enumerate(sizes))
    width, height = LABEL + max(widest, 1) * TOKEN + 40, top + len(sizes) * ROW + 6
    said = label or "Nim heaps " + " ".join(map(str, sizes)) + (f", {mover}" if mover else "")
    parts = [
        f'<svg class="nim" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="{escape(said)}">'
    ]
    if mover:
        parts.append(f'<text class="to-move" x="6" y="16">{escape(mover)}</text>')
    for index, size in enumerate(sizes):
        y = 3 + top + index * ROW
        parts.append(f'<g class="heap" data-heap="{index + 1}" data-size="{size}">')
        if index in marked:
            parts.append(f'<rect class="marked" x="1" y="{y}" width="{width - 2}" height="{ROW - 2}" rx="4"/>')
        parts.append(f'<text class="heap-label" x="6" y="{y + 15}">heap {index + 1}: {size}</text>')
        shown = min(size + gone[index], MOST_TOKENS)
        for k in range(shown):
            cls = "token" if k < size else "token taken"
            parts.append(f'<circle class="{cls}" cx="{LABEL + k * TOKEN + TOKEN / 2}" cy="{y + 11}" r="6"/>')
        if size + gone[index] > MOST_TOKENS:
            more = size + gone[index] - MOST_TOKENS
            parts.append(f'<text class="heap-label" x="{LABEL + shown * TOKEN + 4}" y="{y + 15}">+{more}</text>')
        parts.append("</g>")
    parts.append("</svg>")
    return "".join(parts)
