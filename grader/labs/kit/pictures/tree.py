"""A game tree drawn as inline SVG: which nodes the student's search and the reference's read.

Input is a test's `details` with `"view": "tree"`: `root`, `graph` (node -> children),
`terminal_nodes` (leaf -> value), `seen` and `expected` (what each search read, in order),
and optionally `value` and `returned` (the root's), `windows` (the reference's alpha and
beta on entering each node), `roles` (the row labels, MAX / MIN by default) and `observed`:
`"inner"` when the grader sees only which inner nodes each search expanded (the negamax
lab's `next_states` calls), not which leaves it evaluated. Every node is a
`<g class="node STATUS">`, STATUS one of `both`, `student-only`, `reference-only`, `pruned`
(read by neither) or `unobserved` (a leaf under an expanded node, when only inner nodes are
observed); the first read where the two searches part also carries `first-divergence`. In
a large tree, a subtree that neither search read is drawn as one `node pruned collapsed`
marker with its node count, so the picture stays as wide as the search, not as the tree.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from html import escape

from ....checks.expansions import first_divergence
from ....checks.show import is_number, show

STATUS_TEXT = {  # the node classes, in the legend's order
    "both": "read by both",
    "student-only": "read only by you (the reference prunes it)",
    "reference-only": "read only by the reference (you skipped it)",
    "pruned": "pruned by both",
    "unobserved": "a leaf below an expanded node: the grader sees which nodes each search expanded, not its leaves",
}
# the same, when only inner nodes are observed (`"observed": "inner"`): a node is expanded, not read
EXPANDED_TEXT = {
    **STATUS_TEXT,
    "both": "expanded by both",
    "student-only": "expanded only by you (the reference prunes it)",
    "reference-only": "expanded only by the reference (you skipped it)",
}
ROLES = ("MAX", "MIN")
COLLAPSE_ABOVE = 40  # larger trees draw unread subtrees as one marker, and leaf windows only as tooltips

ROW = 84  # vertical distance between depths
NODE_H = 22
CHAR = 7.3  # width of one character of the 12px monospace labels
SMALL_CHAR = 6.1  # ... of the 10px window labels
GAP = 12  # horizontal space between neighbouring leaves
LEFT = 52  # room for the MAX/MIN row labels
TOP = 30  # room above the root for its first-divergence label


@dataclass(frozen=True)
class Node:
    """One drawn node (or collapsed marker), laid out."""

    name: str
    status: str
    depth: int
    x: float
    parent: str | None
    leaf_value: object = None  # the leaf's value; None for an inner node
    window: tuple[object, object] | None = None  # the reference's (alpha, beta) on entering it
    hidden: int = 0  # nodes folded into this collapsed marker (0: drawn as itself)
    window_label: bool = True  # False: the window is only in the tooltip (leaves of a large tree)
    divergence: str = ""  # at the first read where the searches part: whose read it is, e.g. "your read #8"

    @property
    def y(self) -> float:
        return TOP + NODE_H + self.depth * ROW

    @property
    def bottom(self) -> float:
        """Where edges to the children start: below the window label, which they would cross."""
        return self.y + NODE_H / 2 + (14 if self.window and self.window_label else 0)

    @property
    def width(self) -> float:
        return max(28.0, CHAR * len(self.label) + 12)

    @property
    def label(self) -> str:
        return f"{self.name} +{self.hidden - 1}" if self.hidden else self.name


def number(value: object) -> str:
    """A value as a student writes it, with infinities as the symbol."""
    if isinstance(value, float) and math.isinf(value):
        return "∞" if value > 0 else "-∞"
    return show(value)


def window_text(window: tuple[object, object]) -> str:
    return f"[{number(window[0])}, {number(window[1])}]"


class BadDetails(ValueError):
    """Details that can't be drawn (the report shows the test's text without a picture)."""


def layout(details: Mapping) -> list[Node]:
    """The nodes to draw, in preorder, with their x positions and statuses."""
    graph, leaves, root = details.get("graph"), details.get("terminal_nodes"), details.get("root")
    if not isinstance(graph, Mapping) or not isinstance(leaves, Mapping) or not isinstance(root, str):
        raise BadDetails("the tree is missing")
    if root not in graph and root not in leaves:
        raise BadDetails(f"the root {root!r} is not in the tree")
    order, depth, parent = _preorder(root, graph)
    kids: dict[str, list[str]] = {n: [] for n in order}
    for node in order[1:]:
        above = parent[node]
        if above is not None:  # always: only the root has no parent
            kids[above].append(node)
    seen, expected = _names(details.get("seen")), _names(details.get("expected"))
    seen_set, expected_set = set(seen), set(expected)
    status = {n: _status(n in seen_set, n in expected_set) for n in order}
    if details.get("observed") == "inner":  # a leaf is pruned when nobody expanded its parent
        for n in order:
            above = parent[n]
            if n in leaves and above is not None and status[above] != "pruned":
                status[n] = "unobserved"
    large = len(order) > COLLAPSE_ABOVE
    folded = _folded(order, kids, parent, status) if large else {}
    drawn = [n for n in order if not _inside_fold(n, parent, folded)]
    shown = {n: ([] if n in folded else kids[n]) for n in drawn}
    windows = details.get("windows")
    windows = windows if isinstance(windows, Mapping) else {}
    xs = _positions(drawn, shown, folded, leaves, {} if large else windows)
    marks = _divergence(seen, expected, "expansion" if details.get("observed") == "inner" else "read")
    return [
        Node(
            name=n,
            status=status[n],
            depth=depth[n],
            x=xs[n],
            parent=parent[n],
            leaf_value=leaves[n] if n in leaves and not shown[n] else None,
            window=_window(windows.get(n)),
            hidden=folded.get(n, 0),
            divergence=marks.get(n, ""),
            window_label=bool(shown[n]) or not large,
        )
        for n in drawn
    ]


def _names(value: object) -> list[str]:
    return [n for n in value if isinstance(n, str)] if isinstance(value, (list, tuple)) else []


def _status(by_student: bool, by_reference: bool) -> str:
    if by_student and by_reference:
        return "both"
    if by_student:
        return "student-only"
    return "reference-only" if by_reference else "pruned"


def _preorder(root: str, graph: Mapping) -> tuple[list[str], dict[str, int], dict[str, str | None]]:
    """Nodes reachable from the root, depth first; a node listed twice is drawn once."""
    order: list[str] = []
    depth: dict[str, int] = {root: 0}
    parent: dict[str, str | None] = {root: None}
    stack = [root]
    while stack:
        node = stack.pop()
        order.append(node)
        listed = graph.get(node, [])
        for child in reversed(listed if isinstance(listed, (list, tuple)) else []):
            if isinstance(child, str) and child not in depth:  # a malformed graph can't loop the drawing
                depth[child], parent[child] = depth[node] + 1, node
                stack.append(child)
    return order, depth, parent


def _folded(
    order: list[str], children: Mapping[str, Sequence[str]], parent: Mapping[str, str | None], status: dict[str, str]
) -> dict[str, int]:
    """Topmost subtrees of two or more nodes that neither search read: root -> node count."""
    size: dict[str, int] = {}
    unread: dict[str, bool] = {}
    for node in reversed(order):
        size[node] = 1 + sum(size[c] for c in children[node])
        unread[node] = status[node] == "pruned" and all(unread[c] for c in children[node])
    folded: dict[str, int] = {}
    for node in order:  # preorder: a folded ancestor comes first
        if unread[node] and size[node] > 1 and not _inside_fold(node, parent, folded):
            folded[node] = size[node]
    return folded


def _inside_fold(node: str, parent: Mapping[str, str | None], folded: Mapping[str, int]) -> bool:
    up = parent[node]
    while up is not None:
        if up in folded:
            return True
        up = parent[up]
    return False


def _divergence(seen: list[str], expected: list[str], noun: str = "read") -> dict[str, str]:
    """The node each search read at the first read where they part, with a label."""
    index = first_divergence(seen, expected)
    marks: dict[str, str] = {}
    if index is not None and index < len(seen):
        marks[seen[index]] = f"your {noun} #{index + 1}"
    if index is not None and index < len(expected):
        marks[expected[index]] = f"the reference's {noun} #{index + 1}"
    return marks


def _window(value: object) -> tuple[object, object] | None:
    if isinstance(value, (list, tuple)) and len(value) == 2:
        return value[0], value[1]
    return None


def _positions(
    drawn: list[str], shown: Mapping[str, list[str]], folded: Mapping[str, int], leaves: Mapping, windows: Mapping
) -> dict[str, float]:
    """Leaves (and markers) side by side in preorder, each as wide as its labels (`windows`:
    those drawn as labels); an inner node centred over its first and last child."""
    xs: dict[str, float] = {}
    right: float = LEFT
    for node in drawn:
        if not shown[node]:
            marker = Node(node, "pruned", 0, 0, None, hidden=folded.get(node, 0))
            labels = [marker.width, CHAR * len(number(leaves.get(node, "")))]
            window = _window(windows.get(node))
            if window:
                labels.append(SMALL_CHAR * len(window_text(window)))
            width = max(labels)
            xs[node] = right + width / 2
            right += width + GAP
    for node in reversed(drawn):
        if shown[node]:
            xs[node] = (xs[shown[node][0]] + xs[shown[node][-1]]) / 2
    return xs


def tree_figure(details: Mapping) -> str:
    """The tree case as an HTML figure: the root's value, the drawing and its legend."""
    try:
        nodes = layout(details)
    except BadDetails as exc:
        return f'<p class="no-picture">No picture of this tree: {escape(str(exc))}.</p>'
    root_line = ""
    if "value" in details:
        expected, returned = number(details.get("value")), number(details.get("returned"))
        state = "ok" if _returned_right(details) else "wrong"
        root_line = (
            f'<p class="root-line">Root value: expected <b class="expected">{escape(expected)}</b>, '
            f'you returned <b class="returned {state}">{escape(returned)}</b>.</p>'
        )
    present = {n.status for n in nodes}
    legend = [
        f'<li><span class="swatch {status}"></span>{escape(text)}</li>'
        for status, text in _texts(details).items()
        if status != "unobserved" or status in present
    ]
    if any(n.divergence for n in nodes):
        noun = "expansion" if details.get("observed") == "inner" else "read"
        legend.append(f'<li><span class="swatch first-divergence"></span>the first {noun} where the searches part</li>')
    if any(n.window for n in nodes):
        legend.append("<li><code>[α, β]</code> the reference's alpha and beta on entering the node</li>")
    if any(n.hidden for n in nodes):
        legend.append("<li><code>n +k</code> node n and the k nodes below it, all pruned by both</li>")
    note = details.get("roles_note")
    if isinstance(note, str) and note:
        legend.append(f"<li>{escape(note)}</li>")
    return (
        f'<figure class="tree-figure">{root_line}<div class="picture">{_svg(nodes, details)}</div>'
        f'<figcaption><ul class="legend">{"".join(legend)}</ul></figcaption></figure>'
    )


