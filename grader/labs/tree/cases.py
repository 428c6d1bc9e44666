"""The tree lab's spec cases: a tree and its stored expectations, validated as they are read."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from math import inf
from typing import Any, Literal

from reference.tree_search import SearchResult, alphabeta
from reference.trees import GameTree, TreeError

from ...checks.bounds import BoundProbe
from ...spec import Conventions, Spec
from ...spec.yaml_lines import LineDict
from ..kit.fields import read_header, require
from ..kit.messages import mismatch
from ..kit.observations import CallObservation

CASE_KINDS = ("value", "nodes", "pruned", "bounds")


class TreeCase:
    """A fixed case, validated: the tree and its stored expectations."""

    def __init__(self, spec: Spec, index: int, raw: LineDict, names: set[str]) -> None:
        header = read_header(spec, index, raw, CASE_KINDS, {"graph", "terminal_nodes", "root"}, names)
        self.header, self.where, self.expect = header, header.where, header.expect
        graph = raw.get("graph", {})
        leaves = require(spec, raw, "terminal_nodes", f"{self.where}.terminal_nodes", dict, "a mapping leaf -> number")
        if not isinstance(graph, dict):
            raise spec.error(raw, "graph", f"{self.where}.graph", "must be a mapping node -> list of children")
        try:
            self.tree = GameTree.from_mapping(graph, leaves, raw.get("root"))
        except TreeError as exc:
            raise spec.error(raw, "graph" if graph else "terminal_nodes", f"{self.where}.graph", str(exc)) from None
        expect = self.expect
        value = require(spec, expect, "value", f"{self.where}.expect.value", (int, float), "the root value (a number)")
        nodes = require(spec, expect, "nodes", f"{self.where}.expect.nodes", int, "the number of distinct nodes read")
        pruned = require(spec, expect, "pruned", f"{self.where}.expect.pruned", list, "the list of pruned nodes")
        known = set(self.tree.nodes())
        unknown = [n for n in pruned if n not in known]
        if unknown:
            raise spec.error(
                expect, "pruned", f"{self.where}.expect.pruned", f"{unknown[0]!r} is not a node of the tree"
            )
        self.value, self.nodes, self.pruned = value, nodes, frozenset(pruned)
        self.conventions = spec.conventions

    def line_of(self, key: str) -> int | None:
        return self.expect.lines.get(key, self.expect.line)

    def verify(self, path: str) -> list[str]:
        result = alphabeta(self.tree, cutoff=cutoff_of(self.conventions))
        actual = {"value": result.value, "nodes": result.nodes, "pruned": sorted(result.trace.pruned)}
        problems = []
        for key, value in actual.items():
            mine = sorted(self.expect[key]) if key == "pruned" else self.expect[key]
            if mine != value:
                problems.append(mismatch(path, self.line_of(key), f"{self.where}.expect.{key}", mine, value))
        return problems


def read_cases(spec: Spec) -> list[TreeCase]:
    names: set[str] = set()
    return [TreeCase(spec, index, raw, names) for index, raw in enumerate(spec.cases)]


def cutoff_of(conventions: Conventions) -> Literal[">=", ">"]:
    """The reference's cut-off test under the spec's conventions."""
    return ">" if conventions.strict else ">="


@dataclass(frozen=True)
class SearchCase:
    """What the root call `alphabeta(root, -inf, inf, True)` is judged against, in `kinds`;
    `cutoff` is the course's (the bug replays follow it)."""

    tree: GameTree
    value: float
    nodes: int
    expected_order: tuple[str, ...]  # the nodes the reference reads, in order
    kinds: tuple[str, ...]
    cutoff: Literal[">=", ">"] = ">="
    # other read orders a correct search may take: under a strict cut-off a fail-hard search
    # hands its parent the bound itself where a fail-soft one hands a value past it, so the
    # parent (cutting only when alpha > beta) reads on where the fail-soft reference stops
    other_orders: tuple[tuple[str, ...], ...] = ()
    # the reference's search of the tree when the plan has run it already (a random case's)
    reference: SearchResult | None = field(default=None, compare=False, repr=False)

    @property
    def call(self) -> list:
        return root_call(self.tree)

    @cached_property
    def windows(self) -> dict[str, tuple[float, float]]:
        """The reference's (alpha, beta) on entering each node it reads, for a picture: worked
        out once per case, not at every judgement (every grading of a fixed case, each smaller
        tree a failing random case is shrunk on)."""
        return (self.reference or alphabeta(self.tree, cutoff=self.cutoff)).trace.windows

    def order_for(self, reads: list[str]) -> tuple[str, ...]:
        """The accepted order the student's reads are judged against: the one they match, else the reference's."""
        seen = tuple(reads)
        return seen if seen in self.other_orders else self.expected_order


def other_orders(tree: GameTree, cutoff: Literal[">=", ">"]) -> tuple[tuple[str, ...], ...]:
    """The read orders of the other correct search styles at the root call, when they differ
    from the fail-soft reference's (only the fail-hard search under a strict cut-off does;
    under `alpha >= beta` a clamped value cuts exactly where the value itself would)."""
    if cutoff != ">":
        return ()
    soft = tuple(alphabeta(tree, cutoff=cutoff).trace.order)
    hard = tuple(alphabeta(tree, cutoff=cutoff, fail="hard").trace.order)
    return (hard,) if hard != soft else ()


@dataclass(frozen=True)
class BoundsCase:
    """Direct calls at internal nodes with narrowed windows, each with its bound probe."""

    tree: GameTree
    calls: tuple[list, ...]
    probes: tuple[BoundProbe, ...]
    cutoff: Literal[">=", ">"] = ">="


def root_call(tree: GameTree) -> list:
    return [tree.root, -inf, inf, True]


class ReadsCall(CallObservation, total=False):
    """What the observer sends for one call of alphabeta: the nodes read, in order."""

    reads: list[Any]
