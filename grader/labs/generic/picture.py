"""A lab folder's search drawn as inline SVG: the states each search read.

Input: a test's `details` with `"view": "lab-tree"` (judges.search_details). The drawn tree
is the game's own (the hook `tree`, when the game has one and the reads differ), else the
reference's recursive calls of the search (its trace), each with the reference's alpha and
beta on entering it. A node is `both`, `student-only`, `reference-only` or `pruned` by
whether the student's and the reference's reads hold its state; the first read where they
part is marked. States the student read that the drawing has no place for are listed
under it. The layout (`layout`) is separate from the drawing (`svg`) and takes plain
(label, parent) pairs, so another picture of trees can reuse either.

The classes are the report's shared ones (grader/report/html_style.py): `svg.tree`,
`g.node.STATUS` with `rect.shape`, `line.edge.STATUS`, `ul.legend` with `span.swatch`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from html import escape
from typing import Any

from ...checks.expansions import first_divergence
from ...checks.show import is_number, show

STATUS_TEXT = {
    "both": "read by both",
    "student-only": "read only by you (the reference prunes it)",
    "reference-only": "read only by the reference (you skipped it)",
    "pruned": "read by neither",
}
MAX_NODES = 400  # beyond: only what either search read is drawn
ROW, NODE_H, CHAR, SMALL_CHAR, GAP, TOP, LEFT = 76, 22, 7.3, 6.1, 12, 30, 16
LABEL_CHARS = 18


@dataclass(frozen=True)
class Placed:
    """One drawn node."""

    index: int
    label: str
    parent: int | None
    depth: int
    x: float
    status: str
    value: Any = None  # what the reference's call of this state returned (None: unknown)
    window: tuple[Any, Any] | None = None
    divergence: str = ""

    @property
    def y(self) -> float:
        return TOP + NODE_H + self.depth * ROW

    @property
    def text(self) -> str:
        return self.label if len(self.label) <= LABEL_CHARS else self.label[: LABEL_CHARS - 1] + "…"

    @property
    def width(self) -> float:
        return label_width(self.label)


def _texts(value: Any) -> list[str]:
    return [item for item in value if isinstance(item, str)] if isinstance(value, list) else []


def nodes_of(details: Mapping) -> list[tuple[str, int | None, Any, Any]]:
    """(label, parent index, the reference's value there, its window) of every node, in
    preorder: the game's tree if given, else the reference's trace."""
    trace: list[list[Any]] = [e for e in details.get("trace") or [] if isinstance(e, list) and len(e) == 5]
    by_label: dict[str, list[Any]] = {}
    for entry in trace:
        by_label.setdefault(str(entry[1]), entry)
    tree, root = details.get("tree"), details.get("root")
    if isinstance(tree, Mapping) and isinstance(root, str):
        found: list[tuple[str, int | None, Any, Any]] = []
        seen = {root}
        stack: list[tuple[str, int | None]] = [(root, None)]
        while stack and len(found) < MAX_NODES * 4:
            label, parent = stack.pop()
            known = by_label.get(label)
            found.append((label, parent, known[4] if known else None, (known[2], known[3]) if known else None))
            children = [c for c in tree.get(label, []) if isinstance(c, str) and c not in seen]
            seen.update(children)
            stack.extend((child, len(found) - 1) for child in reversed(children))
        return found
    return [
        (str(label), parent if isinstance(parent, int) and parent < index else None, returned, (alpha, beta))
        for index, (parent, label, alpha, beta, returned) in enumerate(trace)
    ]


def layout(
    nodes: Sequence[tuple[str, int | None]], seen: Sequence[str], expected: Sequence[str], widths: Sequence[float] = ()
) -> list[Placed]:
    """Positions for (label, parent index) pairs in preorder: leaves side by side (each as
    wide as `widths` says, else as its label), each parent centred over its children. Large
    trees keep only what either search read."""
    seen_set, expected_set = set(seen), set(expected)
    keep = list(range(len(nodes)))
    if len(nodes) > MAX_NODES:
        keep = [i for i, (label, _) in enumerate(nodes) if label in seen_set or label in expected_set][:MAX_NODES]
    kept = set(keep)
    parent = {i: _kept_parent(nodes, i, kept) for i in keep}
    children: dict[int, list[int]] = {i: [] for i in keep}
    depth: dict[int, int] = {}
    for i in keep:  # preorder: a parent comes before its children
        above = parent[i]
        if above is not None:
            children[above].append(i)
        depth[i] = 0 if above is None else depth[above] + 1
    x: dict[int, float] = {}
    cursor = float(LEFT)

    def place(i: int) -> None:
        nonlocal cursor
        for child in children[i]:
            place(child)
        width = widths[i] if i < len(widths) else label_width(nodes[i][0])
        if children[i]:
            x[i] = (x[children[i][0]] + x[children[i][-1]]) / 2
        else:
            x[i] = cursor + width / 2
        cursor = max(cursor, x[i] + width / 2 + GAP)

    for i in keep:
        if parent[i] is None:
            place(i)
    marks = _divergence(list(seen), list(expected))
    return [
        Placed(
            i,
            nodes[i][0],
            parent[i],
            depth[i],
            x[i],
            _status(nodes[i][0] in seen_set, nodes[i][0] in expected_set),
            divergence=marks.pop(nodes[i][0], ""),
        )
        for i in keep
    ]


def label_width(label: str) -> float:
    return max(28.0, CHAR * min(len(label), LABEL_CHARS) + 12)


def window_text(window: tuple[Any, Any]) -> str:
    return f"[{number(window[0])}, {number(window[1])}]"


def _kept_parent(nodes: Sequence[tuple[str, int | None]], index: int, kept: set[int]) -> int | None:
    above = nodes[index][1]
    while above is not None and above not in kept:
        above = nodes[above][1]
    return above


def _status(by_student: bool, by_reference: bool) -> str:
    if by_student and by_reference:
        return "both"
    return "student-only" if by_student else "reference-only" if by_reference else "pruned"


def _divergence(seen: list[str], expected: list[str]) -> dict[str, str]:
    index = first_divergence(seen, expected)
    if index is None:
        return {}
    marks = {}
    if index < len(expected):
        marks[expected[index]] = f"reference's read #{index + 1}"
    if index < len(seen):
        marks[seen[index]] = f"your read #{index + 1}"
    return marks


def number(value: Any) -> str:
    if isinstance(value, float) and math.isinf(value):
        return "∞" if value > 0 else "-∞"
    return show(value)


def lab_tree_figure(details: Mapping) -> str:
    """The search as an HTML figure: the values, the drawing, its legend, and the reads that
    have no place in it."""
    seen, expected = _texts(details.get("seen")), _texts(details.get("expected"))
    described = nodes_of(details)
    if not described:
        return ""
    leaves = {i for i, _ in enumerate(described)} - {parent for _, parent, _, _ in described if parent is not None}
    widths = [
        max(label_width(label), SMALL_CHAR * len(window_text(window)) + 4 if window else 0.0)
        for label, _, _, window in described
    ]
    placed = layout([(label, parent) for label, parent, _, _ in described], seen, expected, widths)
    placed = [
        Placed(
            p.index,
            p.label,
            p.parent,
            p.depth,
            p.x,
            p.status,
            described[p.index][2] if p.index in leaves else None,  # values of leaves only
            described[p.index][3],
            p.divergence,
        )
        for p in placed
    ]
    right = is_number(details.get("returned")) and details.get("returned") == details.get("value")
    head = (
        f'<p class="root-line">Value: expected <b class="expected">{escape(number(details.get("value")))}</b>, '
        f'you returned <b class="returned {"ok" if right else "wrong"}">{escape(number(details.get("returned")))}</b>.</p>'
    )
    drawn = {p.label for p in placed}
    elsewhere = [label for label in dict.fromkeys(seen) if label not in drawn]
    extra = (
        f'<p class="boards-note">You also read {len(elsewhere)} state(s) the drawing has no place for: '
        f"<code>{escape(', '.join(elsewhere[:20]))}{' …' if len(elsewhere) > 20 else ''}</code></p>"
        if elsewhere
        else ""
    )
    legend = [f'<li><span class="swatch {status}"></span>{escape(text)}</li>' for status, text in STATUS_TEXT.items()]
    if any(p.divergence for p in placed):
        legend.append('<li><span class="swatch first-divergence"></span>the first read where the searches part</li>')
    if any(p.window for p in placed):
        legend.append("<li><code>[α, β]</code> the reference's alpha and beta on entering the state</li>")
    return (
        f'<figure class="tree-figure lab-tree">{head}<div class="picture">{svg(placed)}</div>{extra}'
        f'<figcaption><ul class="legend">{"".join(legend)}</ul></figcaption></figure>'
    )


def svg(placed: Sequence[Placed]) -> str:
    by_index = {p.index: p for p in placed}
    width = max(p.x + p.width / 2 for p in placed) + GAP + 150  # room for a divergence label
    height = max(p.y for p in placed) + NODE_H / 2 + 40
    parts = [
        f'<svg class="tree" xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
        f'viewBox="0 0 {width:.0f} {height:.0f}" role="img" aria-label="the states each search read">'
    ]
    for p in placed:
        up = by_index.get(p.parent) if p.parent is not None else None
        if up is not None:
            parts.append(
                f'<line class="edge {p.status}" x1="{up.x:.1f}" y1="{up.y + NODE_H / 2 + 14:.1f}" '
                f'x2="{p.x:.1f}" y2="{p.y - NODE_H / 2:.1f}"/>'
            )
    parts += [_node(p) for p in placed]
    parts.append("</svg>")
    return "\n".join(parts)


def _node(p: Placed) -> str:
    classes = ["node", p.status] + (["first-divergence"] if p.divergence else [])
    tip = f"{p.label}: {STATUS_TEXT[p.status]}"
    if p.window is not None:
        tip += f"; the reference enters it with alpha, beta = {window_text(p.window)}"
    if p.value is not None:
        tip += f"; its value there: {number(p.value)}"
    w, x, y = p.width, p.x, p.y
    out = [f'<g class="{" ".join(classes)}" data-state="{escape(p.label)}"><title>{escape(tip)}</title>']
    if p.divergence:
        out.append(
            f'<rect class="halo" x="{x - w / 2 - 4:.1f}" y="{y - NODE_H / 2 - 4:.1f}" width="{w + 8:.1f}" height="{NODE_H + 8}" rx="8"/>'
        )
    out.append(
        f'<rect class="shape" x="{x - w / 2:.1f}" y="{y - NODE_H / 2:.1f}" width="{w:.1f}" height="{NODE_H}" rx="6"/>'
    )
    out.append(f'<text class="name" x="{x:.1f}" y="{y + 4:.1f}">{escape(p.text)}</text>')
    below = y + NODE_H / 2 + 12
    if p.value is not None:
        out.append(f'<text class="leaf-value" x="{x:.1f}" y="{below:.1f}">{escape(number(p.value))}</text>')
        below += 12
    if p.window is not None:
        out.append(
            f'<text class="window" x="{x:.1f}" y="{below:.1f}">[{escape(number(p.window[0]))}, {escape(number(p.window[1]))}]</text>'
        )
    if p.divergence:
        out.append(
            f'<text class="divergence-label" x="{x + w / 2 + 6:.1f}" y="{y - NODE_H / 2 - 2:.1f}">{escape(p.divergence)}</text>'
        )
    out.append("</g>")
    return "".join(out)
