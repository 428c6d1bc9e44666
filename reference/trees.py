"""Explicit game trees, as the `tree` lab gives them: `graph` (node -> children) and `terminal_nodes` (leaf -> value).

A `GameTree` is checked once when it is made, so searches and the grader can trust it, and a
course author who writes a broken case gets a one-line `TreeError` that names the node at fault.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

Number = int | float


class TreeError(ValueError):
    """A malformed game tree; the message names the node and what is wrong with it."""


@dataclass(frozen=True)
class GameTree:
    """A validated game tree whose root is a MAX node and whose levels alternate MAX / MIN.

    Build it with `from_mapping`, which also accepts loose input (lists, numpy numbers). Direct
    construction (children as tuples, values as int or float) is checked too, so every `GameTree`
    that exists is a valid tree.
    Treat the dicts as read-only: the tree caches its layout.
    """

    root: str
    children: dict[str, tuple[str, ...]]
    values: dict[str, Number]
    _order: tuple[str, ...] = field(init=False, repr=False, compare=False)
    _index: dict[str, int] = field(init=False, repr=False, compare=False)
    _parent: dict[str, str | None] = field(init=False, repr=False, compare=False)
    _depth: dict[str, int] = field(init=False, repr=False, compare=False)
    _size: dict[str, int] = field(init=False, repr=False, compare=False)
    _hash: int = field(init=False, repr=False, compare=False)

    @classmethod
    def from_mapping(cls, graph: Mapping, terminal_nodes: Mapping, root: str | None = None) -> GameTree:
        """Build a tree from the lab's `graph` and `terminal_nodes`; the root is the node nobody lists as a child."""
        children = _read_graph(graph)
        values = _read_values(terminal_nodes)
        return cls(_only_root(children, values) if root is None else root, children, values)

    def __post_init__(self) -> None:
        _check_links(self.root, self.children, self.values)
        order, parent, depth = _walk(self.root, self.children)
        for node in _all_nodes(self.children, self.values):
            if node not in depth:
                raise TreeError(f"node {node!r} is not reachable from the root {self.root!r}")
        size = dict.fromkeys(order, 1)
        for node in reversed(order[1:]):
            above = parent[node]
            if above is not None:  # always: only the root has no parent
                size[above] += size[node]
        layout = {
            "_order": order,
            "_index": {node: i for i, node in enumerate(order)},
            "_parent": parent,
            "_depth": depth,
            "_size": size,
            "_hash": hash((self.root, frozenset(self.children.items()), frozenset(self.values.items()))),
        }
        for name, value in layout.items():
            object.__setattr__(self, name, value)

    def __hash__(self) -> int:
        return self._hash

    def __len__(self) -> int:
        return len(self._order)

    def nodes(self) -> list[str]:
        """All nodes in preorder (children in listed order)."""
        return list(self._order)

    def internal_nodes(self) -> list[str]:
        return [node for node in self._order if node in self.children]

    def leaves(self) -> list[str]:
        return [node for node in self._order if node in self.values]

    def is_leaf(self, node: str) -> bool:
        return self._known(node) in self.values

    def parent(self, node: str) -> str | None:
        return self._parent[self._known(node)]

    def depth(self, node: str) -> int:
        """Distance from the root (the root has depth 0)."""
        return self._depth[self._known(node)]

    def is_max(self, node: str) -> bool:
        """MAX moves at even depths, MIN at odd ones."""
        return self.depth(node) % 2 == 0

    def subtree(self, node: str) -> list[str]:
        """`node` and all its descendants, in preorder (a subtree is a contiguous run of the preorder)."""
        start = self._index[self._known(node)]
        return list(self._order[start : start + self._size[node]])

    def to_mapping(self) -> tuple[dict[str, list[str]], dict[str, Number]]:
        """Plain, JSON-able `graph` and `terminal_nodes`, as the student code receives them."""
        return {node: list(kids) for node, kids in self.children.items()}, dict(self.values)

    def _known(self, node: str) -> str:
        if node not in self._depth:
            raise KeyError(f"{node!r} is not a node of this tree")
        return node


def _name(node: object, where: str) -> str:
    if not isinstance(node, str):
        raise TreeError(f"node {node!r} ({where}) is of type {type(node).__name__}; node names must be strings")
    return node


def _read_graph(graph: Mapping) -> dict[str, tuple[str, ...]]:
    if not isinstance(graph, Mapping):
        raise TreeError(f"graph must map each node to its list of children, not be a {type(graph).__name__}")
    children = {}
    for parent, kids in graph.items():
        _name(parent, "a key of graph")
        if isinstance(kids, (str, bytes)) or not isinstance(kids, Sequence):
            raise TreeError(f"node {parent!r} has children {kids!r}; give them as a list of node names")
        children[parent] = tuple(_name(kid, f"a child of {parent!r}") for kid in kids)
    return children