def _returned_right(details: Mapping) -> bool:
    returned = details.get("returned")
    return is_number(returned) and returned == details.get("value")


def _svg(nodes: list[Node], details: Mapping) -> str:
    by_name = {n.name: n for n in nodes}
    width = max(n.x + n.width / 2 for n in nodes) + GAP + 160
    height = max(n.y for n in nodes) + NODE_H / 2 + 40
    parts = [
        f'<svg class="tree" xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
        f'viewBox="0 0 {width:.0f} {height:.0f}" role="img" '
        f'aria-label="the tree, coloured by which search read each node">'
    ]
    parts += _row_labels(max(n.depth for n in nodes), _roles(details))
    for node in nodes:
        up = by_name.get(node.parent) if node.parent else None
        if up is not None:
            parts.append(
                f'<line class="edge {node.status}" x1="{up.x:.1f}" y1="{up.bottom:.1f}" '
                f'x2="{node.x:.1f}" y2="{node.y - NODE_H / 2:.1f}"/>'
            )
    parts += [_node(node, _texts(details)) for node in nodes]
    if "value" in details:
        parts.append(_root_value(nodes[0], details))
    parts.append("</svg>")
    return "\n".join(parts)


def _texts(details: Mapping) -> dict[str, str]:
    return EXPANDED_TEXT if details.get("observed") == "inner" else STATUS_TEXT


