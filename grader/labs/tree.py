"""The `tree` lab: `alphabeta(node, alpha, beta, max_player)` over module globals `graph`
and `terminal_nodes` (DESIGN.md). The observer records which nodes are read; this module
plans the calls and judges the reads against the reference."""
from __future__ import annotations

import functools
from collections.abc import Callable
from math import inf

from reference.random_trees import random_tree
from reference.tree_bugs import BUGGY_CALLS, DIAGNOSIS_HINTS, HARDCODED_ANSWER
from reference.tree_search import alphabeta, true_value
from reference.trees import GameTree, TreeError

from ..checks import Verdict
from ..checks.bounds import BoundProbe, check_bounds
from ..checks.expansions import check_count, check_expansions, matching_bugs
from ..checks.show import describe_error, is_number, show_call
from ..checks.value import check_value
from ..sandbox.session import ProbeSetup
from ..spec import Spec
from ..spec.yaml_lines import LineDict
from .base import CasePlan, Judgement, Lab
from .casefields import read_header, require

CASE_KINDS = ("value", "nodes", "pruned", "bounds")
RANDOM_PARAMS = ("branching", "depth", "values", "value_range", "tie_rate", "scale")
READS = "distinct nodes read (expanded or opened)"
NO_READS_HINT = ("Your function read no node through graph[node] or terminal_nodes[leaf]: "
                 "it must look the tree up in those two globals at each call, not in a copy.")


class TreeLab(Lab):
    name = "tree"
    probe = ProbeSetup("tree", {"alphabeta": 4})
    api = {"alphabeta": "alphabeta(node, alpha, beta, max_player)"}
    bug_hints = DIAGNOSIS_HINTS

    def fixed_plans(self, spec: Spec) -> list[CasePlan]:
        return [plan for case in _fixed_cases(spec) for plan in _case_plans(case)]

    def random_plans(self, spec: Spec, seed: int) -> list[CasePlan]:
        return [_random_plan(index + 1, tree) for index, tree in enumerate(_random_trees(spec, seed))]

    def verify(self, spec: Spec) -> list[str]:
        problems = []
        for case in _fixed_cases(spec):
            result = alphabeta(case.tree)
            stored = case.expect
            actual = {"value": result.value, "nodes": result.nodes, "pruned": sorted(result.trace.pruned)}
            for key, value in actual.items():
                mine = sorted(stored[key]) if key == "pruned" else stored[key]
                if mine != value or (key == "value" and type(mine) is not type(value) and mine != value):
                    problems.append(f"{spec.path}:{case.line_of(key)}: {case.where}.expect.{key}: "
                                    f"stored {mine!r}, the reference computes {value!r}")
        if spec.random:
            _random_trees(spec, 0)  # the generator settings must work
        return problems


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
            raise spec.error(expect, "pruned", f"{self.where}.expect.pruned", f"{unknown[0]!r} is not a node of the tree")
        self.value, self.nodes, self.pruned = value, nodes, frozenset(pruned)

    def line_of(self, key: str) -> int | None:
        return self.expect.lines.get(key, self.expect.line)


def _fixed_cases(spec: Spec) -> list[TreeCase]:
    names: set[str] = set()
    return [TreeCase(spec, index, raw, names) for index, raw in enumerate(spec.cases)]


def _random_trees(spec: Spec, seed: int) -> list[GameTree]:
    assert spec.random is not None
    params = dict(spec.random.params)
    for key in params:
        if key not in RANDOM_PARAMS:
            raise spec.error(spec.raw["random"], key, f"random.{key}",
                             f"unknown setting; expected one of {', '.join(RANDOM_PARAMS)}")
    for key in ("branching", "depth", "value_range"):
        if key in params:
            params[key] = tuple(params[key]) if isinstance(params[key], list) else params[key]
    scale = params.pop("scale", 1)
    try:
        if isinstance(scale, bool) or not isinstance(scale, (int, float)) or scale <= 0:
            raise ValueError(f"scale must be a positive number, not {scale!r}")
        trees = [random_tree(seed * 1000 + i, **params) for i in range(spec.random.count)]
        return trees if scale == 1 else [_scaled(tree, scale) for tree in trees]
    except (TypeError, ValueError) as exc:
        raise spec.error(spec.raw, "random", "random", f"bad generator settings: {exc}") from None