def _read_values(terminal_nodes: Mapping) -> dict[str, Number]:
    if not isinstance(terminal_nodes, Mapping):
        raise TreeError(f"terminal_nodes must map each leaf to its value, not be a {type(terminal_nodes).__name__}")
    return {_name(leaf, "a key of terminal_nodes"): _number(leaf, value) for leaf, value in terminal_nodes.items()}


def _number(leaf: str, value: object) -> Number:
    """The leaf's value as a plain int or float (so numpy numbers become Python ones)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TreeError(f"leaf {leaf!r} has value {value!r}, which is not a number")
    number = int(value) if isinstance(value, numbers.Integral) else float(value)
    if not math.isfinite(number):
        raise TreeError(f"leaf {leaf!r} has value {value!r}; leaf values must be finite")
    return number


def _all_nodes(children: Mapping[str, Iterable[str]], values: Mapping[str, Number]) -> list[str]:
    """Every node named anywhere, in the order first named (so messages point at the first problem)."""
    named = [*children, *(kid for kids in children.values() for kid in kids), *values]
    return list(dict.fromkeys(named))


def _only_root(children: dict[str, tuple[str, ...]], values: dict[str, Number]) -> str:
    nodes = _all_nodes(children, values)
    if not nodes:
        raise TreeError("the tree is empty: graph and terminal_nodes name no node")
    listed = {kid for kids in children.values() for kid in kids}
    roots = [node for node in nodes if node not in listed]
    if not roots:
        raise TreeError(_cycle_message(_find_cycle(children)))
    if len(roots) == 1:
        return roots[0]
    internal_roots = [node for node in roots if node in children]
    if len(internal_roots) == 1:
        return internal_roots[0]  # the stray leaves are then reported as unreachable
    names = ", ".join(map(repr, roots))
    raise TreeError(f"{len(roots)} nodes are nobody's child ({names}); a tree has exactly one root")


def _check_links(root: str, children: Mapping[str, Sequence[str]], values: Mapping[str, Number]) -> None:
    """Everything that makes the parent/child links a tree, except reachability (`_walk` shows that)."""
    _name(root, "the root")
    for leaf, value in values.items():
        _number(_name(leaf, "a key of terminal_nodes"), value)
    for parent, kids in children.items():
        _name(parent, "a key of graph")
        if parent in values:
            raise TreeError(f"node {parent!r} has both children (in graph) and a value (in terminal_nodes)")
        if not kids:
            raise TreeError(f"node {parent!r} has an empty list of children; leave leaves out of graph")
        seen = set()
        for kid in kids:
            if _name(kid, f"a child of {parent!r}") in seen:
                raise TreeError(f"node {parent!r} lists child {kid!r} twice")
            seen.add(kid)
            if kid not in children and kid not in values:
                raise TreeError(f"node {kid!r} has no children and no value")
    cycle = _find_cycle(children)
    if cycle:
        raise TreeError(_cycle_message(cycle))
    parent_of: dict[str, str] = {}
    for parent, kids in children.items():
        for kid in kids:
            if kid in parent_of:
                raise TreeError(f"node {kid!r} is a child of both {parent_of[kid]!r} and {parent!r}")
            parent_of[kid] = parent
    if root not in children and root not in values:
        raise TreeError(f"root {root!r} is not a node of the tree")
    if root in parent_of:
        raise TreeError(f"root {root!r} is a child of {parent_of[root]!r}, so it is not the root")


def _find_cycle(children: Mapping[str, Sequence[str]]) -> list[str]:
    """A path `n -> ... -> n` through the child links, or [] if there is none (iterative: deep trees are fine)."""
    on_path, done = set(), set()
    for start in children:
        if start in done:
            continue
        path, pending = [start], [iter(children[start])]
        on_path.add(start)
        while path:
            kid = next(pending[-1], None)
            if kid is None:
                node = path.pop()
                pending.pop()
                on_path.discard(node)
                done.add(node)
            elif kid in on_path:
                return path[path.index(kid) :] + [kid]
            elif kid in children and kid not in done:
                path.append(kid)
                pending.append(iter(children[kid]))
                on_path.add(kid)
    return []


def _cycle_message(cycle: list[str]) -> str:
    return f"node {cycle[0]!r} is its own descendant: {' -> '.join(map(repr, cycle))} is a cycle"


def _walk(
    root: str, children: Mapping[str, Sequence[str]]
) -> tuple[tuple[str, ...], dict[str, str | None], dict[str, int]]:
    """Preorder, parents and depths of the nodes reachable from `root` (the links are known to form a tree)."""
    order: list[str] = []
    parent: dict[str, str | None] = {root: None}
    depth = {root: 0}
    stack = [root]
    while stack:
        node = stack.pop()
        order.append(node)
        for kid in reversed(children.get(node, ())):
            parent[kid] = node
            depth[kid] = depth[node] + 1
            stack.append(kid)
    return tuple(order), parent, depth