def _roles(details: Mapping) -> tuple[str, str]:
    """The two row labels (whose turn it is at even and odd depths), at most 6 characters."""
    roles = details.get("roles")
    if isinstance(roles, (list, tuple)) and len(roles) == 2 and all(isinstance(r, str) for r in roles):
        return roles[0][:6], roles[1][:6]
    return ROLES


def _row_labels(deepest: int, roles: tuple[str, str]) -> list[str]:
    return [
        f'<text class="role" x="6" y="{TOP + NODE_H + d * ROW + 4:.0f}">{escape(roles[d % 2])}</text>'
        for d in range(deepest + 1)
    ]


def _node(node: Node, texts: Mapping[str, str] = STATUS_TEXT) -> str:
    classes = ["node", node.status] + (["collapsed"] if node.hidden else [])
    if node.divergence:
        classes.append("first-divergence")
    tip = f"{node.name}: {texts[node.status]}"
    if node.hidden:
        tip = f"{node.name} and the {node.hidden - 1} nodes below it: pruned by both"
    if node.window:
        tip += f"; the reference enters it with alpha, beta = {window_text(node.window)}"
    w, x, y = node.width, node.x, node.y
    rx = 3 if node.leaf_value is not None else 10
    out = [
        f'<g class="{" ".join(classes)}" data-node="{escape(node.name)}"'
        + (f' data-count="{node.hidden}"' if node.hidden else "")
        + ">",
        f"<title>{escape(tip)}</title>",
    ]
    if node.divergence:
        out.append(
            f'<rect class="halo" x="{x - w / 2 - 4:.1f}" y="{y - NODE_H / 2 - 4:.1f}" width="{w + 8:.1f}" '
            f'height="{NODE_H + 8}" rx="{rx + 4}"/>'
        )
    out.append(
        f'<rect class="shape" x="{x - w / 2:.1f}" y="{y - NODE_H / 2:.1f}" width="{w:.1f}" '
        f'height="{NODE_H}" rx="{rx}"/>'
    )
    out.append(f'<text class="name" x="{x:.1f}" y="{y + 4:.1f}">{escape(node.label)}</text>')
    below = y + NODE_H / 2 + 12
    if node.leaf_value is not None:
        out.append(f'<text class="leaf-value" x="{x:.1f}" y="{below:.1f}">{escape(number(node.leaf_value))}</text>')
        below += 12
    if node.window and node.window_label:
        out.append(f'<text class="window" x="{x:.1f}" y="{below:.1f}">{escape(window_text(node.window))}</text>')
    if node.divergence:
        out.append(
            f'<text class="divergence-label" x="{x + w / 2 + 6:.1f}" y="{y - NODE_H / 2 - 2:.1f}">'
            f"{escape(node.divergence)}</text>"
        )
    out.append("</g>")
    return "".join(out)


def _root_value(root: Node, details: Mapping) -> str:
    expected = number(details.get("value"))
    returned = number(details.get("returned"))
    cls = "root-value ok" if _returned_right(details) else "root-value wrong"
    return (
        f'<text class="{cls}" x="{root.x + root.width / 2 + 10:.1f}" y="{root.y + 4:.1f}">'
        f"value {escape(expected)}, you returned {escape(returned)}</text>"
    )