def _scaled(tree: GameTree, scale: float) -> GameTree:
    """Every leaf value times `scale`: values far beyond any number a student might use as
    "infinity" (and floats), while ties (equal small values) stay ties."""
    graph, leaves = tree.to_mapping()
    return GameTree.from_mapping(graph, {leaf: value * scale for leaf, value in leaves.items()}, tree.root)


def _root_call(tree: GameTree) -> list:
    return [tree.root, -inf, inf, True]


def _request(case_id: str, tree: GameTree, calls: list[list]) -> dict:
    graph, leaves = tree.to_mapping()
    return {"id": case_id, "graph": graph, "terminal_nodes": leaves, "calls": calls}


def _case_plans(case: TreeCase) -> list[CasePlan]:
    header, tree = case.header, case.tree
    plans = []
    root_kinds = tuple(k for k in header.checks if k != "bounds")
    expected_order = [n for n in tree.nodes() if n not in case.pruned]

    def judge_root(calls: list[dict]) -> Judgement:
        return _judge_search(calls[0], tree, case.value, case.nodes, expected_order, root_kinds)

    if root_kinds:
        plans.append(CasePlan(header.name, _request(f"{header.name}/root", tree, [_root_call(tree)]),
                              root_kinds, judge_root, header.visibility, header.points))
    if "bounds" in header.checks and tree.internal_nodes():
        paired = bound_probes(tree)
        calls = [call for call, _ in paired]
        probes = [probe for _, probe in paired]

        def judge_bounds(observed: list[dict]) -> Judgement:
            return Judgement({"bounds": _judge_bounds(probes, observed)},
                             lambda: _bugs_behind_calls(tree, calls, observed))

        plans.append(CasePlan(header.name, _request(f"{header.name}/bounds", tree, calls), ("bounds",),
                              judge_bounds, header.visibility, header.points))
    return plans


def _random_plan(number: int, tree: GameTree) -> CasePlan:
    result = alphabeta(tree)
    expected_order = list(result.trace.order)
    name = f"random {number}"

    def judge(calls: list[dict]) -> Judgement:
        judgement = _judge_search(calls[0], tree, result.value, result.nodes, expected_order, ("value", "pruned"))
        failing = [v for v in judgement.verdicts.values() if not v.passed]
        if not failing:
            verdict = Verdict.ok(f"value, node count and pruned set all match on a tree of {len(tree)} nodes.")
        else:
            graph, leaves = tree.to_mapping()
            text = "\n".join(v.message for v in failing)
            diagnoses = tuple(dict.fromkeys(d for v in failing for d in v.diagnoses))
            verdict = Verdict.fail(f"{text}\nThe tree: graph = {graph}\nterminal_nodes = {leaves}", diagnoses)
        details = next(iter(judgement.verdicts.values())).details
        return Judgement({"random": verdict.with_details(details)}, judgement.consistent_bugs)

    return CasePlan(name, _request(name, tree, [_root_call(tree)]), ("random",), judge)


def _judge_search(call: dict, tree: GameTree, value: float, nodes: int, expected_order: list[str],
                  kinds: tuple[str, ...]) -> Judgement:
    text = show_call("alphabeta", tree.root, -inf, inf, True)
    if call.get("error"):
        failed = Verdict.fail(f"{text} raised {describe_error(call['error'])}")
        return Judgement({kind: failed for kind in kinds})
    reads = [r for r in call.get("reads", []) if isinstance(r, str)]
    bugs = functools.cache(lambda: _matching_bugs(tree, _root_call(tree), reads, call.get("returned")))
    verdicts: dict[str, Verdict] = {}
    if "value" in kinds:
        verdicts["value"] = check_value(call.get("returned"), value, text)
    if "nodes" in kinds:
        verdicts["nodes"] = check_count(len(reads), nodes, READS, NO_READS_HINT if not reads else "")
    if "pruned" in kinds:
        verdicts["pruned"] = _judge_pruned(tree, reads, expected_order, bugs)
    picture = tree_details(tree, reads, expected_order, call.get("returned"), value)
    return Judgement({k: v.with_details(picture) for k, v in verdicts.items()}, bugs)


