"""The tree lab's judges: pure functions `judge_*(observed, case) -> Judgement` from the
plain observation dicts of one request (one per call) to verdicts per check kind."""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import replace

from reference.tree_search import alphabeta
from reference.trees import GameTree

from ...checks import Verdict
from ...checks.bounds import check_bounds
from ...checks.expansions import check_count, check_expansions
from ...checks.show import describe_error, is_number, show_call
from ...checks.value import check_value
from ..kit import Judgement
from ..kit.observations import answer_at
from .cases import BoundsCase, ReadsCall, SearchCase
from .hints import NO_READS_HINT, READS, bugs_behind_calls, replayed_bugs


def judge_search(observed: list[ReadsCall], case: SearchCase, diagnose: bool = True) -> Judgement:
    """The root call: value, node count and reads (pruned), with the tree for a picture.
    `diagnose=False`: no classic bug is replayed or named (a shrink candidate's judgement,
    completed later if it is the case shown); the verdicts are otherwise the same."""
    call, tree, kinds = answer_at(observed), case.tree, case.kinds
    text = show_call("alphabeta", *case.call)
    if call.get("error"):
        failed = Verdict.fail(f"{text} raised {describe_error(call.get('error') or {})}")
        return Judgement({kind: failed for kind in kinds})
    reads, order, nodes = _reads_and_order(call, case)
    bugs = functools.cache(
        lambda: (
            replayed_bugs(tree, case.call, reads, call.get("returned"), cutoff=case.cutoff) if diagnose else frozenset()
        )
    )
    verdicts: dict[str, Verdict] = {}
    if "value" in kinds:
        verdicts["value"] = check_value(call.get("returned"), case.value, text)
    if "nodes" in kinds:
        verdicts["nodes"] = check_count(len(reads), nodes, READS, NO_READS_HINT if not reads else "")
    if "pruned" in kinds:
        verdicts["pruned"] = judge_pruned(tree, reads, list(order), bugs)
    # a bug that reads and returns what the student's search did explains a wrong value or count too
    verdicts = {
        k: v if v.passed or v.diagnoses else v.with_diagnoses(tuple(sorted(bugs()))) for k, v in verdicts.items()
    }
    picture = tree_details(tree, reads, list(order), call.get("returned"), case.value, case.cutoff, case.windows)
    return Judgement({k: v.with_details(picture) for k, v in verdicts.items()}, bugs)


def failing_kinds(observed: list[ReadsCall], case: SearchCase) -> tuple[str, ...]:
    """The kinds judge_search fails on this observation, in its order, and nothing else (no
    message, picture or diagnosis): what a shrink candidate is asked (shrinking.py). The
    same tests as check_value, check_count and judge_pruned make (a property test holds
    the two to each other)."""
    call = answer_at(observed)
    if call.get("error"):
        return tuple(case.kinds)
    reads, order, nodes = _reads_and_order(call, case)
    returned = call.get("returned")
    failed = {
        "value": not (is_number(returned) and returned == case.value),
        "nodes": len(reads) != nodes,
        "pruned": reads != list(order),
    }
    return tuple(kind for kind in ("value", "nodes", "pruned") if kind in case.kinds and failed[kind])


def _reads_and_order(call: ReadsCall, case: SearchCase) -> tuple[list[str], tuple[str, ...], int]:
    """The nodes the call read (names only), the accepted order they are judged against and
    its length (the node count expected)."""
    reads = [r for r in call.get("reads", []) if isinstance(r, str)]
    order = case.order_for(reads)
    return reads, order, case.nodes if order == case.expected_order else len(order)


def judge_bounds(observed: list[ReadsCall], case: BoundsCase) -> Judgement:
    """Every narrowed-window call against the bound specification."""
    results: list[tuple] = []
    for probe, call in zip(case.probes, observed):
        error = f"raised {describe_error(call.get('error') or {})}" if call.get("error") else None
        results.append((probe, call.get("returned"), error))
    if len(observed) < len(case.probes):
        results.append((case.probes[len(observed)], None, "got no answer: the calls stopped early"))
    return Judgement(
        {"bounds": check_bounds(results)},
        lambda: bugs_behind_calls(case.tree, list(case.calls), observed, case.cutoff),
        narrowed=lambda among: bugs_behind_calls(case.tree, list(case.calls), observed, case.cutoff, among),
    )


def tree_details(
    tree: GameTree,
    reads: list[str],
    expected_order: list[str],
    returned: object,
    value: float,
    cutoff: str = ">=",
    windows: Mapping[str, tuple[float, float]] | None = None,
) -> dict:
    """What a report needs to draw this case: the tree, both searches, the reference's
    alpha and beta on entering each node it read (`windows`, when the case has them)."""
    graph, leaves = tree.to_mapping()
    if windows is None:
        windows = alphabeta(tree, cutoff=cutoff).trace.windows  # type: ignore[arg-type]
    return {
        "view": "tree",
        "root": tree.root,
        "graph": graph,
        "terminal_nodes": leaves,
        "seen": reads,
        "expected": expected_order,
        "returned": returned,
        "value": value,
        "windows": {node: [alpha, beta] for node, (alpha, beta) in windows.items()},
    }


def judge_pruned(
    tree: GameTree, reads: list[str], expected_order: list[str], bugs: Callable[[], frozenset[str]]
) -> Verdict:
    if reads == expected_order:
        return check_expansions(reads, expected_order)
    read = set(expected_order)
    pruned_roots = [n for n in tree.nodes() if n not in read and tree.parent(n) in read]
    pruned = [n for n in tree.nodes() if n not in read]
    summary = (
        "The reference prunes "
        + (", ".join(f"Pruning Node -> {n}" for n in pruned_roots) or "nothing")
        + (f"; pruned set: {{{', '.join(pruned)}}}." if pruned else ".")
    )
    note = order_note(tree, reads, expected_order)
    extra = f"{note}\n{summary}" if note else summary
    verdict = check_expansions(reads, expected_order, diagnoses=sorted(bugs()), extra=extra)
    return replace(verdict, hint=NO_READS_HINT) if not reads else verdict


def order_note(tree: GameTree, reads: list[str], expected_order: list[str]) -> str:
    """Why the first read that differs is out of order, when the tree says it: a child read
    before an earlier sibling (the children were sorted or shuffled: move ordering), or a
    node read before the reference has finished the subtree of an earlier sibling of it
    (a search level by level, as iterative deepening does). Empty when neither."""
    index = next((i for i, (a, b) in enumerate(zip(reads, expected_order)) if a != b), None)
    known = set(tree.nodes())
    if index is None or reads[index] not in known or expected_order[index] not in known:
        return ""
    yours, theirs = reads[index], expected_order[index]
    parent = tree.parent(yours)
    if parent is not None and parent == tree.parent(theirs):
        children = tree.to_mapping()[0][parent]
        if children.index(yours) > children.index(theirs):
            return (
                f"You read {yours} before {theirs}, which graph[{parent!r}] lists first: alpha-beta reads the "
                f"children in the order graph lists them (sorting them, move ordering, or a search level by "
                f"level, as iterative deepening does, changes what is pruned)."
            )
    if parent is not None and tree.depth(yours) < tree.depth(theirs) and theirs in tree.subtree(parent):
        return (
            f"You read {yours} before the reference's {theirs}, deeper in an earlier sibling's subtree: alpha-beta "
            f"finishes each child's subtree before it reads the next child (a search level by level, as "
            f"iterative deepening does, reads in another order and reads more)."
        )
    return ""
