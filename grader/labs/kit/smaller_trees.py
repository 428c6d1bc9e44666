"""Smaller game trees made from a failing random tree (the tree lab's, and the negamax lab's
tree game): subtrees cut, nodes replaced by a leaf or by a grandchild, values made smaller.
Every candidate is a valid tree whose levels still alternate MAX and MIN, renamed the way
the random trees are named (one letter per depth, a number per level), so that the case a
student reads looks like any other."""

from __future__ import annotations

import math
from collections.abc import Iterator

from reference.random_trees import level_letters
from reference.tree_search import true_value
from reference.trees import GameTree, Number

from .messages import counted


def tree_size(tree: GameTree) -> tuple[int, int]:
    """(nodes, the sum of the leaves' magnitudes rounded up): fewer nodes first, then
    smaller values."""
    return len(tree), sum(math.ceil(abs(v)) for v in tree.values.values())


def tree_text(tree: GameTree) -> str:
    return f"a tree of {counted(len(tree), 'node')}"


def smaller_trees(tree: GameTree) -> Iterator[GameTree]:
    """Candidates, biggest cut first: every value made a small whole number of the same
    order (one call, and the case reads better from then on), a child dropped, a node made
    a leaf of its value, a node replaced by one of its grandchildren, then one leaf at a
    time towards 0."""
    ranked = _ranked(tree.values)
    if ranked != tree.values:
        yield GameTree(tree.root, dict(tree.children), ranked)
    yield from _dropped_children(tree)
    yield from _nodes_made_leaves(tree)
    yield from _hoisted_grandchildren(tree)
    yield from _smaller_values(tree)


def renamed(root: str, children: dict[str, tuple[str, ...]], values: dict[str, Number]) -> GameTree:
    """The tree with its nodes named by depth and position ('a0', 'b0', 'b1', 'c0', ...)."""
    names: dict[str, str] = {}
    counters: dict[int, int] = {}
    stack = [(root, 0)]
    order = []
    while stack:  # preorder, children left to right
        node, depth = stack.pop()
        order.append((node, depth))
        stack.extend((kid, depth + 1) for kid in reversed(children.get(node, ())))
    for node, depth in sorted(order, key=lambda item: item[1]):  # stable: left to right within a level
        number = counters.get(depth, 0)
        counters[depth] = number + 1
        names[node] = f"{level_letters(depth)}{number}"
    return GameTree(
        names[root],
        {names[n]: tuple(names[k] for k in kids) for n, kids in children.items() if n in names},
        {names[leaf]: value for leaf, value in values.items() if leaf in names},
    )


def _without(tree: GameTree, node: str) -> tuple[dict[str, tuple[str, ...]], dict[str, Number]]:
    """The tree's links and values with `node`'s subtree removed (its parent keeps the rest)."""
    gone = set(tree.subtree(node))
    children = {n: tuple(k for k in kids if k not in gone) for n, kids in tree.children.items() if n not in gone}
    values = {leaf: v for leaf, v in tree.values.items() if leaf not in gone}
    return children, values


def _dropped_children(tree: GameTree) -> Iterator[GameTree]:
    cuts = [
        (len(tree.subtree(kid)), index, kid)
        for index, node in enumerate(tree.internal_nodes())
        if len(tree.children[node]) > 1
        for kid in tree.children[node]
    ]
    for _, _, kid in sorted(cuts, key=lambda cut: (-cut[0], cut[1])):
        children, values = _without(tree, kid)
        yield renamed(tree.root, children, values)


def _nodes_made_leaves(tree: GameTree) -> Iterator[GameTree]:
    for node in sorted(tree.internal_nodes(), key=lambda n: (-len(tree.subtree(n)), tree.depth(n))):
        children, values = _without(tree, node)
        parent = tree.parent(node)
        if parent is None:
            yield renamed(node, {}, {node: true_value(tree, node)})
            continue
        children[parent] = tree.children[parent]  # the node stays in its place, as a leaf
        values[node] = true_value(tree, node)
        yield renamed(tree.root, children, values)


def _hoisted_grandchildren(tree: GameTree) -> Iterator[GameTree]:
    """`node` replaced by the subtree of one of its grandchildren (two levels up, so every
    node keeps its role)."""
    for node in tree.internal_nodes():
        for kid in tree.children[node]:
            for grandchild in tree.children.get(kid, ()):
                kept = set(tree.subtree(grandchild))
                gone = set(tree.subtree(node)) - kept
                children = {n: kids for n, kids in tree.children.items() if n not in gone}
                values = {leaf: v for leaf, v in tree.values.items() if leaf not in gone}
                parent = tree.parent(node)
                if parent is None:
                    yield renamed(grandchild, children, values)
                    continue
                children[parent] = tuple(grandchild if k == node else k for k in tree.children[parent])
                yield renamed(tree.root, children, values)


def _smaller_values(tree: GameTree) -> Iterator[GameTree]:
    for leaf in tree.leaves():
        value = tree.values[leaf]
        for smaller in dict.fromkeys((0, int(value / 2))):
            if abs(smaller) < abs(value):
                yield GameTree(tree.root, dict(tree.children), {**tree.values, leaf: smaller})


def _ranked(values: dict[str, Number]) -> dict[str, Number]:
    """Each value replaced by its rank among the distinct values of its sign (-2, -1, 0, 1,
    2, ...): the same order, the same ties, the same signs, small whole numbers."""
    negatives = sorted({v for v in values.values() if v < 0}, reverse=True)
    positives = sorted({v for v in values.values() if v > 0})
    rank = {v: -(i + 1) for i, v in enumerate(negatives)} | {v: i + 1 for i, v in enumerate(positives)}
    return {leaf: rank.get(v, 0) for leaf, v in values.items()}