def tree_details(tree: GameTree, reads: list[str], expected_order: list[str], returned: object,
                 value: float) -> dict:
    """What a report needs to draw this case: the tree, both searches, the reference's
    alpha and beta on entering each node it read."""
    graph, leaves = tree.to_mapping()
    windows = alphabeta(tree).trace.windows
    return {
        "view": "tree", "root": tree.root, "graph": graph, "terminal_nodes": leaves,
        "seen": reads, "expected": expected_order, "returned": returned, "value": value,
        "windows": {node: [alpha, beta] for node, (alpha, beta) in windows.items()},
    }


def _matching_bugs(tree: GameTree, call: list, reads: list[str], returned: object,
                   by_value: bool = True) -> frozenset[str]:
    """Classic bugs whose `call` reads what the student read (and, `by_value`, returns what they
    returned). Reading nothing and returning the example's value is the hard-coded answer;
    across cases (the pipeline keeps only bugs consistent with every case) that means: whatever
    the tree."""
    if not reads:
        hardcoded = is_number(returned) and returned == HARDCODED_ANSWER.value
        return frozenset({HARDCODED_ANSWER.name} if hardcoded else ())
    results = {name: replay(tree, *call) for name, replay in BUGGY_CALLS.items()}
    by_reads = matching_bugs(reads, {name: result.trace.order for name, result in results.items()})
    if not by_value or not is_number(returned):
        return by_reads
    return frozenset(name for name in by_reads if results[name].value == returned)


def _bugs_behind_calls(tree: GameTree, calls: list[list], observed: list[dict]) -> frozenset[str] | None:
    """Classic bugs consistent with the reads of every direct call that did not raise. Values
    are not compared: on a narrowed window an accepted fail-hard search returns other values
    than the fail-soft replays, but it reads the same nodes."""
    consistent: frozenset[str] | None = None
    for call, seen in zip(calls, observed):
        if seen.get("error"):
            continue
        reads = [r for r in seen.get("reads", []) if isinstance(r, str)]
        bugs = _matching_bugs(tree, call, reads, seen.get("returned"), by_value=False)
        consistent = bugs if consistent is None else consistent & bugs
        if not consistent:
            break  # nothing left to rule out
    return consistent


def _judge_pruned(tree: GameTree, reads: list[str], expected_order: list[str],
                  bugs: Callable[[], frozenset[str]]) -> Verdict:
    if reads == expected_order:
        return check_expansions(reads, expected_order)
    read = set(expected_order)
    pruned_roots = [n for n in tree.nodes() if n not in read and tree.parent(n) in read]
    pruned = [n for n in tree.nodes() if n not in read]
    summary = ("The reference prunes " + (", ".join(f"Pruning Node -> {n}" for n in pruned_roots) or "nothing")
               + (f"; pruned set: {{{', '.join(pruned)}}}." if pruned else "."))
    if not reads:
        summary = f"{NO_READS_HINT}\n{summary}"
    return check_expansions(reads, expected_order, diagnoses=sorted(bugs()), extra=summary)


def bound_probes(tree: GameTree) -> list[tuple[list, BoundProbe]]:
    """Calls at every internal node with windows below, around, above and touching its
    true value, each paired with what the bound specification demands of it."""
    probes = []
    for node in tree.internal_nodes():
        v = true_value(tree, node)
        step = 1 if isinstance(v, int) else 0.5
        max_player = tree.is_max(node)
        windows = [(-inf, v - step), (v - 2 * step, v - step), (v - step, v), (v - step, v + step),
                   (v, v + step), (v + step, v + 2 * step), (v + step, inf)]
        for alpha, beta in windows:
            call = [node, alpha, beta, max_player]
            probes.append((call, BoundProbe(show_call("alphabeta", *call), alpha, beta, v)))
    return probes


def _judge_bounds(probes: list[BoundProbe], observed: list[dict]) -> Verdict:
    results = []
    for probe, call in zip(probes, observed):
        error = describe_error(call["error"]) if call.get("error") else None
        results.append((probe, call.get("returned"), error))
    if len(observed) < len(probes):
        missing = probes[len(observed)]
        results.append((missing, None, "nothing: the calls stopped early"))
    return check_bounds(results)
